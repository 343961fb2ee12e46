/**
 * Robustness (issue 5): the orchestrator process is killed with SIGKILL while 64 calls are in
 * flight through one bridge process, then restarted on the same port with the same cert store.
 * Every pending call must end with an error (no hang) and, after the restart, the same bridge
 * process must serve the next call, for both transports.
 *
 * QUIC: a killed peer sends nothing, so QuicSender only learns of the loss from per-call
 * deadlines and, for the connection itself, from its 60 s idle timeout. The bridge runs with a
 * short `--call-timeout` so the pending calls fail by deadline; the "next call succeeds"
 * expectation is marked as a known failure for QUIC (see the report in docs/tls-transport.md).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { requireBuiltCli, tempDir } from "./helpers.js";
import {
  connectBridge,
  mcpError,
  PROBE_TOOLS,
  spawnOrchestrator,
  textOf,
  waitFor,
  type Bridge,
  type OrchestratorProcess,
  type TransportKind,
} from "./transport-helpers.js";

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
const CASES: Array<{ transport: TransportKind; callTimeoutMs: number; pendingError: RegExp; recovers: boolean }> = [
  // TLS sees the TCP connection close: the errors say so, long before any deadline.
  { transport: "tls", callTimeoutMs: 120_000, pendingError: /connection lost|closed the connection/, recovers: true },
  // QUIC sees nothing: the calls end by their deadline.
  { transport: "quic", callTimeoutMs: 4_000, pendingError: /no response within 4000 ms/, recovers: false },
];

describe.each(CASES)("SIGKILL of the orchestrator under load ($transport)", ({ transport, callTimeoutMs, pendingError, recovers }) => {
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
    const pending = Array.from({ length: IN_FLIGHT }, () =>
      bridge.client.callTool({ name: "block", arguments: {} }, undefined, { timeout: 150_000 }),
    );
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

  const recoveryTest = recovers ? it : it.fails;
  recoveryTest("the next call through the same bridge process succeeds", async () => {
    expect(second, "the orchestrator was restarted").toBeDefined();
    const result = await bridge.client.callTool({ name: "blocked", arguments: {} }, undefined, { timeout: 30_000 });
    expect(result.isError).toBeFalsy();
    // A fresh process: nothing of the killed one's load.
    expect(result.structuredContent).toEqual({ active: 0, started: 0, cancelled: 0 });
    expect(textOf(await bridge.client.callTool({ name: "block", arguments: { ms: 1 } }))).toContain("waited");
  });
});
