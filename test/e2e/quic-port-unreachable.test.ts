/**
 * The orchestrator process dies and its UDP port stays closed for a while: the bridge's next
 * packet on the old QUIC connection (a keep-alive PING, every 5 s by default) draws an ICMP port
 * unreachable, which the connection's socket reports as ECONNREFUSED. The engine then sends a
 * PING and, with nothing received within a second, ends the connection, so pending calls fail
 * with -32603 naming the cause instead of waiting for the idle timeout (60 s here, so only that
 * path can end them), and the next call after the restart on the same port reconnects.
 * Against our orchestrator (plain and progress calls, i.e. both QUIC connections of `serve`) and
 * the upstream Go orchestrator (../shared/go-peer, skipped when absent).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { goPeerSkipReason, startGoOrchestrator } from "../helpers/go-peer.js";
import { requireBuiltCli, tempDir } from "../helpers/cli.js";
import { connectBridge, PROBE_TOOLS, spawnOrchestrator, textOf, type Bridge } from "../helpers/transport.js";

const BRIDGE_ARGS = ["--idle-timeout", "60000", "--call-timeout", "120000"];
const CAUSE = /connection lost: peer unreachable: ICMP port unreachable \(ECONNREFUSED\)/;

function expectUnreachable(settled: PromiseSettledResult<unknown>[], address: string): void {
  for (const s of settled) {
    expect(s.status).toBe("rejected");
    const e = (s as PromiseRejectedResult).reason as { code?: number; message?: string };
    expect(e.code).toBe(-32603);
    expect(e.message).toContain(address);
    expect(e.message).toMatch(CAUSE);
  }
}

describe("the reference orchestrator killed, its port closed, then restarted on it (quic)", () => {
  let certs: Awaited<ReturnType<typeof tempDir>>;
  let bridge: Bridge;
  const stops: Array<() => Promise<void>> = [];

  beforeAll(() => requireBuiltCli());
  afterAll(async () => {
    await bridge?.close();
    for (const stop of stops) await stop();
    await certs?.remove();
  });

  it("pending plain and progress calls fail with the ICMP cause; the next calls reconnect", async () => {
    certs = await tempDir();
    const first = await spawnOrchestrator({ transport: "quic", certsDir: certs.path, args: ["--tools", PROBE_TOOLS] });
    stops.push(() => first.kill("SIGKILL"));
    bridge = await connectBridge(["--orchestrator-addr", first.address, "--certs-dir", certs.path, ...BRIDGE_ARGS]);
    expect(textOf(await bridge.client.callTool({ name: "block", arguments: { ms: 1 } }))).toContain("waited");
    expect(textOf(await bridge.client.callTool({ name: "block", arguments: { ms: 1 } }, undefined, { onprogress: () => {} }))).toContain("waited");
    const settled = Promise.allSettled([
      bridge.client.callTool({ name: "block", arguments: {} }, undefined, { timeout: 150_000 }),
      bridge.client.callTool({ name: "block", arguments: {} }, undefined, { timeout: 150_000, onprogress: () => {} }),
    ]);
    // Both calls are on the orchestrator once it counts them as blocked.
    for (;;) {
      const r = await bridge.client.callTool({ name: "blocked", arguments: {} });
      if ((r.structuredContent as { active: number }).active >= 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await first.kill("SIGKILL");
    expectUnreachable(await settled, first.address);
    const second = await spawnOrchestrator({ transport: "quic", certsDir: certs.path, listen: first.address, args: ["--tools", PROBE_TOOLS] });
    stops.push(() => second.stop());
    expect(textOf(await bridge.client.callTool({ name: "block", arguments: { ms: 1 } }, undefined, { timeout: 30_000 }))).toContain("waited");
    expect(textOf(await bridge.client.callTool({ name: "block", arguments: { ms: 1 } }, undefined, { timeout: 30_000, onprogress: () => {} }))).toContain("waited");
  }, 120_000);
});

const goSkip = goPeerSkipReason();

describe.skipIf(goSkip !== undefined)(`the upstream Go orchestrator killed, its port closed, then restarted on it${goSkip ? ` (skipped: ${goSkip})` : ""}`, () => {
  let certs: Awaited<ReturnType<typeof tempDir>>;
  let bridge: Bridge;
  const stops: Array<() => Promise<void>> = [];

  beforeAll(() => requireBuiltCli());
  afterAll(async () => {
    await bridge?.close();
    for (const stop of stops) await stop();
    await certs?.remove();
  });

  it("a pending call fails with the ICMP cause; the next call reconnects", async () => {
    certs = await tempDir();
    const first = await startGoOrchestrator({ certsDir: certs.path });
    stops.push(() => first.kill("SIGKILL"));
    bridge = await connectBridge(["--orchestrator-addr", first.address, "--certs-dir", certs.path, ...BRIDGE_ARGS]);
    expect(textOf(await bridge.client.callTool({ name: "echo", arguments: { text: "before" } }))).toBe("before");
    const settled = Promise.allSettled([bridge.client.callTool({ name: "slow", arguments: { ms: 100_000 } }, undefined, { timeout: 150_000 })]);
    // A call sent after the slow one comes back: the slow one reached the plugin.
    expect(textOf(await bridge.client.callTool({ name: "echo", arguments: { text: "while pending" } }))).toBe("while pending");
    await first.kill("SIGKILL");
    expectUnreachable(await settled, first.address);
    const second = await startGoOrchestrator({ certsDir: certs.path, listen: first.address });
    stops.push(() => second.kill("SIGTERM"));
    expect(textOf(await bridge.client.callTool({ name: "echo", arguments: { text: "after" } }, undefined, { timeout: 60_000 }))).toBe("after");
  }, 180_000);
});
