/**
 * Robustness of streaming calls (src/transport/rpc-client.ts over src/quic/quic-link.ts): the
 * orchestrator is killed with SIGKILL while progress calls (tools/call with
 * `_meta.progressToken`, carried as `stream_start` on the bridge's QUIC connection) are in
 * flight, then restarted on the same port with a different tool set.
 *
 * - every pending progress call fails with -32603 within the bridge's `--idle-timeout` (3 s)
 *   plus 1 s: streaming calls share the connection, idle timeout and keep-alive of unary calls;
 * - the loss is logged at warn level;
 * - the next progress call through the same bridge process reconnects and succeeds;
 * - the re-established tools subscription sends one `notifications/tools/list_changed`
 *   (changes during the gap were missed), and tools/list then shows the new tool set.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { requireBuiltCli, tempDir } from "../helpers/cli.js";
import { connectBridge, PROBE_TOOLS, spawnOrchestrator, textOf, waitFor, type Bridge, type OrchestratorProcess } from "../helpers/transport.js";

beforeAll(() => requireBuiltCli());

const IN_FLIGHT = 16;
const IDLE_MS = 3_000;

interface Counts {
  active: number;
  started: number;
  cancelled: number;
}

describe("SIGKILL of the orchestrator during progress calls (quic)", () => {
  let certs: Awaited<ReturnType<typeof tempDir>>;
  let first: OrchestratorProcess;
  let second: OrchestratorProcess | undefined;
  let bridge: Bridge;
  let listChanged = 0;

  beforeAll(async () => {
    certs = await tempDir();
    first = await spawnOrchestrator({ transport: "quic", certsDir: certs.path, args: ["--tools", PROBE_TOOLS] });
    bridge = await connectBridge(["--orchestrator-addr", first.address, "--certs-dir", certs.path, "--call-timeout", "120000", "--idle-timeout", String(IDLE_MS)]);
    bridge.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      listChanged++;
    });
  });
  afterAll(async () => {
    await bridge?.close();
    await first?.kill("SIGKILL");
    await second?.stop();
    await certs?.remove();
  });

  it(`fails all ${IN_FLIGHT} pending progress calls with -32603 within the idle timeout + 1 s`, async () => {
    const before = (await bridge.client.callTool({ name: "blocked", arguments: {} })).structuredContent as unknown as Counts;
    expect(before.active).toBe(0);
    const pending = Array.from({ length: IN_FLIGHT }, () => bridge.client.callTool({ name: "block", arguments: {} }, undefined, { timeout: 150_000, onprogress: () => {} }));
    const outcomes = Promise.allSettled(pending);
    await waitFor(
      async () => ((await bridge.client.callTool({ name: "blocked", arguments: {} })).structuredContent as unknown as Counts).active === IN_FLIGHT,
      `${IN_FLIGHT} progress calls to be running`,
    );
    await first.kill("SIGKILL");
    const killedAt = Date.now();
    const settled = await outcomes;
    const elapsed = Date.now() - killedAt;
    expect(elapsed).toBeLessThan(IDLE_MS + 1_000);
    for (const s of settled) {
      expect(s.status).toBe("rejected");
      const e = (s as PromiseRejectedResult).reason as unknown;
      expect(e).toBeInstanceOf(McpError);
      expect((e as McpError).code).toBe(-32603);
      expect((e as McpError).message).toContain(first.address);
      expect((e as McpError).message).toMatch(/connection timed out \(no packets for 3000 ms\)|connection lost/);
    }
    await waitFor(async () => bridge.stderr().includes("QUIC streaming connection lost"), "the streaming connection loss to be logged");
    const line = bridge
      .stderr()
      .split("\n")
      .find((l) => l.includes("QUIC streaming connection lost"))!;
    expect(JSON.parse(line).level).toBe(40); // pino warn
  });

  it("restarts on the same port with a different tool set", async () => {
    listChanged = 0;
    second = await spawnOrchestrator({ transport: "quic", certsDir: certs.path, listen: first.address, args: ["--no-builtins", "--tools", PROBE_TOOLS] });
    expect(second.address).toBe(first.address);
  });

  it("the next progress call through the same bridge process reconnects and succeeds", async () => {
    expect(second, "the orchestrator was restarted").toBeDefined();
    let progress = 0;
    const started = Date.now();
    const result = await bridge.client.callTool({ name: "block", arguments: { ms: 1 } }, undefined, {
      timeout: 30_000,
      onprogress: () => progress++,
    });
    expect(Date.now() - started).toBeLessThan(IDLE_MS + 1_000);
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain("waited");
    const counts = (await bridge.client.callTool({ name: "blocked", arguments: {} })).structuredContent as unknown as Counts;
    expect(counts).toEqual({ active: 0, started: 1, cancelled: 0 }); // the new process served it
  });

  it("sends one notifications/tools/list_changed once the tools subscription is re-established", async () => {
    // The bridge retries the subscription with a backoff (1 s doubling) while the orchestrator is down.
    await waitFor(async () => listChanged > 0, "notifications/tools/list_changed", 40_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(listChanged).toBe(1);
    const names = (await bridge.client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(["block", "blocked", "depth"]); // no built-ins any more
  });
});
