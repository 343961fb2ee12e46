/**
 * Robustness (issue 5): the orchestrator process is killed with SIGKILL while 64 calls are in
 * flight through one bridge process, then restarted on the same port with the same cert store.
 * Every pending call must end with an error (no hang) and, after the restart, the same bridge
 * process must serve the next call, for both transports.
 *
 * QUIC: a killed peer sends nothing, so QuicSender learns of the loss from the connection's idle
 * timeout (keep-alive PINGs go unanswered). The bridge runs with a short `--idle-timeout` and a
 * long `--call-timeout`, so the pending calls can only end through the connection-loss path
 * (their messages name it), never by their own deadline; the sender then reconnects on the next
 * call.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { requireBuiltCli, tempDir } from "../helpers/cli.js";
import { connectBridge, mcpError, PROBE_TOOLS, spawnOrchestrator, textOf, waitFor, type Bridge, type OrchestratorProcess, type TransportKind } from "../helpers/transport.js";

beforeAll(() => requireBuiltCli());

const IN_FLIGHT = 64;

interface Counts {
  active: number;
  started: number;
  cancelled: number;
}

async function counts(bridge: Bridge): Promise<Counts> {
  const r = await bridge.client.callTool({ name: "blocked", arguments: {} });
  return r.structuredContent as unknown as Counts;
}

/** Per transport: bridge `--call-timeout`, and what the pending calls' errors must say. */
const CASES: Array<{ transport: TransportKind; callTimeoutMs: number; extraArgs: string[]; pendingError: RegExp }> = [
  // TLS sees the TCP connection close: the errors say so, long before any deadline.
  { transport: "tls", callTimeoutMs: 120_000, extraArgs: [], pendingError: /connection lost|closed the connection/ },
  // QUIC sees no packet any more: the connection's idle timeout (3 s here) fails every call on it.
  {
    transport: "quic",
    callTimeoutMs: 120_000,
    extraArgs: ["--idle-timeout", "3000"],
    pendingError: /connection timed out \(no packets for 3000 ms\)|connection lost/,
  },
];

describe.each(CASES)("SIGKILL of the orchestrator under load ($transport)", ({ transport, callTimeoutMs, extraArgs, pendingError }) => {
  let certs: Awaited<ReturnType<typeof tempDir>>;
  let first: OrchestratorProcess;
  let second: OrchestratorProcess | undefined;
  let bridge: Bridge;

  beforeAll(async () => {
    certs = await tempDir();
    first = await spawnOrchestrator({ transport, certsDir: certs.path, args: ["--tools", PROBE_TOOLS] });
    bridge = await connectBridge([
      "--transport",
      transport,
      "--orchestrator-addr",
      first.address,
      "--certs-dir",
      certs.path,
      "--call-timeout",
      String(callTimeoutMs),
      ...extraArgs,
    ]);
  });
  afterAll(async () => {
    await bridge?.close();
    await first?.kill("SIGKILL");
    await second?.stop();
    await certs?.remove();
  });

  it(`fails all ${IN_FLIGHT} pending calls with -32603 when the orchestrator dies`, async () => {
    expect(await counts(bridge)).toMatchObject({ active: 0 });
    const pending = Array.from({ length: IN_FLIGHT }, () => bridge.client.callTool({ name: "block", arguments: {} }, undefined, { timeout: 150_000 }));
    const outcomes = Promise.allSettled(pending);
    await waitFor(async () => (await counts(bridge)).active === IN_FLIGHT, `${IN_FLIGHT} calls to be running`);
    await first.kill("SIGKILL");
    const settled = await outcomes;
    for (const s of settled) {
      expect(s.status).toBe("rejected");
      const e = (s as PromiseRejectedResult).reason as unknown;
      expect(e).toBeInstanceOf(McpError);
      expect((e as McpError).code).toBe(-32603);
      expect((e as McpError).message).toContain(first.address);
      expect((e as McpError).message).toMatch(pendingError);
    }
  });

  if (transport === "tls") {
    it("while the orchestrator is down, a call fails at once with -32603 (connection refused)", async () => {
      const e = await mcpError(bridge.client.callTool({ name: "blocked", arguments: {} }));
      expect(e.code).toBe(-32603);
      expect(e.message).toContain(first.address);
      expect(e.message).toMatch(/unreachable/);
    });
  }

  it("restarts on the same port with the same cert store", async () => {
    second = await spawnOrchestrator({ transport, certsDir: certs.path, listen: first.address, args: ["--tools", PROBE_TOOLS] });
    expect(second.address).toBe(first.address);
  });

  it("the next call through the same bridge process succeeds", async () => {
    expect(second, "the orchestrator was restarted").toBeDefined();
    const result = await bridge.client.callTool({ name: "blocked", arguments: {} }, undefined, { timeout: 30_000 });
    expect(result.isError).toBeFalsy();
    // A fresh process: nothing of the killed one's load.
    expect(result.structuredContent).toEqual({ active: 0, started: 0, cancelled: 0 });
    expect(textOf(await bridge.client.callTool({ name: "block", arguments: { ms: 1 } }))).toContain("waited");
  });
});
