/**
 * RFC 9000 §8.1: before a client's address is validated, a server sends at most three times the
 * bytes it received from that address. Counted on the wire: a UDP relay on loopback sits between
 * a raw socket that sends one client Initial (and then never answers) and the server; every
 * datagram the server sends back (its Initial/Handshake flight, retransmissions, PTO probes, a
 * CONNECTION_CLOSE at the handshake deadline) passes through the relay's counters.
 */
import dgram from "node:dgram";
import { randomFillSync } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../helpers/cleanups.js";
import { connectQuic, QuicServerEndpoint } from "../../src/quic/engine/index.js";
import { buildQuicheConfig, CONN_ID_BYTES, quiche } from "../../src/quic/engine/config.js";
import { ALPN } from "../../src/quic/quic-common.js";
import { makePki, type TestPki } from "../helpers/quic/index.js";
import { UdpLossProxy } from "../helpers/udp-loss-proxy.js";
import { waitFor } from "../helpers/transport.js";

let pki: TestPki;
const cleanups = cleanupsAfterEach();
beforeAll(async () => {
  pki = await makePki();
});

/** One client Initial datagram (quiche pads it to at least 1200 bytes), from a client that then goes silent. */
function clientInitial(): Buffer {
  const config = buildQuicheConfig({ tls: pki.client, alpn: [ALPN], idleTimeoutMs: 30_000 });
  const scid = new Uint8Array(CONN_ID_BYTES);
  randomFillSync(scid);
  const conn = quiche.Connection.connect("localhost", scid, { host: "127.0.0.1", port: 1 }, { host: "127.0.0.1", port: 2 }, config);
  const buf = Buffer.alloc(1350);
  const r = conn.send(buf);
  if (r === null) throw new Error("quiche produced no Initial");
  return Buffer.from(buf.subarray(0, r[0]));
}

/** A server on 127.0.0.1 with the test PKI and a 30 s idle timeout, closed after the test. */
async function listen(extra: { handshakeTimeoutMs: number; maxHandshakes?: number; maxHandshakesPerAddress?: number; retryThreshold?: number }): Promise<QuicServerEndpoint> {
  const server = await QuicServerEndpoint.listen({ host: "127.0.0.1", port: 0, tls: pki.server, alpn: [ALPN], idleTimeoutMs: 30_000, ...extra });
  cleanups.push(() => server.close());
  return server;
}

/** Connects a real engine client (mutual TLS) and waits until the server reports the connection. */
async function connectRealClient(server: QuicServerEndpoint): Promise<void> {
  let accepted = 0;
  server.onConnection = () => accepted++;
  const conn = await connectQuic({
    host: "127.0.0.1",
    port: server.address.port,
    serverName: "localhost",
    tls: pki.client,
    alpn: [ALPN],
    idleTimeoutMs: 30_000,
    connectTimeoutMs: 20_000,
  });
  cleanups.push(() => conn.close());
  await waitFor(() => accepted === 1, "the server to accept the real client", 10_000);
}

describe("QUIC server anti-amplification (RFC 9000 §8.1)", () => {
  it("sends at most 3x the bytes of one Initial from an address that never answers, until the connection is gone", async () => {
    const server = await listen({ handshakeTimeoutMs: 6_000 });
    const proxy = await UdpLossProxy.start({ targetPort: server.address.port });
    cleanups.push(() => proxy.close());
    const client = dgram.createSocket("udp4");
    await new Promise<void>((resolve) => client.bind(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => client.close(() => resolve())));
    const sizes: number[] = [];
    const shortInitials: number[] = [];
    client.on("message", (m: Buffer) => {
      // received, never answered
      sizes.push(m.length);
      const initial = (m[0]! & 0x80) !== 0 && (m[0]! & 0x30) >> 4 === 0;
      if (initial && m.length < 1200) shortInitials.push(m.length);
    });

    const initial = clientInitial();
    client.send(initial, proxy.port, "127.0.0.1");
    await waitFor(() => server.connectionCount === 1, "the half-open connection", 10_000);
    // The handshake deadline drops the connection; everything it sent has passed the relay by then.
    await waitFor(() => server.connectionCount === 0, "the handshake deadline to drop it", 30_000);
    await new Promise((r) => setTimeout(r, 200));
    const stats = proxy.stats();
    const received = stats.clientToServer.forwardedBytes;
    const sent = stats.serverToClient.forwardedBytes;
    expect(received).toBe(initial.length);
    expect(sizes.length).toBeGreaterThan(0); // the server did answer
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(sent);
    expect(sent).toBeLessThanOrEqual(3 * received);
    // The limit never cuts a datagram that starts with an Initial below 1200 bytes (RFC 9000 §14.1).
    expect(shortInitials).toEqual([]);
  }, 60_000);

  it("binds a half-open connection to its first Initial's address: the same Initial from another address gets nothing, and credit earned by one address is not spent on another", async () => {
    const server = await listen({ handshakeTimeoutMs: 3_000 });
    const sockets = await Promise.all(
      ["A", "V"].map(async () => {
        const socket = dgram.createSocket("udp4");
        await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
        cleanups.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
        const counter = { socket, received: 0 };
        socket.on("message", (m: Buffer) => (counter.received += m.length)); // never answered
        return counter;
      }),
    );
    const [a, v] = sockets as [(typeof sockets)[0], (typeof sockets)[0]];
    const initial = clientInitial();
    for (let i = 0; i < 4; i++) {
      a.socket.send(initial, server.address.port, "127.0.0.1");
      await waitFor(() => server.datagramsReceived === i + 1, "the server to read A's Initial", 10_000);
    }
    v.socket.send(initial, server.address.port, "127.0.0.1"); // same DCID: the same connection
    await waitFor(() => server.datagramsFromOtherAddress === 1, "the server to drop V's datagram", 10_000);
    await waitFor(() => server.connectionCount === 0, "the handshake deadline to drop the connection", 30_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(v.received).toBe(0);
    expect(a.received).toBeGreaterThan(0);
    expect(a.received).toBeLessThanOrEqual(3 * 4 * initial.length);
  }, 60_000);

  it("keeps at most maxHandshakes half-open connections; Initials past the cap get no answer and no state", async () => {
    const server = await listen({ handshakeTimeoutMs: 1_500, maxHandshakes: 2, retryThreshold: 2 }); // no Retry below the cap
    const answers: number[] = [];
    for (let i = 0; i < 3; i++) {
      const socket = dgram.createSocket("udp4");
      await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
      cleanups.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
      answers.push(0);
      socket.on("message", () => answers[i]!++);
      socket.send(clientInitial(), server.address.port, "127.0.0.1");
      // one at a time, so that the third is the one past the cap
      await waitFor(() => server.connectionCount + server.initialsRefused === i + 1, "the Initial to be accepted or refused", 10_000);
    }
    expect(server.connectionCount).toBe(2);
    expect(server.handshakingCount).toBe(2);
    expect(server.initialsRefused).toBe(1);
    await waitFor(() => answers[0]! > 0 && answers[1]! > 0, "the two accepted clients to hear from the server", 10_000);
    expect(answers[2]).toBe(0);
    // Once the half-open ones reach their deadline, a real client gets in.
    await waitFor(() => server.handshakingCount === 0, "the half-open connections to expire", 30_000);
    await connectRealClient(server);
    expect(server.handshakingCount).toBe(0);
    expect(server.connectionCount).toBe(1);
  }, 90_000);

  it("keeps at most maxHandshakesPerAddress half-open connections per address; another address still gets one", async () => {
    const server = await listen({ handshakeTimeoutMs: 30_000, maxHandshakesPerAddress: 2, retryThreshold: 100 });
    const fromAddresses = ["127.0.0.2", "127.0.0.2", "127.0.0.2", "127.0.0.3"];
    for (let i = 0; i < fromAddresses.length; i++) {
      const socket = dgram.createSocket("udp4");
      await new Promise<void>((resolve) => socket.bind(0, fromAddresses[i], resolve));
      cleanups.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
      socket.send(clientInitial(), server.address.port, "127.0.0.1");
      await waitFor(() => server.connectionCount + server.initialsRefused === i + 1, "the Initial to be accepted or refused", 10_000);
    }
    expect(server.initialsRefused).toBe(1); // the third from 127.0.0.2
    expect(server.handshakingCount).toBe(3);
  }, 60_000);

  it("past retryThreshold, answers an Initial with one Retry and no state; a real client comes back with the token and connects", async () => {
    const server = await listen({ handshakeTimeoutMs: 6_000, retryThreshold: 0 });
    const proxy = await UdpLossProxy.start({ targetPort: server.address.port });
    cleanups.push(() => proxy.close());
    const client = dgram.createSocket("udp4");
    await new Promise<void>((resolve) => client.bind(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => client.close(() => resolve())));
    const answers: Buffer[] = [];
    client.on("message", (m: Buffer) => answers.push(m));
    client.send(clientInitial(), proxy.port, "127.0.0.1");
    await waitFor(() => answers.length === 1, "the Retry", 10_000);
    expect((answers[0]![0]! & 0xf0) === 0xf0).toBe(true); // long header, type Retry
    expect(server.retriesSent).toBe(1);
    expect(server.connectionCount).toBe(0);
    expect(proxy.stats().serverToClient.forwardedBytes).toBeLessThanOrEqual(3 * proxy.stats().clientToServer.forwardedBytes);

    // quiche's client checks the Retry's integrity tag and repeats its Initial with the token.
    await connectRealClient(server);
    expect(server.retriesSent).toBe(2);
  }, 60_000);
});
