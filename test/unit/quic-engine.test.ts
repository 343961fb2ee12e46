/**
 * The QUIC engine (src/quic/engine) on its own: handshake with mutual TLS, frame echo, stream
 * limit queueing, oversize frames, reset codes, version negotiation and garbage datagrams,
 * idle timeout.
 */
import dgram from "node:dgram";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  connectQuic,
  PeerResetError,
  PeerStopError,
  quiche,
  QuicConnectError,
  QuicServerEndpoint,
  StreamClosedError,
  statelessResetToken,
  UNREACHABLE_CONFIRM_MS,
  type QuicConnection,
  type QuicStream,
} from "../../src/quic/engine/index.js";
import { FrameTooLargeError, encodeFrameHeader, MAX_FRAME_BYTES } from "../../src/framing/frame.js";
import { FramedStream } from "../../src/quic/framed-stream.js";
import { ALPN, StreamCode } from "../../src/quic/quic-common.js";
import { makePki, type TestPki } from "../helpers/quic/index.js";

let pki: TestPki;
let other: TestPki;
const cleanups: Array<() => unknown> = [];

beforeAll(async () => {
  pki = await makePki();
  other = await makePki();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface EchoServer {
  server: QuicServerEndpoint;
  port: number;
  /** Streams the server saw end with an error, by kind. */
  errors: string[];
  /** Peak concurrently open server streams. */
  peak: number;
  hold: boolean;
  held: FramedStream[];
}

/** A server answering each frame with the same frame + FIN (or holding the stream when `hold`). */
async function echoServer(opts: { maxStreams?: number; idleTimeoutMs?: number; tls?: TestPki["server"] } = {}): Promise<EchoServer> {
  const server = await QuicServerEndpoint.listen({
    host: "127.0.0.1",
    port: 0,
    tls: opts.tls ?? pki.server,
    alpn: [ALPN],
    idleTimeoutMs: opts.idleTimeoutMs ?? 10_000,
    maxStreamsBidi: opts.maxStreams ?? 100,
  });
  const es: EchoServer = { server, port: server.address.port, errors: [], peak: 0, hold: false, held: [] };
  let open = 0;
  server.onConnection = (conn) => {
    conn.onStream = (raw) => {
      const s = new FramedStream(raw);
      open++;
      es.peak = Math.max(es.peak, open);
      s.onFrame = (payload) => {
        if (es.hold) es.held.push(s);
        else {
          s.writeFrame(payload, true);
          open--;
        }
      };
      s.onReadEnd = (err) => {
        if (err) {
          open--;
          es.errors.push(err instanceof FrameTooLargeError ? "too-large" : err instanceof PeerResetError ? `reset:${err.code}` : err.name);
          if (err instanceof FrameTooLargeError) s.reset(StreamCode.FRAME_TOO_LARGE);
        }
      };
    };
  };
  cleanups.push(() => server.close());
  return es;
}

async function client(port: number, tls = pki.client, extra: { idleTimeoutMs?: number; serverName?: string; maxStreamsBidi?: number } = {}): Promise<QuicConnection> {
  const conn = await connectQuic({
    host: "127.0.0.1",
    port,
    serverName: extra.serverName ?? "localhost",
    tls,
    alpn: [ALPN],
    idleTimeoutMs: extra.idleTimeoutMs ?? 10_000,
    connectTimeoutMs: 3_000,
    ...(extra.maxStreamsBidi === undefined ? {} : { maxStreamsBidi: extra.maxStreamsBidi }),
  });
  cleanups.push(() => conn.close());
  return conn;
}

/** Sends one frame + FIN on a new stream; resolves with the response frame or the error. */
function rpc(conn: QuicConnection, payload: Uint8Array): Promise<Uint8Array | Error> {
  return new Promise((resolve) => {
    conn.openStream((raw, error) => {
      if (!raw) return resolve(error!);
      const s = new FramedStream(raw);
      let got: Uint8Array | undefined;
      s.onFrame = (p) => (got = p);
      s.onReadEnd = (err) => resolve(err ?? got ?? new Error("no frame"));
      s.writeFrame(payload, true);
    });
  });
}

describe("QUIC engine", () => {
  it("handshakes with mutual TLS and echoes frames, small and 2 MiB", async () => {
    const es = await echoServer();
    const conn = await client(es.port);
    expect(conn.isEstablished).toBe(true);
    const small = new TextEncoder().encode("hello");
    expect(await rpc(conn, small)).toEqual(small);
    const big = new Uint8Array(2 * 1024 * 1024).map((_, i) => i & 0xff);
    const r = await rpc(conn, big);
    expect(r).toBeInstanceOf(Uint8Array);
    expect((r as Uint8Array).byteLength).toBe(big.byteLength);
    expect(Buffer.compare(r as Uint8Array, big)).toBe(0);
  });

  it("a client that grants the peer no streams reads every stream: one at a time, 2 MiB, 40 and 150 at once, a reset", async () => {
    // No peer-initiated stream is possible, so the engine asks its tracked streams one by one
    // (up to 128) instead of quiche's readable set; 150 at once takes the readable set.
    const es = await echoServer({ maxStreams: 200 });
    const conn = await client(es.port, pki.client, { maxStreamsBidi: 0 });
    const small = new TextEncoder().encode("hello");
    expect(await rpc(conn, small)).toEqual(small);
    const big = new Uint8Array(2 * 1024 * 1024).map((_, i) => (i * 7) & 0xff);
    expect(Buffer.compare((await rpc(conn, big)) as Uint8Array, big)).toBe(0);
    const many = await Promise.all(Array.from({ length: 40 }, (_, i) => rpc(conn, new TextEncoder().encode(`m${i}`))));
    expect(many.map((r) => new TextDecoder().decode(r as Uint8Array))).toEqual(Array.from({ length: 40 }, (_, i) => `m${i}`));
    const more = await Promise.all(Array.from({ length: 150 }, (_, i) => rpc(conn, new TextEncoder().encode(`n${i}`))));
    expect(more.map((r) => new TextDecoder().decode(r as Uint8Array))).toEqual(Array.from({ length: 150 }, (_, i) => `n${i}`));
    es.hold = true;
    const held = rpc(conn, small);
    await until(() => es.held.length === 1);
    es.held[0]!.reset(StreamCode.SHUTDOWN);
    const r = await held;
    expect(r).toBeInstanceOf(PeerResetError);
    expect((r as PeerResetError).code).toBe(StreamCode.SHUTDOWN);
  });

  it("packetsReceived follows quiche's received-packet counter as datagrams arrive", async () => {
    const es = await echoServer();
    const conn = await client(es.port);
    const before = conn.packetsReceived;
    expect(before).toBe(conn.conn.stats().recv);
    expect(conn.packetsReceived).toBe(before); // nothing arrived: the same count
    for (let i = 0; i < 5; i++) await rpc(conn, new TextEncoder().encode(`p${i}`));
    expect(conn.packetsReceived).toBeGreaterThan(before);
    expect(conn.packetsReceived).toBe(conn.conn.stats().recv);
  });

  it("queues streams beyond the peer's limit and runs them all", async () => {
    const es = await echoServer({ maxStreams: 10 });
    const conn = await client(es.port);
    const calls = Array.from({ length: 100 }, (_, i) => rpc(conn, new TextEncoder().encode(`m${i}`)));
    expect(conn.queuedOpens).toBeGreaterThanOrEqual(90);
    const out = await Promise.all(calls);
    expect(out.map((r) => (r instanceof Error ? r.message : new TextDecoder().decode(r)))).toEqual(out.map((_, i) => `m${i}`));
    expect(es.peak).toBeLessThanOrEqual(10);
    // Every finished stream is released on both sides (no per-stream leftovers).
    expect(conn.streams.size).toBe(0);
    await until(() => es.server.connections().every((c) => c.streams.size === 0));
  });

  it("refuses an oversize frame with FRAME_TOO_LARGE; the connection stays usable", async () => {
    const es = await echoServer();
    const conn = await client(es.port);
    const out = await new Promise<Error | undefined>((resolve) => {
      const s = conn.tryOpenStream()!;
      s.onReadEnd = (e) => resolve(e);
      s.write(encodeFrameHeader(MAX_FRAME_BYTES + 1, Number.MAX_SAFE_INTEGER), true);
    });
    expect(out).toBeInstanceOf(PeerResetError);
    expect((out as PeerResetError).code).toBe(StreamCode.FRAME_TOO_LARGE);
    expect(es.errors).toContain("too-large");
    expect(await rpc(conn, new Uint8Array([1, 2, 3]))).toEqual(new Uint8Array([1, 2, 3]));
  });

  it("a client reset reaches the server with its code", async () => {
    const es = await echoServer();
    es.hold = true;
    const conn = await client(es.port);
    const s = new FramedStream(conn.tryOpenStream()!);
    s.writeFrame(new Uint8Array([9]), false);
    await until(() => es.held.length === 1);
    s.reset(StreamCode.CANCELLED);
    await until(() => es.errors.length === 1);
    expect(es.errors).toEqual([`reset:${StreamCode.CANCELLED}`]);
  });

  it("resets a peer-initiated stream with the configured refusedStreamCode when there is no onStream", async () => {
    const es = await echoServer();
    const conn = await connectQuic({ host: "127.0.0.1", port: es.port, serverName: "localhost", tls: pki.client, alpn: [ALPN], idleTimeoutMs: 10_000, refusedStreamCode: 42 });
    cleanups.push(() => conn.close());
    await until(() => es.server.connections().some((c) => c.isEstablished));
    const serverConn = es.server.connections().find((c) => c.isEstablished)!;
    const out = await new Promise<Error | undefined>((resolve) => {
      const s = serverConn.tryOpenStream()!;
      s.onReadEnd = (e) => resolve(e);
      s.write(new Uint8Array([1, 2, 3]), false);
    });
    expect(out).toBeInstanceOf(PeerResetError);
    expect((out as PeerResetError).code).toBe(42);
  });

  it("survives version negotiation probes and garbage datagrams", async () => {
    const es = await echoServer();
    const sock = dgram.createSocket("udp4");
    cleanups.push(() => new Promise<void>((r) => sock.close(() => r())));
    const replies: Buffer[] = [];
    sock.on("message", (m) => replies.push(m));
    // Long header, unknown version 0x1a2a3a4a, 8-byte DCID and SCID, padded to 1200 bytes.
    const probe = Buffer.alloc(1200);
    probe[0] = 0xc0;
    probe.writeUInt32BE(0x1a2a3a4a, 1);
    probe[5] = 8;
    probe.fill(0x11, 6, 14);
    probe[14] = 8;
    probe.fill(0x22, 15, 23);
    for (const d of [probe, Buffer.from([0xff]), Buffer.alloc(50, 0x42), Buffer.alloc(1300, 0xc3), Buffer.alloc(40, 0x01)]) {
      sock.send(d, es.port, "127.0.0.1");
    }
    await until(() => replies.length > 0);
    const vn = replies[0]!;
    expect(vn[0]! & 0x80).toBe(0x80);
    expect(vn.readUInt32BE(1)).toBe(0); // Version Negotiation (RFC 9000 §17.2.1)
    const conn = await client(es.port);
    expect(await rpc(conn, new Uint8Array([7]))).toEqual(new Uint8Array([7]));
  });

  it("answers a short-header packet for an unknown connection ID with a stateless reset (RFC 9000 §10.3)", async () => {
    const secret = new Uint8Array(32).fill(9);
    await expect(
      QuicServerEndpoint.listen({ host: "127.0.0.1", port: 0, tls: pki.server, alpn: [ALPN], idleTimeoutMs: 10_000, statelessResetSecret: new Uint8Array(8) }),
    ).rejects.toThrow(RangeError);
    const server = await QuicServerEndpoint.listen({ host: "127.0.0.1", port: 0, tls: pki.server, alpn: [ALPN], idleTimeoutMs: 10_000, statelessResetSecret: secret });
    cleanups.push(() => server.close());
    const sock = dgram.createSocket("udp4");
    cleanups.push(() => new Promise<void>((r) => sock.close(() => r())));
    const replies: Buffer[] = [];
    sock.on("message", (m) => replies.push(m));
    const dcid = Buffer.alloc(20, 0x5a);
    const packet = Buffer.concat([Buffer.from([0x41]), dcid, Buffer.alloc(60, 0x33)]);
    sock.send(packet, server.address.port, "127.0.0.1");
    sock.send(Buffer.alloc(21, 0x41), server.address.port, "127.0.0.1"); // too short to answer
    await until(() => replies.length > 0);
    await new Promise((r) => setTimeout(r, 50));
    expect(replies).toHaveLength(1);
    const reset = replies[0]!;
    expect(reset.length).toBeLessThan(packet.length);
    expect(reset.length).toBeGreaterThanOrEqual(21);
    expect(reset[0]! & 0xc0).toBe(0x40); // short header, fixed bit
    expect(reset.subarray(reset.length - 16)).toEqual(statelessResetToken(secret, dcid));
    expect(statelessResetToken(secret, dcid)).toEqual(statelessResetToken(Uint8Array.from(secret), Buffer.from(dcid))); // stable
    expect(server.statelessResetsSent).toBe(1);
    // Connections still work (each gets its own token in its transport parameters).
    server.onConnection = (conn) => {
      conn.onStream = (raw) => {
        const st = new FramedStream(raw);
        st.onFrame = (p) => st.writeFrame(p, true);
      };
    };
    const conn = await client(server.address.port);
    expect(await rpc(conn, new Uint8Array([7]))).toEqual(new Uint8Array([7]));
  });

  it("drops a connection whose handshake never completes (a forged Initial)", async () => {
    const server = await QuicServerEndpoint.listen({
      host: "127.0.0.1",
      port: 0,
      tls: pki.server,
      alpn: [ALPN],
      idleTimeoutMs: 60_000,
      handshakeTimeoutMs: 300,
    });
    cleanups.push(() => server.close());
    const sock = dgram.createSocket("udp4");
    cleanups.push(() => new Promise<void>((r) => sock.close(() => r())));
    // Long header, QUIC v1, Initial, 8-byte DCID and SCID, token length 0, then junk.
    const initial = Buffer.alloc(1200, 0x5a);
    initial[0] = 0xc3;
    initial.writeUInt32BE(1, 1);
    initial[5] = 8;
    initial.fill(0x33, 6, 14);
    initial[14] = 8;
    initial.fill(0x44, 15, 23);
    initial[23] = 0; // token length
    initial.writeUInt16BE(0x4000 | 1100, 24); // length (varint, 2 bytes)
    sock.send(initial, server.address.port, "127.0.0.1");
    await new Promise((r) => setTimeout(r, 100));
    const created = server.connectionCount;
    await until(() => server.connectionCount === 0, 3_000);
    expect(created).toBeLessThanOrEqual(1);
  });

  it("refuses a server of another CA, a wrong server name, and a client of another CA", async () => {
    const es = await echoServer();
    const rogue = await echoServer({ tls: other.server });
    await expect(client(rogue.port)).rejects.toMatchObject({ reason: "tls-local" });
    await expect(client(es.port, pki.client, { serverName: "nope.example" })).rejects.toBeInstanceOf(QuicConnectError);
    // A foreign client certificate: TLS 1.3 lets the client finish first; the server then closes.
    const failures: number[] = [];
    es.server.onHandshakeFailure = (info) => failures.push(info.code);
    const conn = await client(es.port, { caPem: pki.client.caPem, certPem: other.client.certPem, keyPem: other.client.keyPem }).catch((e: unknown) => e as QuicConnectError);
    if (conn instanceof QuicConnectError) expect(conn.reason).toBe("tls-peer");
    else {
      const r = await rpc(conn, new Uint8Array([1]));
      expect(r).toBeInstanceOf(Error);
      expect(conn.closeReason).toMatchObject({ kind: "peer", tls: true });
    }
    await until(() => failures.includes(0x100 + 48)); // unknown_ca
  });

  it("rejects a handshake quiche refuses at once (empty server name) and closes its UDP socket", async () => {
    const es = await echoServer();
    const udpSockets = (): number => process.getActiveResourcesInfo().filter((r) => r === "UDPWrap").length;
    const before = udpSockets();
    const err = await client(es.port, pki.client, { serverName: "" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QuicConnectError);
    expect(err).toMatchObject({ reason: "tls-local" });
    expect((err as Error).message).toMatch(/server name ""/);
    await until(() => udpSockets() <= before); // a leaked socket kept `serve` alive after EOF and SIGTERM
  });

  it("fires the idle timeout when the peer goes silent", async () => {
    const es = await echoServer({ idleTimeoutMs: 60_000 });
    const conn = await client(es.port, pki.client, { idleTimeoutMs: 600 });
    // Silence the server: close its socket without telling the client.
    es.server.onConnection = undefined;
    const socket = (es.server as unknown as { socket: dgram.Socket }).socket;
    await new Promise<void>((resolve) => socket.close(() => resolve()));
    (es.server as unknown as { closed: boolean }).closed = true;
    const info = await new Promise((resolve) => (conn.onClose = resolve));
    expect(info).toMatchObject({ kind: "idle-timeout" });
  });
});

/** A server that answers each request (read to its FIN) with one chunk and keeps its send side open. */
async function streamingServer(): Promise<{ port: number; streams: QuicStream[]; writeErrors: Error[] }> {
  const server = await QuicServerEndpoint.listen({ host: "127.0.0.1", port: 0, tls: pki.server, alpn: [ALPN], idleTimeoutMs: 20_000 });
  cleanups.push(() => server.close());
  const out = { port: server.address.port, streams: [] as QuicStream[], writeErrors: [] as Error[] };
  server.onConnection = (conn) => {
    conn.onStream = (s) => {
      out.streams.push(s);
      s.onWriteError = (e) => out.writeErrors.push(e);
      s.onReadEnd = () => s.write(new Uint8Array([1]), false);
    };
  };
  return out;
}

describe("QUIC engine: the peer stops our send side (STOP_SENDING, RFC 9000 §3.5)", () => {
  it("a STOP_SENDING that comes with the ACK of the chunk just written reaches onWriteError with its code; the next write throws", async () => {
    const srv = await streamingServer();
    const conn = await client(srv.port, pki.client, { idleTimeoutMs: 20_000 });
    const s = conn.tryOpenStream()!;
    // Reset in the turn the first chunk is read: the STOP_SENDING leaves in the datagram that
    // acknowledges that chunk, before the writer's stream is listed writable again.
    s.onData = () => s.reset(StreamCode.CANCELLED);
    s.write(new Uint8Array([0]), true);
    await until(() => srv.writeErrors.length > 0, 10_000);
    expect(srv.writeErrors).toHaveLength(1);
    expect(srv.writeErrors[0]).toBeInstanceOf(PeerStopError);
    expect((srv.writeErrors[0] as PeerStopError).code).toBe(StreamCode.CANCELLED);
    expect(() => srv.streams[0]!.write(new Uint8Array([2]), false)).toThrow(StreamClosedError);
  });

  it("a STOP_SENDING in the packet that acknowledges the stream's data (as other QUIC stacks send it) still ends the writer's send side", async () => {
    const srv = await streamingServer();
    const conn = await client(srv.port, pki.client, { idleTimeoutMs: 20_000 });
    const s = conn.tryOpenStream()!;
    // quiche directly, not the engine's reset (which sends the ACKs due first): the ACK of the
    // chunk and the STOP_SENDING leave in one packet.
    s.onData = () => conn.conn.streamShutdown(s.id, quiche.Shutdown.Read, StreamCode.CANCELLED);
    s.write(new Uint8Array([0]), true);
    await until(() => srv.writeErrors.length > 0, 10_000);
    expect(srv.writeErrors).toHaveLength(1);
    // quiche may release the stream with that packet, its code with it: then the send side is reported closed.
    expect(srv.writeErrors[0]!.constructor.name).toMatch(/^(PeerStopError|StreamClosedError)$/);
    expect(srv.streams[0]!.writeFinished).toBe(true);
    expect(() => srv.streams[0]!.write(new Uint8Array([2]), false)).toThrow(StreamClosedError);
  });
});

describe("QUIC engine: ICMP port unreachable on an established connection (RFC 8085 §5.2)", () => {
  it("ends the connection (kind unreachable) when the peer's port is closed, long before the idle timeout", async () => {
    const es = await echoServer({ idleTimeoutMs: 120_000 });
    const conn = await client(es.port, pki.client, { idleTimeoutMs: 120_000 });
    expect(await rpc(conn, new Uint8Array([1]))).toEqual(new Uint8Array([1]));
    const pending = rpc(conn, new Uint8Array([2]));
    es.hold = true;
    const closed = new Promise((resolve) => (conn.onClose = resolve));
    // The server process "dies": its port closes without a CONNECTION_CLOSE; the client's next
    // packet (the held stream's retransmission or a keep-alive PING) draws ICMP port unreachable.
    es.server.onConnection = undefined;
    await new Promise<void>((r) => (es.server as unknown as { socket: dgram.Socket }).socket.close(() => r()));
    (es.server as unknown as { closed: boolean }).closed = true;
    expect(await closed).toMatchObject({ kind: "unreachable", reason: "ECONNREFUSED", established: true });
    const err = await pending;
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/peer unreachable: ICMP port unreachable \(ECONNREFUSED\)/);
  }, 60_000);

  it("a port-unreachable report while the peer still answers does not end the connection", async () => {
    const es = await echoServer({ idleTimeoutMs: 120_000 });
    const conn = await client(es.port, pki.client, { idleTimeoutMs: 120_000 });
    expect(await rpc(conn, new Uint8Array([1]))).toEqual(new Uint8Array([1]));
    // A stale or forged ICMP message as the socket would report it.
    conn.peerUnreachable(Object.assign(new Error("recvmsg ECONNREFUSED"), { code: "ECONNREFUSED" }));
    await new Promise((r) => setTimeout(r, UNREACHABLE_CONFIRM_MS + 500));
    expect(conn.isClosed).toBe(false);
    expect(await rpc(conn, new Uint8Array([3]))).toEqual(new Uint8Array([3]));
  }, 60_000);
});

async function until(cond: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}
