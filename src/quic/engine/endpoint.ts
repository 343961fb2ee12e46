/**
 * UDP endpoints of the engine: {@link connectQuic} (client: one connected UDP socket per
 * connection) and {@link QuicServerEndpoint} (server: one socket, connections routed by
 * destination connection ID, RFC 9000 §5.2).
 *
 * Sending: quiche writes each packet straight into a slice of a shared 256 KiB arena and the
 * slice is handed to `dgram.send` (no copy; a new arena is taken when one is used up, the old
 * one lives until its sends complete). Once per event-loop turn (`setImmediate`), after every
 * datagram read in the poll phase was fed to quiche: the connections' streams are processed,
 * then each connection with something to send is flushed once.
 */
import dgram from "node:dgram";
import { createRequire } from "node:module";
import type dns from "node:dns";
import { createHmac, randomFillSync } from "node:crypto";
import net from "node:net";
import type { RecvInfo } from "@matrixai/quic/native/index.js";
import { buildQuicheConfig, CONN_ID_BYTES, quiche, resolveLimits, type EngineConfig } from "./config.js";
import { ConnectionClosedError, describeClose, type CloseInfo } from "./close.js";
import { QuicConnection } from "./connection.js";
import { TurnQueue } from "./timers.js";
import { buildRetry, validateRetryToken } from "./retry.js";

/** UDP socket buffer size requested for engine sockets (bytes; Linux caps it at rmem_max/wmem_max). */
export const ENGINE_UDP_BUFFER_BYTES = 4 * 1024 * 1024;

const ARENA_BYTES = 256 * 1024;

/**
 * The sockets' address lookup: an IP literal (every peer address comes from a received
 * datagram) is passed on synchronously, so a `send` to it costs no `dns.lookup` and no extra
 * tick; a name goes to `dns.lookup`.
 */
function lookup(address: string, options: dns.LookupOneOptions, callback: (error: NodeJS.ErrnoException | null, address: string, family: number) => void): void {
  const literal = net.isIP(address);
  if (literal !== 0) callback(null, address, literal);
  else (systemDns ??= createRequire(import.meta.url)("node:dns") as typeof dns).lookup(address, options, callback);
}
/** `node:dns`, loaded by the first name to look up (~1 ms; the sockets of a dial to an IP address never need it). */
let systemDns: typeof dns | undefined;

/** Base of client and server endpoints: the socket, the packet arena and the flush batching. */
export abstract class UdpEndpoint {
  private arena: Buffer = Buffer.allocUnsafe(ARENA_BYTES);
  private offset = 0;
  /** Datagrams sent / received (for diagnostics and benchmarks). */
  datagramsSent = 0;
  datagramsReceived = 0;

  protected constructor(
    protected readonly socket: dgram.Socket,
    /** Largest UDP payload quiche may write per packet (bytes). */
    protected readonly maxSend: number,
  ) {}

  /** @internal a buffer quiche may write one packet into. */
  sendSlot(): Buffer {
    if (this.offset + this.maxSend > ARENA_BYTES) {
      this.arena = Buffer.allocUnsafe(ARENA_BYTES);
      this.offset = 0;
    }
    return this.arena.subarray(this.offset, this.offset + this.maxSend);
  }

  /** @internal sends the first `length` bytes of `slot` (from {@link sendSlot}) to `conn`'s peer. */
  transmit(slot: Buffer, length: number, conn: QuicConnection): void {
    this.offset += length;
    this.datagramsSent++;
    this.sendDatagram(slot.subarray(0, length), conn);
  }

  protected abstract sendDatagram(packet: Buffer, conn: QuicConnection): void;

  /** @internal */
  abstract connectionGone(conn: QuicConnection): void;

  /** @internal queues `conn` for the end-of-turn flush. */
  scheduleFlush(conn: QuicConnection): void {
    this.flushes.add(conn);
  }

  /**
   * @internal queues `conn`'s stream processing ({@link QuicConnection.processStreams}) for
   * the end of the turn: every datagram read from the socket in this poll phase is fed to
   * quiche first. Queued before the flush, so a response written while processing (or in the
   * microtasks that follow) leaves in this turn's flush.
   */
  scheduleRead(conn: QuicConnection): void {
    this.reads.add(conn);
  }

  private readonly reads = new TurnQueue((c) => c.processStreams());
  private readonly flushes = new TurnQueue((c) => c.flush(), this.reads);
}

/** Options of {@link connectQuic}. */
export interface ConnectOptions extends EngineConfig {
  /** Server IP address (a literal: resolve names first). */
  host: string;
  /** Server UDP port. */
  port: number;
  /** Name the server certificate must carry (also sent as SNI). */
  serverName: string;
  /** Deadline for the handshake in ms (default 5 000). */
  connectTimeoutMs?: number;
}

/** Why {@link connectQuic} failed. */
export class QuicConnectError extends Error {
  override readonly name = "QuicConnectError";
  /**
   * @param reason `timeout` (no handshake in time), `unreachable` (ICMP / socket error),
   *   `tls-local` (the server's certificate or ALPN failed our checks), `tls-peer` (the server
   *   refused us, e.g. our certificate), `closed` (any other close)
   */
  constructor(
    readonly reason: "timeout" | "unreachable" | "tls-local" | "tls-peer" | "closed",
    message: string,
    readonly close?: CloseInfo,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

class ClientEndpoint extends UdpEndpoint {
  conn: QuicConnection | undefined;
  closed = false;

  constructor(socket: dgram.Socket, maxSend: number) {
    super(socket, maxSend);
  }

  protected sendDatagram(packet: Buffer): void {
    if (this.closed) return;
    this.socket.send(packet);
  }

  connectionGone(): void {
    this.shut();
  }

  shut(): void {
    if (this.closed) return;
    this.closed = true;
    // Let sends already handed to dgram (e.g. the CONNECTION_CLOSE) leave first.
    setImmediate(() => {
      try {
        this.socket.close();
      } catch {
        /* already closed */
      }
    });
  }
}

/**
 * Connects to a QUIC server: TLS 1.3 with the server's certificate verified against
 * `tls.caPem` and `serverName`, our certificate presented (mutual TLS), ALPN from `alpn`.
 * Resolves once the handshake completed. The connection's socket closes with it.
 * @throws QuicConnectError (`timeout`, `unreachable`, `tls-local`, `tls-peer`, `closed`)
 * @throws RangeError for bad limits; Error when the TLS material cannot be loaded
 */
export async function connectQuic(options: ConnectOptions): Promise<QuicConnection> {
  const limits = resolveLimits(options);
  const config = buildQuicheConfig(options);
  const family = net.isIP(options.host);
  if (family === 0) throw new RangeError(`connectQuic: host must be an IP address, got ${options.host}`);
  const socket = dgram.createSocket({
    type: family === 6 ? "udp6" : "udp4",
    recvBufferSize: ENGINE_UDP_BUFFER_BYTES,
    sendBufferSize: ENGINE_UDP_BUFFER_BYTES,
    lookup,
  });
  const ep = new ClientEndpoint(socket, limits.maxSendUdpPayload);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.connect(options.port, options.host, () => {
        socket.off("error", reject);
        resolve();
      });
    });
  } catch (e) {
    ep.shut();
    throw new QuicConnectError("unreachable", `cannot open a UDP socket to ${options.host}:${options.port}: ${(e as Error).message}`, undefined, { cause: e });
  }
  const local = socket.address();
  const recvInfo: RecvInfo = {
    from: { host: options.host, port: options.port },
    to: { host: local.address, port: local.port },
  };
  const scid = new Uint8Array(CONN_ID_BYTES);
  randomFillSync(scid);
  const timeoutMs = options.connectTimeoutMs ?? 5_000;
  return new Promise<QuicConnection>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const fail = (error: QuicConnectError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      conn.onClose = undefined;
      conn.close(0, "connect failed");
      ep.shut();
      reject(error);
    };
    let qc: ReturnType<typeof quiche.Connection.connect>;
    try {
      qc = quiche.Connection.connect(options.serverName, scid, recvInfo.to, recvInfo.from, config);
    } catch (e) {
      // quiche refuses some parameters at once (e.g. an empty server name: "TlsFail"): the
      // socket must not outlive the attempt, or the process never exits.
      settled = true;
      ep.shut();
      reject(
        new QuicConnectError("tls-local", `cannot start the TLS handshake with server name ${JSON.stringify(options.serverName)}: ${(e as Error).message}`, undefined, {
          cause: e,
        }),
      );
      return;
    }
    const conn: QuicConnection = new QuicConnection(ep, qc, "client", recvInfo, limits, () => {
      // Resolve after this turn's flush, so the handshake's last flight leaves before any
      // stream data: some servers (e.g. @matrixai/quic's) mishandle 1-RTT stream data that
      // arrives in the datagram completing their handshake.
      setImmediate(() => {
        if (settled || conn.isClosed) return;
        settled = true;
        clearTimeout(timer);
        conn.onClose = undefined;
        resolve(conn);
      });
    });
    ep.conn = conn;
    conn.onClose = (info) => {
      const reason = info.tls ? (info.kind === "peer" ? "tls-peer" : "tls-local") : info.kind === "idle-timeout" ? "timeout" : "closed";
      fail(new QuicConnectError(reason, describeClose(info), info, { cause: new ConnectionClosedError(info) }));
    };
    socket.on("message", (msg: Buffer) => {
      ep.datagramsReceived++;
      conn.receive(msg);
    });
    socket.on("error", (e: Error) => {
      // On a connected UDP socket an ICMP port-unreachable shows up here (ECONNREFUSED): it
      // fails a connect attempt at once; an established connection confirms it first.
      if (!settled) fail(new QuicConnectError("unreachable", `UDP error: ${e.message}`, undefined, { cause: e }));
      else if ((e as NodeJS.ErrnoException).code === "ECONNREFUSED") conn.peerUnreachable(e);
    });
    timer = setTimeout(() => fail(new QuicConnectError("timeout", `no QUIC handshake within ${timeoutMs} ms`)), timeoutMs);
    conn.flush(); // the client Initial
  });
}

/** Options of {@link QuicServerEndpoint.listen}. */
export interface ListenOptions extends EngineConfig {
  /** Address to bind (e.g. `127.0.0.1`, `::`). */
  host: string;
  /** UDP port (0: ephemeral). */
  port: number;
  /**
   * A connection whose handshake has not completed this long after its first Initial is
   * dropped (ms; default 10 000, at most the idle timeout), so stray or forged Initials do
   * not hold state for the whole idle timeout.
   */
  handshakeTimeoutMs?: number;
  /**
   * Connections whose handshake has not completed that the server tracks at once (default
   * {@link DEFAULT_MAX_HANDSHAKES}). A client Initial arriving while this many are pending is
   * dropped without an answer (no state, nothing sent: the client retransmits it later), so a
   * flood of Initials costs at most this many half-open connections.
   */
  maxHandshakes?: number;
  /**
   * Of those, connections from one remote IP address (default
   * {@link DEFAULT_MAX_HANDSHAKES_PER_ADDRESS}; loopback counts like any address). A client
   * Initial from an address with this many pending is dropped like one past `maxHandshakes`
   * (counted in `initialsRefused`), so one address cannot take every slot.
   */
  maxHandshakesPerAddress?: number;
  /**
   * From this many pending handshakes on, a client Initial without a valid token is answered
   * with a Retry (RFC 9000 §8.1.2) instead of a connection: the server keeps no state for it
   * and sends one small packet; only a client that receives at its address comes back, with
   * the token, and is then accepted as validated. Default: half of `maxHandshakes`; 0: always.
   */
  retryThreshold?: number;
  /**
   * Secret (at least 16 bytes) for stateless resets (RFC 9000 §10.3). When set, each
   * connection's stateless reset token is HMAC-SHA256(secret, server connection ID) (first 16
   * bytes, sent in the transport parameters), and a short-header packet for an unknown
   * connection ID is answered with a stateless reset carrying that ID's token. A server that
   * restarts with the same secret thereby ends its clients' old connections at once instead
   * of leaving them to their idle timeout.
   */
  statelessResetSecret?: Uint8Array;
}

/** QUIC version 1 (RFC 9000), the only version whose Retry integrity key we know (RFC 9001 §5.8). */
const QUIC_V1 = 1;

/** Default of {@link ListenOptions.maxHandshakes}. */
export const DEFAULT_MAX_HANDSHAKES = 1024;

/** Default of {@link ListenOptions.maxHandshakesPerAddress}. */
export const DEFAULT_MAX_HANDSHAKES_PER_ADDRESS = 64;

/** Stateless resets sent at most this many per second (RFC 9000 §10.3: limit them). */
const MAX_RESETS_PER_SECOND = 100;

/** The stateless reset token of connection ID `cid` (RFC 9000 §10.3.2: a keyed hash of the ID). */
export function statelessResetToken(secret: Uint8Array, cid: Uint8Array): Buffer {
  return createHmac("sha256", secret).update(cid).digest().subarray(0, 16);
}

/**
 * A QUIC server on one UDP socket. New connections are accepted from client Initial packets
 * (RFC 9000 §7, §14.1: at least 1200 bytes) without a Retry round trip, each with a fresh
 * random 20-byte connection ID; later packets are routed by their destination connection ID.
 * Long-header packets of an unsupported version get a Version Negotiation packet
 * (RFC 9000 §6); anything else unknown or unparsable is dropped.
 * The client must present a certificate signed by `tls.caPem` (mutual TLS).
 */
export class QuicServerEndpoint extends UdpEndpoint {
  /** A connection whose handshake completed. Set `onStream`/`onClose` on it synchronously. */
  onConnection: ((conn: QuicConnection) => void) | undefined = undefined;
  /** A connection that closed before its handshake completed (e.g. a refused client certificate). */
  onHandshakeFailure: ((info: CloseInfo) => void) | undefined = undefined;
  private readonly routes = new Map<string, QuicConnection>();
  private readonly conns = new Set<QuicConnection>();
  private closed = false;
  private readonly local: { host: string; port: number };
  private readonly vnBuf = Buffer.allocUnsafe(1350);
  /** Stateless resets sent in the current one-second window, and when it started. */
  private resets = { count: 0, windowStart: 0 };
  /** Stateless resets sent (for tests and diagnostics). */
  statelessResetsSent = 0;
  /** Client Initials dropped because {@link ListenOptions.maxHandshakes} were pending. */
  initialsRefused = 0;
  /** Retry packets sent (see {@link ListenOptions.retryThreshold}). */
  retriesSent = 0;
  /** Datagrams dropped because they reached a half-open connection from another address than its first Initial's. */
  datagramsFromOtherAddress = 0;
  /** Secret of the Retry tokens (random per endpoint: a token outlives no restart). */
  private readonly retrySecret = randomFillSync(new Uint8Array(32));
  private handshaking = 0;
  /** Of {@link handshaking}, per remote IP address (entries only while non-zero). */
  private readonly handshakingByAddress = new Map<string, number>();

  private constructor(
    socket: dgram.Socket,
    private readonly limits: ReturnType<typeof resolveLimits>,
    private readonly config: ReturnType<typeof buildQuicheConfig>,
    private readonly handshakeTimeoutMs: number,
    private readonly resetSecret: Uint8Array | undefined,
    private readonly maxHandshakes: number,
    private readonly retryThreshold: number,
    private readonly maxPerAddress: number,
  ) {
    super(socket, limits.maxSendUdpPayload);
    const a = socket.address();
    this.local = { host: a.address, port: a.port };
    socket.on("message", (msg: Buffer, rinfo: dgram.RemoteInfo) => this.onDatagram(msg, rinfo));
    socket.on("error", () => {
      /* per-datagram send errors (e.g. ICMP from a gone client) are not fatal */
    });
  }

  /**
   * Binds the socket and starts accepting.
   * @throws RangeError for bad limits; Error when the TLS material cannot be loaded or the
   *   socket cannot be bound
   */
  static async listen(options: ListenOptions): Promise<QuicServerEndpoint> {
    const limits = resolveLimits(options);
    const secret = options.statelessResetSecret;
    const maxHandshakes = options.maxHandshakes ?? DEFAULT_MAX_HANDSHAKES;
    if (!Number.isInteger(maxHandshakes) || maxHandshakes < 1) throw new RangeError(`maxHandshakes must be a positive integer, got ${maxHandshakes}`);
    const maxPerAddress = options.maxHandshakesPerAddress ?? DEFAULT_MAX_HANDSHAKES_PER_ADDRESS;
    if (!Number.isInteger(maxPerAddress) || maxPerAddress < 1) throw new RangeError(`maxHandshakesPerAddress must be a positive integer, got ${maxPerAddress}`);
    const retryThreshold = options.retryThreshold ?? Math.ceil(maxHandshakes / 2);
    if (!Number.isInteger(retryThreshold) || retryThreshold < 0) throw new RangeError(`retryThreshold must be a non-negative integer, got ${retryThreshold}`);
    if (secret !== undefined && secret.byteLength < 16) throw new RangeError("statelessResetSecret must have at least 16 bytes");
    const config = buildQuicheConfig(options);
    const socket = dgram.createSocket({
      type: net.isIPv6(options.host) ? "udp6" : "udp4",
      recvBufferSize: ENGINE_UDP_BUFFER_BYTES,
      sendBufferSize: ENGINE_UDP_BUFFER_BYTES,
      lookup,
    });
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.bind(options.port, options.host, () => {
        socket.off("error", reject);
        resolve();
      });
    });
    const handshakeTimeoutMs = Math.min(options.handshakeTimeoutMs ?? 10_000, limits.idleTimeoutMs);
    return new QuicServerEndpoint(
      socket,
      limits,
      config,
      handshakeTimeoutMs,
      secret === undefined ? undefined : Uint8Array.from(secret),
      maxHandshakes,
      retryThreshold,
      maxPerAddress,
    );
  }

  /** Bound address. */
  get address(): { host: string; port: number } {
    return { ...this.local };
  }

  /** Connections currently tracked (handshaking, open or draining). */
  get connectionCount(): number {
    return this.conns.size;
  }

  /** Connections whose handshake has not completed yet (at most {@link ListenOptions.maxHandshakes}). */
  get handshakingCount(): number {
    return this.handshaking;
  }

  /** Every tracked connection. */
  connections(): QuicConnection[] {
    return [...this.conns];
  }

  /**
   * Closes every connection with application `code` (CONNECTION_CLOSE sent at once) and the
   * socket. Idempotent.
   */
  async close(code = 0, reason = ""): Promise<void> {
    if (this.closed) return;
    for (const c of [...this.conns]) c.close(code, reason);
    this.closed = true;
    // Sends to an address resolve it first (next tick): let the CONNECTION_CLOSEs leave.
    await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise<void>((resolve) => {
      try {
        this.socket.close(() => resolve());
      } catch {
        resolve();
      }
    });
  }

  protected sendDatagram(packet: Buffer, conn: QuicConnection): void {
    if (this.closed) return;
    const to = conn.recvInfo.from;
    this.socket.send(packet, to.port, to.host);
  }

  connectionGone(conn: QuicConnection): void {
    if (this.conns.delete(conn) && !conn.isEstablished) this.handshakeEnded(conn);
    for (const k of conn.routeKeys) if (this.routes.get(k) === conn) this.routes.delete(k);
  }

  /** A half-open connection completed or lost its handshake: its slot is free. */
  private handshakeEnded(conn: QuicConnection): void {
    this.handshaking--;
    const address = conn.recvInfo.from.host;
    const n = (this.handshakingByAddress.get(address) ?? 1) - 1;
    if (n > 0) this.handshakingByAddress.set(address, n);
    else this.handshakingByAddress.delete(address);
  }

  private onDatagram(data: Buffer, rinfo: dgram.RemoteInfo): void {
    if (this.closed || data.length < 1) return;
    this.datagramsReceived++;
    let key: string;
    const long = (data[0]! & 0x80) !== 0;
    if (long) {
      if (data.length < 7) return;
      const dcidLen = data[5]!;
      if (dcidLen > 20 || data.length < 6 + dcidLen) return;
      key = data.toString("latin1", 6, 6 + dcidLen);
    } else {
      if (data.length < 1 + CONN_ID_BYTES) return;
      key = data.toString("latin1", 1, 1 + CONN_ID_BYTES);
    }
    const conn = this.routes.get(key);
    if (conn !== undefined) {
      const from = conn.recvInfo.from;
      if (from.port !== rinfo.port || from.host !== rinfo.address) {
        // No migration before the handshake completes (RFC 9000 §9): a half-open connection
        // stays bound to the address of its first Initial, whose bytes alone earn the
        // anti-amplification credit (RFC 9000 §8.1). Datagrams from elsewhere are dropped.
        if (!conn.isEstablished) {
          this.datagramsFromOtherAddress++;
          return;
        }
        conn.recvInfo = { from: { host: rinfo.address, port: rinfo.port }, to: this.local };
      }
      conn.receive(data);
      return;
    }
    if (long) this.newConnection(data, rinfo, key);
    else this.statelessReset(data, rinfo);
  }

  /**
   * Answers a short-header packet for an unknown connection ID with a stateless reset
   * (RFC 9000 §10.3): shorter than the packet that triggered it (no reset loops between two
   * endpoints), at least 21 bytes, `01` + unpredictable bits, then the ID's token. Rate-limited.
   */
  private statelessReset(data: Buffer, rinfo: dgram.RemoteInfo): void {
    if (!this.resetSecret || data.length <= 21 + 1) return;
    const now = Date.now();
    if (now - this.resets.windowStart >= 1_000) this.resets = { count: 0, windowStart: now };
    if (this.resets.count >= MAX_RESETS_PER_SECOND) return;
    this.resets.count++;
    const size = Math.min(data.length - 1, 43);
    const packet = Buffer.allocUnsafe(size);
    randomFillSync(packet, 0, size - 16);
    packet[0] = 0x40 | (packet[0]! & 0x3f);
    statelessResetToken(this.resetSecret, data.subarray(1, 1 + CONN_ID_BYTES)).copy(packet, size - 16);
    this.statelessResetsSent++;
    this.socket.send(packet, rinfo.port, rinfo.address);
  }

  private newConnection(data: Buffer, rinfo: dgram.RemoteInfo, dcidKey: string): void {
    let header: ReturnType<typeof quiche.Header.fromSlice>;
    try {
      header = quiche.Header.fromSlice(data, CONN_ID_BYTES);
    } catch {
      return; // not a QUIC packet
    }
    if (!quiche.versionIsSupported(header.version)) {
      // RFC 9000 §6.1: answer only datagrams that could be a client's first (≥ 1200 bytes).
      if (data.length < 1200) return;
      try {
        const n = quiche.negotiateVersion(header.scid, header.dcid, this.vnBuf);
        this.socket.send(Buffer.from(this.vnBuf.subarray(0, n)), rinfo.port, rinfo.address);
      } catch {
        /* unparsable: drop */
      }
      return;
    }
    if (header.ty !== quiche.Type.Initial || data.length < 1200 || header.dcid.byteLength < 8) return;
    if (this.handshaking >= this.maxHandshakes || (this.handshakingByAddress.get(rinfo.address) ?? 0) >= this.maxPerAddress) {
      this.initialsRefused++;
      return;
    }
    // A valid Retry token: the client proved its address; it now uses the ID our Retry gave it.
    const odcid =
      header.token !== undefined && header.token.byteLength > 0 && header.dcid.byteLength === CONN_ID_BYTES
        ? validateRetryToken(this.retrySecret, header.token, rinfo.address, rinfo.port)
        : undefined;
    if (odcid === undefined && this.handshaking >= this.retryThreshold && header.version === QUIC_V1) {
      const newScid = randomFillSync(new Uint8Array(CONN_ID_BYTES));
      this.retriesSent++;
      this.socket.send(buildRetry(this.retrySecret, header.version, header.dcid, header.scid, newScid, rinfo.address, rinfo.port), rinfo.port, rinfo.address);
      return;
    }
    const scid = odcid !== undefined ? Uint8Array.from(header.dcid) : randomFillSync(new Uint8Array(CONN_ID_BYTES));
    const recvInfo: RecvInfo = { from: { host: rinfo.address, port: rinfo.port }, to: this.local };
    let qc: ReturnType<typeof quiche.Connection.accept>;
    try {
      // The token goes into this connection's transport parameters (quiche copies them from
      // the config at accept time).
      if (this.resetSecret) this.config.setStatelessResetToken(BigInt("0x" + statelessResetToken(this.resetSecret, scid).toString("hex")));
      // With the original ID (after a Retry) quiche sends it and the Retry's ID in its transport
      // parameters (RFC 9000 §7.3) and treats the address as validated.
      qc = quiche.Connection.accept(scid, odcid ?? null, this.local, recvInfo.from, this.config);
    } catch {
      return;
    }
    const conn: QuicConnection = new QuicConnection(this, qc, "server", recvInfo, this.limits, () => {
      this.handshakeEnded(conn);
      if (this.onConnection) this.onConnection(conn);
    });
    conn.onClose = (info) => {
      if (!info.established && this.onHandshakeFailure) this.onHandshakeFailure(info);
    };
    if (odcid !== undefined) conn.amplificationCredit = undefined; // validated by the Retry token
    const scidKey = Buffer.from(scid.buffer, scid.byteOffset, scid.byteLength).toString("latin1");
    conn.routeKeys = [scidKey, dcidKey];
    this.routes.set(scidKey, conn);
    this.routes.set(dcidKey, conn);
    this.conns.add(conn);
    this.handshaking++;
    this.handshakingByAddress.set(rinfo.address, (this.handshakingByAddress.get(rinfo.address) ?? 0) + 1);
    const timer = setTimeout(() => {
      if (!conn.isEstablished && !conn.isClosed) conn.close(0, "handshake timeout");
    }, this.handshakeTimeoutMs);
    timer.unref();
    conn.receive(data);
  }
}
