/**
 * ACKs of our bridge against the upstream Go orchestrator (quic-go), counted by a loopback UDP
 * relay between `serve` and the orchestrator (real processes, real QUIC).
 *
 * quic-go frees a finished stream of its peer when that stream's last data is acknowledged, and
 * then sends a MAX_STREAMS frame (RFC 9000 §19.11) in a packet of its own, before the answer of
 * the call in flight. With sequential calls the engine used to acknowledge that packet at once
 * (an ACK-only datagram per call, or one more after the answer when both arrived in the same
 * turn): about two datagrams per call towards the orchestrator. A datagram that delivered no
 * stream data now waits, like the answer's ACK, for the next request to carry it
 * (`AckDelay`, src/quic/engine/timers.ts): one datagram per call.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBuiltCli, tempDir } from "../helpers/cli.js";
import { LineClient } from "../helpers/mcp-lines.js";
import { goPeerSkipReason, startGoOrchestrator, type GoOrchestrator } from "../helpers/go-peer.js";
import { UdpLossProxy } from "../helpers/udp-loss-proxy.js";

const skip = goPeerSkipReason();
const WARM_UP_CALLS = 50;
const CALLS = 300;

describe.skipIf(skip !== undefined)(`serve → upstream Go orchestrator: ACKs ride on requests${skip ? ` (skipped: ${skip})` : ""}`, () => {
  let certs: Awaited<ReturnType<typeof tempDir>>;
  let orchestrator: GoOrchestrator;
  let relay: UdpLossProxy;
  let bridge: LineClient;

  beforeAll(async () => {
    requireBuiltCli();
    certs = await tempDir();
    orchestrator = await startGoOrchestrator({ certsDir: certs.path });
    const port = Number(orchestrator.address.slice(orchestrator.address.lastIndexOf(":") + 1));
    relay = await UdpLossProxy.start({ targetPort: port });
    bridge = new LineClient(["--orchestrator-addr", `127.0.0.1:${relay.port}`, "--certs-dir", certs.path]);
    await bridge.initialize();
  }, 120_000);

  afterAll(async () => {
    await bridge?.kill();
    await relay?.close();
    await orchestrator?.kill("SIGKILL");
    await certs?.remove();
  });

  const echo = async (id: number): Promise<void> => {
    const text = `call ${id} ${"x".repeat(100)}`;
    const r = await bridge.request({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: { text } } });
    expect(r.result, JSON.stringify(r)).toBeDefined();
    expect(JSON.stringify(r.result)).toContain(text);
  };

  it("sends about one datagram per sequential call towards the orchestrator", async () => {
    for (let i = 0; i < WARM_UP_CALLS; i++) await echo(i);
    const before = relay.stats();
    for (let i = 0; i < CALLS; i++) await echo(WARM_UP_CALLS + i);
    const after = relay.stats();
    const up = (after.clientToServer.forwarded - before.clientToServer.forwarded) / CALLS;
    const down = (after.serverToClient.forwarded - before.serverToClient.forwarded) / CALLS;
    // One request datagram per call; an ACK-only datagram when the next request was more than
    // ACK_DELAY_MS (5 ms) late (a loaded machine) adds a little. Immediate ACKs gave ~1.7–2.0.
    expect(up, `datagrams per call: ${up.toFixed(2)} up, ${down.toFixed(2)} down`).toBeLessThan(1.4);
    expect(after.clientToServer.dropped + after.serverToClient.dropped).toBe(0);
  }, 180_000);
});
