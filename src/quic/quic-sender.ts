/**
 * {@link QuicSender}: the {@link Sender} over QUIC, one bidirectional stream per RPC
 * (orchestra-protocol.md, "Transport" and "Framing and RPC shape"), on the project's own QUIC
 * engine (./engine: quiche's native binding driven directly; docs/quic-performance.md).
 *
 * Defences carried over from the faults measured in /work/shared/quic-notes.md:
 * - fault 1 (a lost FIN hangs a stream): the whole frame and the FIN go to quiche in one
 *   `stream_send` call, the call resolves as soon as one complete response frame is read (the
 *   FIN is then awaited only briefly), and every call has a deadline;
 * - fault 2 (exceeding the peer's stream limit): streams are opened only while the peer grants
 *   credit (`peer_streams_left_bidi`) and below a local concurrency cap; further calls wait in a
 *   FIFO queue and are started when MAX_STREAMS arrives;
 * - fault 3 (silent hangs): an idle timeout and keep-alive are always set and connecting runs
 *   under a deadline.
 *
 * Recovery (issue 5): a lost connection (idle timeout, close from the peer, or call deadlines
 * expiring while no packet at all arrived for longer than the keep-alive interval) fails every
 * call on it at once and drops it; the next calls reconnect, with a backoff of
 * `reconnectMinMs` doubling to `reconnectMaxMs` between failed connection attempts.
 *
 * Per-call cost: one promise and one stream object per call; deadlines and FIN grace periods
 * share one timer each (no timer per call).
 */
import { performance } from "node:perf_hooks";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  PluginRequestSchema,
  PluginResponseSchema,
  type PluginRequest,
  type PluginResponse,
} from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { childLogger, type Logger } from "../log.js";
import { BRIDGE_CERT_NAME, defaultCertsDir, ensureCertStore, type TlsMaterial } from "../pki/store.js";
import { FrameError, FrameTooLargeError, MAX_FRAME_BYTES, PAYLOAD_READ_OPTIONS } from "./frame.js";
import {
  ALPN,
  FrameEmptyStreamError,
  StreamCode,
  streamCodeName,
  StreamResetByPeer,
  udpPayloadConfig,
} from "./quic-common.js";
import {
  ConnectionClosedError,
  describeClose,
  describeTlsClose,
  PeerResetError,
  PeerStopError,
  QuicConnectError,
  type CloseInfo,
  type QuicConnection,
  type QuicStream,
} from "./engine/index.js";
import { SenderError, type SenderErrorKind, type Sender, type SendOptions } from "./sender.js";
import { formatHostPort, ResolveError, type Resolver } from "./address.js";
import { dialQuic } from "./dial.js";

export { formatHostPort, parseHostPort } from "./address.js";

/** Defaults of {@link QuicSenderOptions}, in milliseconds / counts. */
export const QUIC_SENDER_DEFAULTS = {
  serverName: "localhost",
  idleTimeoutMs: 15_000,
  /** Used when {@link QuicSenderOptions.keepAliveMs} is absent, capped at a third of the idle timeout. */
  keepAliveMs: 5_000,
  connectTimeoutMs: 5_000,
  callTimeoutMs: 300_000,
  maxConcurrentStreams: 100,
  finGraceMs: 2_000,
  reconnectMinMs: 100,
  reconnectMaxMs: 5_000,
} as const;

/**
 * The keep-alive interval used when none is given: {@link QUIC_SENDER_DEFAULTS}.keepAliveMs, or a
 * third of `idleTimeoutMs` when that is smaller (quiche needs it below the idle timeout). In ms.
 */
export function defaultKeepAliveMs(idleTimeoutMs: number): number {
  return Math.max(1, Math.min(QUIC_SENDER_DEFAULTS.keepAliveMs, Math.floor(idleTimeoutMs / 3)));
}

/**
 * The liveness check's memory of one connection: how long quiche's received-packet counter has
 * stood still, judged at the moments it is sampled (call deadlines).
 */
export class ReceiveWatch {
  private packets = -1;
  private changedAt = 0;

  /** Samples `packetsReceived` at `now` (ms); returns how long it has not moved (0 when it just did). */
  silentFor(packetsReceived: number, now: number): number {
    if (packetsReceived !== this.packets) {
      this.packets = packetsReceived;
      this.changedAt = now;
      return 0;
    }
    return now - this.changedAt;
  }
}

/** Options of {@link QuicSender}. */
export interface QuicSenderOptions {
  /** Orchestrator host name or IP address. */
  host: string;
  /** Orchestrator UDP port. */
  port: number;
  /** Cert store directory used when {@link tls} is absent (default `~/.orchestra/certs`). */
  certsDir?: string;
  /** Party name in the cert store (default `transport.stdio-client`). */
  certName?: string;
  /** PEM material to use instead of the cert store. */
  tls?: TlsMaterial;
  /** Name the server certificate must carry (default `localhost`). */
  serverName?: string;
  /** Name resolution (default: the system resolver, every address; see `resolveAddresses`). */
  resolver?: Resolver;
  /**
   * QUIC max idle timeout in ms (default 15 000; must be > 0). The connection (and every call
   * on it) fails once no packet arrived for this long; quiche uses the smaller of both peers'
   * values.
   */
  idleTimeoutMs?: number;
  /**
   * Keep-alive (PING) interval in ms (default: 5 000, or a third of {@link idleTimeoutMs} when
   * that is smaller; must be below {@link idleTimeoutMs}).
   */
  keepAliveMs?: number;
  /** First delay before retrying after a failed connection attempt, in ms (default 100; doubles per failure). */
  reconnectMinMs?: number;
  /** Largest delay between connection attempts, in ms (default 5 000). */
  reconnectMaxMs?: number;
  /** Deadline for connecting (UDP + TLS handshake), in ms (default 5 000). */
  connectTimeoutMs?: number;
  /** Per-call deadline in ms when `SendOptions.timeoutMs` is not given (default 300 000). */
  callTimeoutMs?: number;
  /** Most RPC streams open at once (default 100); further calls queue. */
  maxConcurrentStreams?: number;
  /** How long to wait for the server's FIN after a complete response before cancelling the stream (ms, default 2 000). */
  finGraceMs?: number;
  /**
   * Largest UDP datagram payload to send, in bytes (1200..65527). Default: 16 KiB when the
   * orchestrator's address is loopback, else 1350 (quiche's default, safe on any path).
   */
  udpPayloadBytes?: number;
  /** Logger for warnings (default: the project's pino logger, component `quic-sender`). */
  logger?: Logger;
}

/** Longest delay `setTimeout` honours (ms). */
const MAX_TIMER_MS = 2_147_483_647;


interface Conn {
  qc: QuicConnection;
  inflight: Set<Call>;
  dead: boolean;
  /** The liveness check's samples of quiche's received-packet count (taken at call deadlines). */
  recvWatch: ReceiveWatch;
}

interface Call {
  payload: Uint8Array;
  requestId: string;
  resolve: (r: PluginResponse) => void;
  reject: (e: SenderError) => void;
  settled: boolean;
  /** `performance.now()` time of the deadline. */
  deadline: number;
  /** The deadline as given, in ms (for the error message). */
  timeoutMs: number;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  conn?: Conn;
  stream?: QuicStream;
}

/** A stream whose response is complete and whose FIN is awaited until `deadline`. */
interface FinWait {
  stream: QuicStream;
  deadline: number;
}

/** Deadline checks run at most this often (ms): a deadline may fire this much late. */
const DEADLINE_SLACK_MS = 10;

/**
 * A {@link Sender} that talks to one orchestrator over one lazily opened QUIC connection.
 *
 * - Connects on the first `send` (TLS 1.3, ALPN `orchestra-plugin`, mutual TLS with the cert
 *   store's CA and this party's certificate; the server must present a cert for `serverName`).
 * - If the connection is lost, calls in flight reject with `SenderError('closed')` and the next
 *   `send` reconnects. A failed connect rejects the waiting calls with `SenderError('connect')`.
 * - Each call: one bidi stream; frame + FIN in one turn; exactly one response frame read.
 *   Abort (`signal`) or deadline (`timeoutMs`, else `callTimeoutMs`) cancels the stream.
 * - Errors are always {@link SenderError}s whose message names the address.
 */
export class QuicSender implements Sender {
  /** `host:port` as given (used in every error message). */
  readonly address: string;
  private readonly opts: Required<Omit<QuicSenderOptions, "tls" | "certsDir" | "logger" | "udpPayloadBytes" | "resolver">> & {
    tls?: TlsMaterial;
    resolver?: Resolver;
    udpPayloadBytes?: number;
    certsDir: string;
  };
  private readonly log: Logger;
  private tlsP: Promise<TlsMaterial> | undefined;
  private conn: Conn | undefined;
  private connecting: Promise<void> | undefined;
  private readonly queue: Call[] = [];
  private active = 0;
  private closed = false;
  /** Unsettled calls (queued or on a stream), for the shared deadline timer. */
  private readonly pending = new Set<Call>();
  private deadlineTimer: NodeJS.Timeout | undefined;
  private deadlineAt = Infinity;
  /** FIN waits in deadline order (all share `finGraceMs`), and their shared timer. */
  private finWaits: FinWait[] = [];
  private finTimer: NodeJS.Timeout | undefined;
  /** Consecutive failed connection attempts, and the earliest time of the next one. */
  private connectFailures = 0;
  private nextConnectAt = 0;
  private backoffTimer: NodeJS.Timeout | undefined;

  /**
   * @throws RangeError when a timeout/limit option is not a positive number or
   *   `keepAliveMs >= idleTimeoutMs`
   */
  constructor(options: QuicSenderOptions) {
    const d = QUIC_SENDER_DEFAULTS;
    const idleTimeoutMs = options.idleTimeoutMs ?? d.idleTimeoutMs;
    this.opts = {
      host: options.host,
      port: options.port,
      certName: options.certName ?? BRIDGE_CERT_NAME,
      certsDir: options.certsDir ?? defaultCertsDir(),
      serverName: options.serverName ?? d.serverName,
      idleTimeoutMs,
      keepAliveMs: options.keepAliveMs ?? defaultKeepAliveMs(idleTimeoutMs),
      reconnectMinMs: options.reconnectMinMs ?? d.reconnectMinMs,
      reconnectMaxMs: options.reconnectMaxMs ?? d.reconnectMaxMs,
      connectTimeoutMs: options.connectTimeoutMs ?? d.connectTimeoutMs,
      callTimeoutMs: options.callTimeoutMs ?? d.callTimeoutMs,
      maxConcurrentStreams: options.maxConcurrentStreams ?? d.maxConcurrentStreams,
      finGraceMs: options.finGraceMs ?? d.finGraceMs,
      ...(options.tls ? { tls: options.tls } : {}),
      ...(options.resolver ? { resolver: options.resolver } : {}),
      ...(options.udpPayloadBytes !== undefined ? { udpPayloadBytes: options.udpPayloadBytes } : {}),
    };
    udpPayloadConfig(false, options.udpPayloadBytes); // validates
    for (const key of [
      "idleTimeoutMs",
      "keepAliveMs",
      "connectTimeoutMs",
      "callTimeoutMs",
      "maxConcurrentStreams",
      "finGraceMs",
      "reconnectMinMs",
      "reconnectMaxMs",
    ] as const) {
      const v = this.opts[key];
      if (!(typeof v === "number" && v > 0 && Number.isFinite(v))) {
        throw new RangeError(`QuicSender: ${key} must be a positive number, got ${String(v)}`);
      }
    }
    if (this.opts.keepAliveMs >= this.opts.idleTimeoutMs) {
      throw new RangeError(
        `QuicSender: keepAliveMs (${this.opts.keepAliveMs}) must be below idleTimeoutMs (${this.opts.idleTimeoutMs})`,
      );
    }
    if (!Number.isInteger(options.port) || options.port < 1 || options.port > 65535) {
      throw new RangeError(`QuicSender: port must be 1..65535, got ${String(options.port)}`);
    }
    this.address = formatHostPort(options.host, options.port);
    this.log = options.logger ?? childLogger("quic-sender");
  }

  /** Calls currently on a stream / waiting for a stream (for diagnostics and tests). */
  get stats(): { active: number; queued: number; connected: boolean } {
    return { active: this.active, queued: this.queue.length, connected: this.conn !== undefined };
  }

  /**
   * Sends one request on a new stream and resolves with the single response.
   * @throws SenderError kind `frame` (request or response over 16 MiB, malformed response),
   *   `connect`, `closed`, `timeout`, `aborted` or `protocol` (stream reset by the server,
   *   request_id mismatch)
   */
  send(request: PluginRequest, options: SendOptions = {}): Promise<PluginResponse> {
    if (this.closed) return Promise.reject(this.err("closed", "sender is closed"));
    if (options.signal?.aborted) return Promise.reject(this.err("aborted", "call aborted before it was sent"));
    let payload: Uint8Array;
    try {
      payload = toBinary(PluginRequestSchema, request);
    } catch (e) {
      return Promise.reject(this.err("frame", `cannot encode PluginRequest: ${msg(e)}`, e));
    }
    if (payload.byteLength > MAX_FRAME_BYTES) {
      return Promise.reject(
        this.err("frame", `request frame of ${payload.byteLength} bytes exceeds the ${MAX_FRAME_BYTES}-byte limit`),
      );
    }
    const requested = options.timeoutMs && options.timeoutMs > 0 ? options.timeoutMs : this.opts.callTimeoutMs;
    const timeoutMs = Math.min(requested, MAX_TIMER_MS); // setTimeout fires at once beyond 2^31-1 ms
    return new Promise<PluginResponse>((resolve, reject) => {
      const signal = options.signal;
      const call: Call = {
        payload,
        requestId: request.requestId,
        resolve,
        reject,
        settled: false,
        deadline: performance.now() + timeoutMs,
        timeoutMs,
        signal,
        onAbort: undefined,
      };
      if (signal) {
        call.onAbort = () => {
          this.fail(call, this.err("aborted", "call aborted", signal.reason), StreamCode.CANCELLED);
        };
        signal.addEventListener("abort", call.onAbort, { once: true });
      }
      this.pending.add(call);
      if (call.deadline < this.deadlineAt) this.armDeadline(call.deadline);
      this.queue.push(call);
      this.pump();
    });
  }

  /**
   * Closes the connection; queued and in-flight calls reject with `SenderError('closed')`.
   * Idempotent. The connection is closed at once (CONNECTION_CLOSE sent); resolves after a
   * connection attempt in progress has settled.
   */
  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      if (this.backoffTimer) clearTimeout(this.backoffTimer);
      const error = this.err("closed", "sender closed");
      for (const call of this.queue.splice(0)) this.fail(call, error, StreamCode.SHUTDOWN);
      const conn = this.conn;
      this.conn = undefined;
      if (conn) this.dropConnection(conn, error);
    }
    if (this.connecting) await this.connecting.catch(() => {});
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    if (this.finTimer) clearTimeout(this.finTimer);
    this.finTimer = undefined;
    this.finWaits = [];
  }

  /** (Re)arms the shared deadline timer for `at` (a `performance.now()` time). */
  private armDeadline(at: number): void {
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.deadlineAt = at;
    this.deadlineTimer = setTimeout(() => this.sweepDeadlines(), Math.max(0, at - performance.now()));
    // It may outlive every call (it is not cleared when the earliest call settles): it must not
    // keep the process alive on its own. Open connections do that while calls are pending.
    this.deadlineTimer.unref();
  }

  /** Fails every call whose deadline passed and re-arms the timer for the earliest remaining one. */
  private sweepDeadlines(): void {
    this.deadlineTimer = undefined;
    this.deadlineAt = Infinity;
    const now = performance.now();
    const expired: Call[] = [];
    let next = Infinity;
    for (const call of this.pending) {
      if (call.deadline <= now + 1) expired.push(call);
      else if (call.deadline < next) next = call.deadline;
    }
    for (const call of expired) {
      const conn = call.conn;
      this.fail(call, this.err("timeout", `no response within ${call.timeoutMs} ms`), StreamCode.TIMEOUT);
      if (conn && !conn.dead) this.checkLiveness(conn, now);
    }
    if (next !== Infinity && this.pending.size > 0) this.armDeadline(Math.max(next, now + DEADLINE_SLACK_MS));
  }

  /**
   * Called when a call on `conn` hit its deadline: if quiche received no packet at all (not
   * even the ACK of a keep-alive PING) for longer than the keep-alive interval, the peer is
   * gone, so the connection is dropped now rather than at the idle timeout.
   */
  private checkLiveness(conn: Conn, now: number): void {
    if (conn.dead) return;
    const silent = conn.recvWatch.silentFor(conn.qc.packetsReceived, now);
    if (silent > this.opts.keepAliveMs) {
      this.onConnectionLost(conn, this.err("closed", `connection lost: no packet received for ${Math.round(silent)} ms`));
    }
  }

  // ------------------------------------------------------------------------------------------

  private err(kind: SenderErrorKind, detail: string, cause?: unknown): SenderError {
    const text =
      kind === "connect" ? `orchestrator ${this.address} unreachable: ${detail}` : `orchestrator ${this.address}: ${detail}`;
    return new SenderError(kind, text, cause === undefined ? undefined : { cause });
  }

  /**
   * A failed TLS handshake: the orchestrator was reached, so the message names the certificate
   * problem (RFC 8446 alert) instead of calling it unreachable. Kind stays `connect`.
   */
  private tlsErr(info: CloseInfo, cause?: unknown): SenderError {
    return new SenderError(
      "connect",
      `orchestrator ${this.address}: TLS handshake failed: ${describeTlsClose(info, this.opts.serverName)}`,
      cause === undefined ? undefined : { cause },
    );
  }

  /** Starts as many queued calls as the connection, the local cap and the peer's credit allow. */
  private pump(): void {
    if (this.closed) return;
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      if (head.settled) {
        this.queue.shift();
        continue;
      }
      const conn = this.conn;
      if (!conn) {
        this.connect();
        return;
      }
      if (this.active >= this.opts.maxConcurrentStreams) return;
      // No credit: the engine calls onStreamCredit (→ pump) once MAX_STREAMS raises the limit.
      const stream = conn.qc.tryOpenStream();
      if (stream === undefined) return;
      this.queue.shift();
      this.start(head, conn, stream);
    }
  }

  /**
   * Opens a connection for the queued calls, no sooner than the backoff allows after failed
   * attempts (`reconnectMinMs` doubling up to `reconnectMaxMs`; reset by a success).
   */
  private connect(): void {
    if (this.connecting || this.closed) return;
    const wait = this.nextConnectAt - performance.now();
    const delayed: Promise<void> =
      wait > 0
        ? new Promise<void>((resolve) => {
            this.backoffTimer = setTimeout(() => {
              this.backoffTimer = undefined;
              resolve();
            }, wait);
          })
        : Promise.resolve();
    const attempt = delayed
      .then(() => {
        if (this.closed) throw this.err("closed", "sender closed");
        return this.openConnection();
      })
      .then(
        (conn) => {
          this.connecting = undefined;
          this.connectFailures = 0;
          this.nextConnectAt = 0;
          if (this.closed) {
            this.dropConnection(conn, this.err("closed", "sender closed"));
            return;
          }
          this.conn = conn;
          this.pump();
        },
        (e: unknown) => {
          this.connecting = undefined;
          const error = e instanceof SenderError ? e : this.classify(e, "connect");
          if (!this.closed) {
            const backoff = Math.min(this.opts.reconnectMaxMs, this.opts.reconnectMinMs * 2 ** Math.min(this.connectFailures, 30));
            this.connectFailures++;
            this.nextConnectAt = performance.now() + backoff;
            this.log.warn({ address: this.address, err: error.message, retryInMs: backoff }, "QUIC connect failed");
          }
          for (const call of this.queue.splice(0)) this.fail(call, error, StreamCode.NONE);
        },
      );
    this.connecting = attempt;
  }

  private async openConnection(): Promise<Conn> {
    if (!this.tlsP) {
      const { tls, certsDir, certName } = this.opts;
      this.tlsP = tls ? Promise.resolve(tls) : ensureCertStore(certsDir, certName);
      this.tlsP.catch(() => {
        this.tlsP = undefined; // retry reading the store next time
      });
    }
    let material: TlsMaterial;
    try {
      material = await this.tlsP;
    } catch (e) {
      throw this.err("connect", `cannot load TLS material: ${msg(e)}`, e);
    }
    let qc: QuicConnection;
    try {
      // Every address of the name, happy-eyeballs style (src/quic/dial.ts).
      qc = await dialQuic({
        host: this.opts.host,
        port: this.opts.port,
        serverName: this.opts.serverName,
        tls: material,
        alpn: [ALPN],
        idleTimeoutMs: this.opts.idleTimeoutMs,
        keepAliveMs: this.opts.keepAliveMs,
        connectTimeoutMs: this.opts.connectTimeoutMs,
        maxStreamsBidi: 0, // the protocol has no server-initiated streams
        ...(this.opts.udpPayloadBytes !== undefined ? { udpPayloadBytes: this.opts.udpPayloadBytes } : {}),
        ...(this.opts.resolver ? { resolver: this.opts.resolver } : {}),
      });
    } catch (e) {
      if (e instanceof ResolveError) throw this.err("connect", e.message, e);
      throw this.classify(e, "connect");
    }
    const conn: Conn = { qc, inflight: new Set(), dead: false, recvWatch: new ReceiveWatch() };
    qc.onClose = (info) => this.onConnectionLost(conn, info);
    qc.onStreamCredit = () => this.pump();
    return conn;
  }

  private onConnectionLost(conn: Conn, cause: CloseInfo | SenderError): void {
    if (conn.dead) return;
    const error = cause instanceof SenderError ? cause : this.classifyClose(cause);
    this.log.warn({ address: this.address, err: error.message }, "QUIC connection lost");
    if (this.conn === conn) this.conn = undefined;
    this.dropConnection(conn, error);
    this.pump();
  }

  /** Marks `conn` dead, rejects its calls with `error` and closes the connection (CONNECTION_CLOSE). */
  private dropConnection(conn: Conn, error: SenderError): void {
    if (conn.dead) return;
    conn.dead = true;
    for (const call of [...conn.inflight]) this.fail(call, error, StreamCode.SHUTDOWN);
    conn.qc.onClose = undefined;
    conn.qc.onStreamCredit = undefined;
    conn.qc.close(0, "");
  }

  private start(call: Call, conn: Conn, stream: QuicStream): void {
    this.active++;
    call.conn = conn;
    call.stream = stream;
    conn.inflight.add(call);
    stream.onFrame = (payload) => {
      if (stream.framesRead > 1) {
        // More than one response frame: protocol violation by the server.
        this.log.warn({ address: this.address }, "bytes after the response frame ignored");
        stream.reset(StreamCode.MALFORMED);
        return;
      }
      this.onResponse(call, stream, payload);
    };
    stream.onReadEnd = (error) => {
      if (call.settled) return;
      if (error) this.fail(call, this.classify(error, "protocol"), StreamCode.MALFORMED);
      else this.fail(call, this.classify(new FrameEmptyStreamError(), "protocol"), StreamCode.MALFORMED);
    };
    stream.onWriteError = (error) => {
      if (!call.settled) this.fail(call, this.classify(error, "protocol"), StreamCode.INTERNAL);
    };
    try {
      stream.writeFrame(call.payload, true);
    } catch (e) {
      this.fail(call, this.classify(e, "protocol"), StreamCode.INTERNAL);
    }
  }

  private onResponse(call: Call, stream: QuicStream, payload: Uint8Array): void {
    if (call.settled) return;
    let response: PluginResponse;
    try {
      response = fromBinary(PluginResponseSchema, payload, PAYLOAD_READ_OPTIONS);
    } catch (e) {
      this.fail(call, this.err("frame", `undecodable PluginResponse: ${msg(e)}`, e), StreamCode.MALFORMED);
      return;
    }
    if (response.requestId !== "" && call.requestId !== "" && response.requestId !== call.requestId) {
      this.fail(
        call,
        this.err(
          "protocol",
          `response request_id ${JSON.stringify(response.requestId)} does not match ${JSON.stringify(call.requestId)}`,
        ),
        StreamCode.MALFORMED,
      );
      return;
    }
    this.settle(call);
    call.resolve(response);
    if (!stream.readFinished) this.awaitFin(stream);
  }

  /**
   * After a complete response, give the server's FIN a short grace period, then reset the
   * stream so its state is released even if the FIN never comes.
   */
  private awaitFin(stream: QuicStream): void {
    this.finWaits.push({ stream, deadline: performance.now() + this.opts.finGraceMs });
    if (!this.finTimer) this.armFinTimer(this.opts.finGraceMs);
  }

  private armFinTimer(ms: number): void {
    this.finTimer = setTimeout(() => this.sweepFinWaits(), ms);
    this.finTimer.unref();
  }

  /** Resets the streams whose FIN grace period ended (they are in deadline order). */
  private sweepFinWaits(): void {
    this.finTimer = undefined;
    const now = performance.now();
    const waits = this.finWaits;
    let i = 0;
    while (i < waits.length && (waits[i]!.stream.readFinished || waits[i]!.deadline <= now + 1)) {
      const w = waits[i]!;
      if (!w.stream.readFinished) w.stream.reset(StreamCode.NONE);
      i++;
    }
    this.finWaits = i === waits.length ? [] : waits.slice(i);
    const head = this.finWaits[0];
    if (head) this.armFinTimer(Math.max(DEADLINE_SLACK_MS, head.deadline - now));
  }

  private settle(call: Call): void {
    call.settled = true;
    this.pending.delete(call);
    if (call.onAbort) call.signal!.removeEventListener("abort", call.onAbort);
    if (call.conn) {
      call.conn.inflight.delete(call);
      this.active--;
      call.conn = undefined;
      this.pump();
    }
  }

  /** Rejects `call` once; cancels its stream (with `code`) if one is open. */
  private fail(call: Call, error: SenderError, code: StreamCode): void {
    if (call.settled) return;
    const stream = call.stream;
    if (!call.conn) {
      const i = this.queue.indexOf(call);
      if (i >= 0) this.queue.splice(i, 1);
    }
    this.settle(call);
    if (stream) stream.reset(code);
    call.reject(error);
  }

  /** Maps any engine/transport error to a {@link SenderError} naming the address. */
  private classify(e: unknown, fallback: SenderErrorKind): SenderError {
    if (e instanceof SenderError) return e;
    if (e instanceof FrameTooLargeError) {
      return this.err("frame", `response frame of ${e.length} bytes exceeds the ${e.max}-byte limit`, e);
    }
    if (e instanceof FrameError) return this.err("frame", `malformed response: ${e.message}`, e);
    if (e instanceof PeerResetError) return this.classify(new StreamResetByPeer("read", e.code), fallback);
    if (e instanceof PeerStopError) return this.classify(new StreamResetByPeer("write", e.code), fallback);
    if (e instanceof StreamResetByPeer) {
      switch (e.code) {
        case StreamCode.FRAME_TOO_LARGE:
        case StreamCode.MALFORMED:
          return this.err("frame", `server rejected the request frame: ${streamCodeName(e.code)}`, e);
        case StreamCode.SHUTDOWN:
          return this.err("closed", "server is shutting down", e);
        case StreamCode.UNSUPPORTED:
          return this.err("protocol", "server does not support this request kind (stream reset, code 5)", e);
        default:
          return this.err("protocol", `server ${e.message}`, e);
      }
    }
    if (e instanceof QuicConnectError) {
      switch (e.reason) {
        case "timeout":
          return this.err("connect", `no QUIC handshake within ${this.opts.connectTimeoutMs} ms`, e);
        case "tls-local":
        case "tls-peer":
          if (e.close?.tls) return this.tlsErr(e.close, e);
          return this.err("connect", `TLS handshake failed: ${e.message}`, e);
        default:
          return this.err("connect", e.message, e);
      }
    }
    if (e instanceof ConnectionClosedError) return this.classifyClose(e.info);
    return this.err(fallback, msg(e), e);
  }

  /** Maps the end of a connection to the error its calls reject with. */
  private classifyClose(info: CloseInfo): SenderError {
    if (info.kind === "idle-timeout") {
      return this.err("closed", `connection timed out (no packets for ${this.opts.idleTimeoutMs} ms)`);
    }
    if (info.tls) return this.tlsErr(info);
    return this.err("closed", `connection lost: ${describeClose(info)}`);
  }
}

function msg(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
