/**
 * QuicSender recovery (issue 5) when the orchestrator goes silent without closing anything (as a
 * SIGKILLed or partitioned peer does): a loopback UDP relay between sender and orchestrator is
 * switched to drop every datagram. With a 60 s idle timeout the only way out before that is the
 * liveness check: call deadlines expiring while quiche received no packet (not even a keep-alive
 * ACK) for longer than the keep-alive interval drop the connection, which fails every other call
 * on it at once. Once the relay forwards again, the next call reconnects and succeeds.
 */
import { createSocket, type RemoteInfo, type Socket } from "node:dgram";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QuicSender } from "../../src/quic/quic-link.js";
import { SenderError } from "../../src/transport/sender.js";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/quic-server.js";
import { makePki, toolCallRequest, type TestPki } from "../helpers/quic/index.js";

interface Relay {
  port: number;
  /** While true, every datagram in both directions is dropped. */
  blackhole: boolean;
  close: () => Promise<void>;
}

async function startRelay(serverPort: number): Promise<Relay> {
  const front = createSocket("udp4");
  const back = createSocket("udp4");
  let client: RemoteInfo | undefined;
  const relay: Relay = {
    port: 0,
    blackhole: false,
    close: () => Promise.all([front, back].map((s: Socket) => new Promise<void>((r) => s.close(() => r())))).then(() => {}),
  };
  front.on("message", (msg, rinfo) => {
    if (relay.blackhole) return;
    client = rinfo;
    back.send(msg, serverPort, "127.0.0.1");
  });
  back.on("message", (msg) => {
    if (relay.blackhole || !client) return;
    front.send(msg, client.port, client.address);
  });
  await new Promise<void>((r) => front.bind(0, "127.0.0.1", () => r()));
  await new Promise<void>((r) => back.bind(0, "127.0.0.1", () => r()));
  relay.port = front.address().port;
  return relay;
}

async function rejection(p: Promise<unknown>): Promise<SenderError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof SenderError) return e;
    throw new Error(`expected a SenderError, got ${String(e)}`, { cause: e });
  }
  throw new Error("expected the call to fail");
}

describe("QuicSender recovery from a silent orchestrator", () => {
  let pki: TestPki;
  let server: RunningOrchestrator;
  let relay: Relay;
  let sender: QuicSender;

  beforeAll(async () => {
    pki = await makePki();
    server = await startOrchestrator({ tls: pki.server });
    relay = await startRelay(server.port);
    sender = new QuicSender({
      host: "127.0.0.1",
      port: relay.port,
      tls: pki.client,
      idleTimeoutMs: 60_000,
      keepAliveMs: 200,
    });
  });
  afterAll(async () => {
    await sender?.close();
    await relay?.close();
    await server?.stop();
  });

  it("rejects keepAliveMs >= idleTimeoutMs and derives keep-alive from a short idle timeout", () => {
    expect(() => new QuicSender({ host: "127.0.0.1", port: 1, idleTimeoutMs: 1_000, keepAliveMs: 1_000 })).toThrow(RangeError);
    expect(() => new QuicSender({ host: "127.0.0.1", port: 1, idleTimeoutMs: 900 })).not.toThrow();
  });

  it("drops a connection that receives nothing, failing its other calls at once, then reconnects", async () => {
    const first = await sender.send(toolCallRequest("echo", { text: "before" }));
    expect(first.response.case).toBe("toolCall");

    relay.blackhole = true;
    // A call with a long deadline: only the connection-loss path can end it soon.
    const long = rejection(sender.send(toolCallRequest("echo", { text: "long" }), { timeoutMs: 60_000 }));
    let longDone = false;
    void long.then(() => (longDone = true));
    // Short calls time out one after another; once no packet arrived for > keepAliveMs across
    // their deadlines, the connection is declared lost.
    for (let i = 0; i < 30 && !longDone; i++) {
      const e = await rejection(sender.send(toolCallRequest("echo", { text: `short ${i}` }), { timeoutMs: 150 }));
      expect(["timeout", "closed"]).toContain(e.kind);
    }
    const e = await long;
    expect(e.kind).toBe("closed");
    expect(e.message).toContain(`127.0.0.1:${relay.port}`);
    expect(e.message).toMatch(/connection lost: no packet received for \d+ ms/);
    expect(sender.stats.connected).toBe(false);

    relay.blackhole = false;
    const after = await sender.send(toolCallRequest("echo", { text: "after" }), { timeoutMs: 20_000 });
    expect(after.response.case).toBe("toolCall");
    if (after.response.case === "toolCall") expect(after.response.value.result).toEqual({ text: "after" });
    expect(sender.stats.connected).toBe(true);
  });
});
