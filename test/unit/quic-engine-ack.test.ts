/**
 * The QUIC engine's acknowledgements (RFC 9000 §13.2): an ACK for a packet that carried stream
 * data waits briefly for data of our own to ride on, instead of leaving alone in its own
 * datagram; it still leaves within the delay when no data follows, and never waits while
 * packets pile up (two or more received) or during the handshake.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectQuic, QuicServerEndpoint, type QuicConnection } from "../../src/quic/engine/index.js";
import { FramedStream } from "../../src/quic/framed-stream.js";
import { ALPN } from "../../src/quic/quic-common.js";
import { makePki, type TestPki } from "../helpers/quic/index.js";
import { waitFor } from "../helpers/transport.js";

let pki: TestPki;
let server: QuicServerEndpoint;
let client: QuicConnection;

beforeAll(async () => {
  pki = await makePki();
  server = await QuicServerEndpoint.listen({ host: "127.0.0.1", port: 0, tls: pki.server, alpn: [ALPN], idleTimeoutMs: 20_000 });
  server.onConnection = (conn) => {
    conn.onStream = (raw) => {
      const s = new FramedStream(raw);
      s.onFrame = (payload) => s.writeFrame(payload, true);
    };
  };
  client = await connectQuic({ host: "127.0.0.1", port: server.address.port, serverName: "localhost", tls: pki.client, alpn: [ALPN], idleTimeoutMs: 20_000 });
});
afterAll(async () => {
  client?.close();
  await server?.close();
});

/** Datagrams the client's UDP endpoint sent so far. */
function clientSent(): number {
  return (client as unknown as { endpoint: { datagramsSent: number } }).endpoint.datagramsSent;
}

/** One echo call on a new stream; resolves with the echoed payload. */
function call(payload: Uint8Array): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    client.openStream((raw, error) => {
      if (!raw) return reject(error);
      const s = new FramedStream(raw);
      s.onFrame = resolve;
      s.onReadEnd = (e) => e && reject(e);
      s.writeFrame(payload, true);
    });
  });
}

describe("QUIC engine: acknowledgements ride on data", () => {
  it("sequential calls, each sent on a later turn than the last answer: one client datagram per call, not two", async () => {
    const payload = new Uint8Array(100).fill(7);
    for (let i = 0; i < 5; i++) await call(payload); // warm up
    const calls = 60;
    const before = clientSent();
    for (let i = 0; i < calls; i++) {
      // The next request is written on a later event-loop turn than the answer was read, as a
      // bridge does (the answer goes to stdout, the next request comes from stdin).
      await new Promise((r) => setImmediate(r));
      expect(await call(payload)).toEqual(payload);
    }
    const sent = clientSent() - before;
    // Without the ACK delay every answer gets its own ACK-only datagram: 2 per call.
    expect(sent).toBeGreaterThanOrEqual(calls);
    expect(sent).toBeLessThanOrEqual(calls * 1.25);
  });

  it("streams written in one turn leave in that turn's flush, at most one datagram each, the ACKs riding along", async () => {
    const payload = new Uint8Array(100).fill(3);
    await call(payload);
    const streams = 20;
    const before = clientSent();
    const serverBefore = server.datagramsSent;
    const answers = Array.from({ length: streams }, () => call(payload)); // one turn
    await new Promise((r) => setImmediate(r)); // this turn's flush ran
    const inFlush = clientSent() - before;
    await Promise.all(answers);
    expect(inFlush).toBeGreaterThan(0);
    expect(inFlush).toBeLessThanOrEqual(streams);
    expect(server.datagramsSent - serverBefore).toBeLessThanOrEqual(streams + 2);
  });

  it("an ACK still leaves on its own when no data follows", async () => {
    await call(new Uint8Array(10));
    const serverConn = server.connections()[0]!;
    // Everything the server sent gets acknowledged although the client writes nothing more.
    const received = (): number => serverConn.packetsReceived;
    const sentBefore = clientSent();
    const r0 = received();
    await call(new Uint8Array(10));
    await waitFor(() => clientSent() > sentBefore + 1 && received() > r0 + 1, "the ACK of the last answer");
  });

  it("a 4 MiB echo (many packets per turn, ACK-only datagrams from the receiver) is not slowed into stalls", async () => {
    const big = Buffer.alloc(4 * 1024 * 1024);
    for (let i = 0; i < big.byteLength; i++) big[i] = i & 0xff;
    const back = await call(big);
    expect(back.byteLength).toBe(big.byteLength);
    expect(big.equals(back)).toBe(true);
  });
});
