/**
 * The QUIC {@link Link}: one bidirectional stream per call (orchestra-protocol.md, "Transport"
 * and "Framing and RPC shape") on the project's own QUIC engine (./engine, dialled through
 * ./dial.ts), and {@link QuicSender}, the {@link RpcClient} over it.
 *
 * Defences carried over from the faults measured in /work/shared/quic-notes.md:
 * - fault 1 (a lost FIN hangs a stream): the whole frame and the FIN go to quiche in one
 *   `stream_send` call; a call completes on its frames, and after the completing frame the
 *   server's FIN gets a short grace (`finGraceMs`, one timer per link), then the stream is reset
 *   so its state is released even if the FIN never comes;
 * - fault 2 (exceeding the peer's stream limit): streams are opened only while the peer grants
 *   credit (`tryOpenStream`); the client's queue waits for MAX_STREAMS (`onCredit`);
 * - fault 3 (silent hangs): an idle timeout and keep-alive are always set, connecting runs
 *   under a deadline, and the client's liveness check reads quiche's received-packet counter.
 *
 * Errors name the certificate problem from the TLS alert (RFC 8446 §6) when a handshake fails
 * or a connection closes with one; a stream reset with "unsupported" (5) becomes
 * {@link StreamUnsupportedError}.
 */
import type { PluginResponse } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { decodePluginResponse } from "../gen/proto/orchestra/plugin/v1/plugin_codec.js";
import { FrameError, FrameTooLargeError, PAYLOAD_CODEC_OPTIONS } from "../framing/frame.js";
import { childLogger, type Logger } from "../log.js";
import { messageOf, SenderError, StreamUnsupportedError, type SenderErrorKind } from "../transport/errors.js";
import type { CallEvents, CancelReason, Link, LinkCall, LinkDialer } from "../transport/link.js";
import { PeerDialer, type PeerOptions } from "../transport/material.js";
import { RpcClient } from "../transport/rpc-client.js";
import { ResolveError } from "./address.js";
import { dialQuic } from "./dial.js";
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
import { FramedStream } from "./framed-stream.js";
import { ALPN, StreamCode, streamCodeName, udpPayloadConfig } from "./quic-common.js";

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

/** Options of {@link QuicSender}. */
export interface QuicSenderOptions extends PeerOptions {
  /**
   * QUIC max idle timeout in ms (default 15 000; must be > 0). The connection (and every call
   * on it) fails once no packet arrived for this long; quiche uses the smaller of both peers'
   * values.
   */
  idleTimeoutMs?: number;
  /**
   * Keep-alive (PING) interval in ms (default: 5 000, or a third of {@link idleTimeoutMs} when
   * that is smaller; must be below {@link idleTimeoutMs}). Also the silence after which a call
   * deadline drops the connection (the client's liveness check).
   */
  keepAliveMs?: number;
  /** First delay before retrying after a failure, in ms (default 100; doubles per failure). */
  reconnectMinMs?: number;
  /** Largest delay between connection attempts, in ms (default 5 000). */
  reconnectMaxMs?: number;
  /** Deadline for connecting (UDP + TLS handshake), in ms (default 5 000). */
  connectTimeoutMs?: number;
  /** Per-call deadline of a unary call when `SendOptions.timeoutMs` is not given, ms (default 300 000). */
  callTimeoutMs?: number;
  /** Most RPC streams open at once (default 100); further calls queue. */
  maxConcurrentStreams?: number;
  /** How long to wait for the server's FIN after the completing frame before resetting the stream (ms, default 2 000). */
  finGraceMs?: number;
  /**
   * Largest UDP datagram payload to send, in bytes (1200..65527). Default: 16 KiB when the
   * orchestrator's address is loopback, else 1350 (quiche's default, safe on any path).
   */
  udpPayloadBytes?: number;
  /** Logger for warnings (default: the project's pino logger, component `quic-sender`). */
  logger?: Logger;
}

/** The stream code a {@link CancelReason} resets a stream with. */
const CANCEL_CODES: Record<CancelReason, StreamCode> = {
  cancelled: StreamCode.CANCELLED,
  timeout: StreamCode.TIMEOUT,
  malformed: StreamCode.MALFORMED,
  internal: StreamCode.INTERNAL,
  shutdown: StreamCode.SHUTDOWN,
  refused: StreamCode.NONE,
};

/**
 * The {@link RpcClient} over QUIC: connects on the first call (TLS 1.3, ALPN
 * `orchestra-plugin`, mutual TLS with the cert store's CA and this party's certificate; the
 * server must present a cert for `serverName`), every address of the host name in turn
 * (./dial.ts). Unary and streaming calls share the one connection, a stream each.
 */
export class QuicSender extends RpcClient {
  /**
   * @throws RangeError when a timeout/limit option is not a positive number,
   *   `keepAliveMs >= idleTimeoutMs`, the port is not 1..65535 or the UDP payload size is out of range
   */
  constructor(options: QuicSenderOptions) {
    const d = QUIC_SENDER_DEFAULTS;
    const idleTimeoutMs = options.idleTimeoutMs ?? d.idleTimeoutMs;
    const o = {
      idleTimeoutMs,
      keepAliveMs: options.keepAliveMs ?? defaultKeepAliveMs(idleTimeoutMs),
      reconnectMinMs: options.reconnectMinMs ?? d.reconnectMinMs,
      reconnectMaxMs: options.reconnectMaxMs ?? d.reconnectMaxMs,
      connectTimeoutMs: options.connectTimeoutMs ?? d.connectTimeoutMs,
      callTimeoutMs: options.callTimeoutMs ?? d.callTimeoutMs,
      maxConcurrentStreams: options.maxConcurrentStreams ?? d.maxConcurrentStreams,
      finGraceMs: options.finGraceMs ?? d.finGraceMs,
    };
    udpPayloadConfig(false, options.udpPayloadBytes); // validates
    for (const [key, v] of Object.entries(o)) {
      if (!(typeof v === "number" && v > 0 && Number.isFinite(v))) throw new RangeError(`QuicSender: ${key} must be a positive number, got ${String(v)}`);
    }
    if (o.keepAliveMs >= o.idleTimeoutMs) {
      throw new RangeError(`QuicSender: keepAliveMs (${o.keepAliveMs}) must be below idleTimeoutMs (${o.idleTimeoutMs})`);
    }
    if (!Number.isInteger(options.port) || options.port < 1 || options.port > 65535) {
      throw new RangeError(`QuicSender: port must be 1..65535, got ${String(options.port)}`);
    }
    const logger = options.logger ?? childLogger("quic-sender");
    super(new QuicDialer({ ...options, ...o }, logger), {
      callTimeoutMs: o.callTimeoutMs,
      reconnectMinMs: o.reconnectMinMs,
      reconnectMaxMs: o.reconnectMaxMs,
      maxConcurrentCalls: o.maxConcurrentStreams,
      livenessMs: o.keepAliveMs,
      logger,
    });
  }
}

type DialerOptions = QuicSenderOptions & Required<Pick<QuicSenderOptions, "idleTimeoutMs" | "keepAliveMs" | "connectTimeoutMs" | "finGraceMs">>;

/** Dials {@link QuicLink}s (see {@link QuicSender}). */
class QuicDialer extends PeerDialer implements LinkDialer {
  readonly name = "QUIC";
  readonly streams = true;

  constructor(
    private readonly opts: DialerOptions,
    private readonly log: Logger,
  ) {
    super(opts);
  }

  async dial(): Promise<Link> {
    const material = await this.material.load();
    const o = this.opts;
    let qc: QuicConnection;
    try {
      qc = await dialQuic({
        host: o.host,
        port: o.port,
        serverName: this.serverName,
        tls: material,
        alpn: [ALPN],
        idleTimeoutMs: o.idleTimeoutMs,
        keepAliveMs: o.keepAliveMs,
        connectTimeoutMs: o.connectTimeoutMs,
        maxStreamsBidi: 0, // the protocol has no server-initiated streams
        refusedStreamCode: StreamCode.UNSUPPORTED,
        ...(o.udpPayloadBytes !== undefined ? { udpPayloadBytes: o.udpPayloadBytes } : {}),
        ...(o.resolver ? { resolver: o.resolver } : {}),
      });
    } catch (e) {
      if (e instanceof ResolveError) throw this.err("connect", e.message, e);
      throw this.classify(e, "connect");
    }
    return new QuicLink(qc, this);
  }

  warn(message: string): void {
    this.log.warn({ address: this.address }, message);
  }

  get finGraceMs(): number {
    return this.opts.finGraceMs;
  }

  /**
   * A failed TLS handshake: the orchestrator was reached, so the message names the certificate
   * problem (RFC 8446 alert) instead of calling it unreachable. Kind stays `connect`.
   */
  private tlsErr(info: CloseInfo, cause?: unknown): SenderError {
    const detail = `orchestrator ${this.address}: TLS handshake failed: ${describeTlsClose(info, this.serverName)}`;
    return new SenderError("connect", detail, cause === undefined ? undefined : { cause });
  }

  /** Maps any engine error to a {@link SenderError} naming the address. */
  classify(e: unknown, fallback: SenderErrorKind): SenderError {
    if (e instanceof SenderError) return e;
    if (e instanceof FrameTooLargeError) return this.err("frame", `response frame of ${e.length} bytes exceeds the ${e.max}-byte limit`, e);
    if (e instanceof FrameError) return this.err("frame", `malformed response: ${e.message}`, e);
    if (e instanceof PeerResetError || e instanceof PeerStopError) {
      const code = e.code;
      switch (code) {
        case StreamCode.FRAME_TOO_LARGE:
        case StreamCode.MALFORMED:
          return this.err("frame", `server rejected the request frame: ${streamCodeName(code)}`, e);
        case StreamCode.SHUTDOWN:
          return this.err("closed", "server is shutting down", e);
        case StreamCode.UNSUPPORTED:
          return new StreamUnsupportedError(`orchestrator ${this.address}: server does not support this request kind (stream reset, code 5)`, { cause: e });
        default: {
          const what = e instanceof PeerResetError ? "reset" : "stopped";
          return this.err("protocol", `server peer ${what} the stream: ${streamCodeName(code)} (code ${code})`, e);
        }
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
    return this.err(fallback, messageOf(e), e);
  }

  /** Maps the end of a connection to the error its calls reject with. */
  classifyClose(info: CloseInfo): SenderError {
    if (info.kind === "idle-timeout") return this.err("closed", `connection timed out (no packets for ${this.opts.idleTimeoutMs} ms)`);
    if (info.tls) return this.tlsErr(info);
    return this.err("closed", `connection lost: ${describeClose(info)}`);
  }
}

/** Deadline checks of the FIN waits run at most this often (ms). */
const FIN_SLACK_MS = 10;

/** One QUIC connection as a {@link Link}. */
class QuicLink implements Link {
  onCredit: (() => void) | undefined = undefined;
  onDown: ((error: SenderError) => void) | undefined = undefined;
  /**
   * Streams whose call is complete and whose FIN is awaited, each with its deadline
   * (performance.now() ms), in deadline order (all share `finGraceMs`; a Map iterates in
   * insertion order), and their shared timer. A FIN that arrives removes its stream at once
   * ({@link finArrived}), so the link holds no stream beyond its call.
   */
  private finWaits = new Map<QuicStream, number>();
  private finTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly qc: QuicConnection,
    readonly dialer: QuicDialer,
  ) {
    qc.onClose = (info) => this.onDown?.(dialer.classifyClose(info));
    qc.onStreamCredit = () => this.onCredit?.();
  }

  get packetsReceived(): number {
    return this.qc.packetsReceived;
  }

  open(_requestId: string, _multiFrame: boolean, events: CallEvents): LinkCall | undefined {
    const stream = this.qc.tryOpenStream();
    return stream && new QuicCall(new FramedStream(stream), events, this);
  }

  close(): Promise<void> {
    this.qc.onClose = undefined;
    this.qc.onStreamCredit = undefined;
    this.qc.close(0, "");
    if (this.finTimer) clearTimeout(this.finTimer);
    this.finTimer = undefined;
    this.finWaits.clear();
    return Promise.resolve();
  }

  /** Gives the server's FIN a grace period after the completing frame, then resets the stream. */
  awaitFin(stream: QuicStream): void {
    const grace = this.dialer.finGraceMs;
    this.finWaits.set(stream, performance.now() + grace);
    if (!this.finTimer) this.armFinTimer(grace);
  }

  /** The read side of a stream given to {@link awaitFin} ended: it is no longer waited for. */
  finArrived(stream: QuicStream): void {
    this.finWaits.delete(stream);
  }

  private armFinTimer(ms: number): void {
    this.finTimer = setTimeout(() => this.sweepFinWaits(), ms);
    this.finTimer.unref();
  }

  /** Resets the streams whose FIN grace period ended (they are in deadline order). */
  private sweepFinWaits(): void {
    this.finTimer = undefined;
    const now = performance.now();
    for (const [stream, deadline] of this.finWaits) {
      if (!stream.readFinished && deadline > now + 1) {
        this.armFinTimer(Math.max(FIN_SLACK_MS, deadline - now));
        return;
      }
      if (!stream.readFinished) stream.reset(StreamCode.NONE);
      this.finWaits.delete(stream);
    }
  }
}

/** One call on its own bidirectional stream. */
class QuicCall implements LinkCall {
  private released = false;

  constructor(
    private readonly stream: FramedStream,
    events: CallEvents,
    private readonly link: QuicLink,
  ) {
    const dialer = link.dialer;
    stream.onFrame = (payload) => {
      if (this.released) {
        // Nothing may follow the completing frame: protocol violation by the server.
        dialer.warn("bytes after the response frame ignored");
        stream.reset(StreamCode.MALFORMED);
        return;
      }
      let response: PluginResponse;
      try {
        response = decodePluginResponse(payload, PAYLOAD_CODEC_OPTIONS);
      } catch (e) {
        events.end(dialer.err("frame", `undecodable PluginResponse: ${messageOf(e)}`, e), "malformed");
        return;
      }
      events.frame(response);
    };
    stream.onReadEnd = (error) => {
      if (!this.released) events.end(error ? dialer.classify(error, "protocol") : undefined, "malformed");
      else link.finArrived(stream.stream);
    };
    stream.onWriteError = (error) => {
      if (!this.released) events.end(dialer.classify(error, "protocol"), "internal");
    };
  }

  write(payload: Uint8Array): void {
    try {
      this.stream.writeFrame(payload, true);
    } catch (e) {
      throw this.link.dialer.classify(e, "protocol");
    }
  }

  cancel(reason: CancelReason): void {
    this.released = true;
    this.stream.reset(CANCEL_CODES[reason]);
  }

  release(): void {
    this.released = true;
    if (!this.stream.readFinished) this.link.awaitFin(this.stream.stream);
  }
}
