/**
 * QuicSender recovery (issue 5) when the orchestrator goes silent without closing anything (as a
 * SIGKILLed or partitioned peer does): a loopback UDP relay between sender and orchestrator is
 * switched to drop every datagram. With a 60 s idle timeout the only way out before that is the
 * liveness check: call deadlines expiring while quiche received no packet (not even a keep-alive
 * ACK) for longer than the keep-alive interval drop the connection, which fails every other call
 * on it at once. Once the relay forwards again, the next call reconnects and succeeds.
 *
 * Silent drop of an idle connection (the upstream Go orchestrator after a restart): the relay
 * drops the old connection's datagrams only; the next request draws no packet within the request
 * liveness window (1 s), so the connection is dropped and the call retried on a new one.
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
  /** UDP port of the sender's socket that sent last (undefined before the first datagram). */
  readonly clientPort: number | undefined;
  /**
   * Datagrams from this sender port, and to it, are dropped (as by a restarted peer that
   * silently discards the packets of connections it has no state for); other ports are relayed.
   */
  dropFrom: number | undefined;
  close: () => Promise<void>;
}

async function startRelay(serverPort: number): Promise<Relay> {
  const front = createSocket("udp4");
  const back = createSocket("udp4");
  let client: RemoteInfo | undefined;
  const relay: Relay = {
    port: 0,
    blackhole: false,
    get clientPort() {
      return client?.port;
    },
    dropFrom: undefined,
    close: () => Promise.all([front, back].map((s: Socket) => new Promise<void>((r) => s.close(() => r())))).then(() => {}),
  };
  front.on("message", (msg, rinfo) => {
    if (relay.blackhole || rinfo.port === relay.dropFrom) return;
    client = rinfo;
    back.send(msg, serverPort, "127.0.0.1");
  });
  back.on("message", (msg) => {
    if (relay.blackhole || !client || client.port === relay.dropFrom) return;
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

/**
 * Registers a reference orchestrator, a {@link Relay} in front of it and a sender through the
 * relay (60 s idle timeout, `keepAliveMs` as given) for the enclosing describe block.
 */
function relayedSender(keepAliveMs?: number): { relay: Relay; sender: QuicSender } {
  const parts = {} as { relay: Relay; sender: QuicSender };
  let server: RunningOrchestrator | undefined;
  beforeAll(async () => {
    const pki: TestPki = await makePki();
    server = await startOrchestrator({ tls: pki.server });
    parts.relay = await startRelay(server.port);
    parts.sender = new QuicSender({
      host: "127.0.0.1",
      port: parts.relay.port,
      tls: pki.client,
      idleTimeoutMs: 60_000,
      ...(keepAliveMs !== undefined ? { keepAliveMs } : {}),
    });
  });
  afterAll(async () => {
    await parts.sender?.close();
    await parts.relay?.close();
    await server?.stop();
  });
  return parts;
}

describe("QuicSender recovery from a silent orchestrator", () => {
  const parts = relayedSender(200);

  it("rejects keepAliveMs >= idleTimeoutMs and derives keep-alive from a short idle timeout", () => {
    expect(() => new QuicSender({ host: "127.0.0.1", port: 1, idleTimeoutMs: 1_000, keepAliveMs: 1_000 })).toThrow(RangeError);
    expect(() => new QuicSender({ host: "127.0.0.1", port: 1, idleTimeoutMs: 900 })).not.toThrow();
  });

  it("drops a connection that receives nothing, failing its other calls at once, then reconnects", async () => {
    const first = await parts.sender.send(toolCallRequest("echo", { text: "before" }));
    expect(first.response.case).toBe("toolCall");

    parts.relay.blackhole = true;
    // A call with a long deadline: only the connection-loss path can end it soon.
    const long = rejection(parts.sender.send(toolCallRequest("echo", { text: "long" }), { timeoutMs: 60_000 }));
    let longDone = false;
    void long.then(() => (longDone = true));
    // Short calls time out one after another; once no packet arrived for > keepAliveMs across
    // their deadlines, the connection is declared lost.
    for (let i = 0; i < 30 && !longDone; i++) {
      const e = await rejection(parts.sender.send(toolCallRequest("echo", { text: `short ${i}` }), { timeoutMs: 150 }));
      // A short call made after the loss, before `long`'s rejection is seen here, dials the
      // black hole again: a connect failure.
      expect(["timeout", "closed", "connect"]).toContain(e.kind);
    }
    const e = await long;
    expect(e.kind).toBe("closed");
    expect(e.message).toContain(`127.0.0.1:${parts.relay.port}`);
    expect(e.message).toMatch(/connection lost: no packet received for \d+ ms/);
    expect(parts.sender.stats.connected).toBe(false);

    parts.relay.blackhole = false;
    const after = await parts.sender.send(toolCallRequest("echo", { text: "after" }), { timeoutMs: 20_000 });
    expect(after.response.case).toBe("toolCall");
    if (after.response.case === "toolCall") expect(after.response.value.result).toEqual({ text: "after" });
    expect(parts.sender.stats.connected).toBe(true);
  });
});

describe("QuicSender after an idle connection's packets start being dropped silently", () => {
  const parts = relayedSender();

  it("the next call draws no packet, so the connection is dropped and the call retried on a new one", async () => {
    const first = await parts.sender.send(toolCallRequest("echo", { text: "before" }));
    expect(first.response.case).toBe("toolCall");
    parts.relay.dropFrom = parts.relay.clientPort; // the old connection's socket: as after a silent restart
    // Without the request liveness window this would wait for the 60 s idle timeout.
    const after = await parts.sender.send(toolCallRequest("echo", { text: "after" }), { timeoutMs: 30_000 });
    expect(after.response.case).toBe("toolCall");
    if (after.response.case === "toolCall") expect(after.response.value.result).toEqual({ text: "after" });
    expect(parts.relay.clientPort).not.toBe(parts.relay.dropFrom);
  }, 60_000);
});
