/**
 * Streaming RPCs over QUIC (orchestra-protocol.md, "Framing and RPC shape": `stream_start` →
 * N × `stream_chunk` + `stream_end`; `subscribe` → `event_delivery` frames), for the bridge's
 * progress notifications and tool-change watch (see ./streaming.ts).
 *
 * {@link QuicStreamClient} keeps its own QUIC connection (opened on the first streaming call,
 * reopened after a loss) on the project's QUIC engine (src/quic/engine), with the same TLS
 * material and defences as the unary `QuicSender`:
 * - the request frame and the FIN go to quiche in one `stream_send` call (quic-notes fault 1);
 * - after the completing frame the server's FIN gets a short grace, then the stream is reset
 *   so its state is released even if the FIN never comes;
 * - idle timeout + keep-alive always set (the same values as the unary sender: `serve` passes
 *   `--idle-timeout` to both), connecting runs under a deadline (fault 3);
 * - connection loss (idle timeout, close from the peer, or a call deadline expiring while no
 *   packet at all arrived for longer than the keep-alive interval — the sender's liveness check)
 *   fails every call on the connection at once, is logged at warn level, and drops the
 *   connection; the next call reconnects;
 * - a `subscribe` that was established and then lost (connection loss, server ending it) is
 *   re-established by the caller's retry; the first frame of the new subscription is then a
 *   synthetic `event_delivery` with event type {@link RESUBSCRIBED_EVENT_TYPE}, because events
 *   published during the gap were missed (the bridge turns it into one
 *   `notifications/tools/list_changed`);
 * - at the orchestrator's stream limit, new streams wait in the engine's FIFO (fault 2).
 * Cancelling (abort signal, deadline) resets the stream, which the orchestrator treats as
 * `stream_cancel` / unsubscribe. A reset with code "unsupported" (5) from the server, or a first
 * frame that refuses the request kind ({@link refusalOf}: `unknown_request`, an empty
 * `PluginResponse`), becomes {@link StreamUnsupportedError}; the kind is then remembered as
 * refused for the rest of the connection, and further calls of it fail at once with that error,
 * without a stream. A new connection (after a loss) asks again.
 *
 * {@link withStreaming} combines a unary {@link Sender} with this client into one
 * {@link StreamingSender}.
 */
import { performance } from "node:perf_hooks";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { PluginRequestSchema, PluginResponseSchema, type PluginRequest, type PluginResponse } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { defaultKeepAliveMs, QUIC_SENDER_DEFAULTS, ReceiveWatch } from "../quic/quic-sender.js";
import { childLogger, type Logger } from "../log.js";
import { BRIDGE_CERT_NAME, defaultCertsDir, ensureCertStore, type TlsMaterial } from "../pki/store.js";
import { FrameError, FrameTooLargeError, MAX_FRAME_BYTES, PAYLOAD_READ_OPTIONS } from "../quic/frame.js";
import { ALPN, FrameEmptyStreamError, StreamCode, StreamResetByPeer } from "../quic/quic-common.js";
import {
  ConnectionClosedError,
  describeClose,
  PeerResetError,
  PeerStopError,
  QuicConnectError,
  type CloseInfo,
  type QuicConnection,
  type QuicStream,
} from "../quic/engine/index.js";
import { formatHostPort, ResolveError } from "../quic/address.js";
import { dialQuic } from "../quic/dial.js";
import { SenderError, type SendOptions, type Sender } from "../quic/sender.js";
import { RefusedKinds, refusalOf, StreamUnsupportedError, type FrameHandler, type StreamingSender } from "./streaming.js";

/** Options of {@link QuicStreamClient}; the same meaning as `QuicSenderOptions`. */
export interface QuicStreamClientOptions {
  host: string;
  port: number;
  certsDir?: string;
  certName?: string;
  tls?: TlsMaterial;
  serverName?: string;
  /** QUIC max idle timeout, ms (default 15 000, as `QuicSender`). */
  idleTimeoutMs?: number;
  /** Keep-alive interval, ms (default min(5 000, idle/3), as `QuicSender`; below the idle timeout). */
  keepAliveMs?: number;
  /** Deadline for connecting, ms (default 5 000). */
  connectTimeoutMs?: number;
  /** How long to wait for the server's FIN after the completing frame, ms (default 2 000). */
  finGraceMs?: number;
  udpPayloadBytes?: number;
  logger?: Logger;
}

/**
 * Event type of the synthetic `event_delivery` that starts a subscription re-established after
 * the previous one to the same topic was lost (events during the gap may have been missed).
 */
export const RESUBSCRIBED_EVENT_TYPE = "orchestra-stdio.resubscribed";

interface Conn {
  qc: QuicConnection;
  dead: boolean;
  /** Fails every call on this connection (connection lost). */
  calls: Set<(error: SenderError) => void>;
  /** The liveness check's samples of quiche's received-packet count (taken at call deadlines). */
  recvWatch: ReceiveWatch;
  /** Request kinds the orchestrator on this connection does not implement. */
  refused: RefusedKinds;
}

/** A QUIC client for multi-frame Orchestra RPCs. */
export class QuicStreamClient {
  readonly address: string;
  private readonly log: Logger;
  private tlsP: Promise<TlsMaterial> | undefined;
  private conn: Conn | undefined;
  private connecting: Promise<Conn> | undefined;
  private closed = false;
  private readonly idleTimeoutMs: number;
  private readonly keepAliveMs: number;
  /** Topics whose established subscription was lost: the next one to it starts with a resync event. */
  private readonly lostTopics = new Set<string>();

  constructor(private readonly opts: QuicStreamClientOptions) {
    this.address = formatHostPort(opts.host, opts.port);
    this.log = opts.logger ?? childLogger("quic-streams");
    const idle = opts.idleTimeoutMs ?? QUIC_SENDER_DEFAULTS.idleTimeoutMs;
    const keepAlive = opts.keepAliveMs ?? defaultKeepAliveMs(idle);
    if (!(idle > 0 && Number.isFinite(idle))) throw new RangeError(`idleTimeoutMs must be a positive number, got ${String(idle)}`);
    if (!(keepAlive > 0 && keepAlive < idle)) throw new RangeError(`keepAliveMs (${keepAlive}) must be positive and below idleTimeoutMs (${idle})`);
    this.idleTimeoutMs = idle;
    this.keepAliveMs = keepAlive;
  }

  /** See {@link StreamingSender.stream}. */
  async stream(request: PluginRequest, onFrame: FrameHandler, options: SendOptions = {}): Promise<void> {
    if (this.closed) throw this.err("closed", "stream client is closed");
    if (options.signal?.aborted) throw this.err("aborted", "call aborted before it was sent");
    let payload: Uint8Array;
    try {
      payload = toBinary(PluginRequestSchema, request);
    } catch (e) {
      throw this.err("frame", `cannot encode PluginRequest: ${msg(e)}`, e);
    }
    if (payload.byteLength > MAX_FRAME_BYTES) throw this.err("frame", `request frame of ${payload.byteLength} bytes exceeds the ${MAX_FRAME_BYTES}-byte limit`);
    const conn = await this.connection();
    if (options.signal?.aborted) throw this.err("aborted", "call aborted");
    const kind = request.request.case;
    const refused = conn.refused.reason(kind);
    if (refused !== undefined) throw new StreamUnsupportedError(`orchestrator ${this.address}: ${refused} (earlier on this connection)`);
    const sub = request.request.case === "subscribe" ? request.request.value : undefined;
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      let stream: QuicStream | undefined;
      /** A subscription whose request went out on a connection (it may be lost later). */
      let subscribed = false;
      const signal = options.signal;
      const finish = (error: SenderError | Error | undefined, code: StreamCode = StreamCode.CANCELLED): void => {
        if (settled) return;
        settled = true;
        if (timer) clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        conn.calls.delete(onLost);
        const unsupported = error instanceof StreamUnsupportedError;
        if (unsupported) conn.refused.add(kind, error.message);
        // Lost (not ended by the caller): the caller's next subscription to the topic resyncs.
        if (sub && subscribed && !unsupported && !signal?.aborted && !this.closed) this.lostTopics.add(sub.topic);
        if (error) {
          stream?.reset(code);
          reject(error);
        } else {
          resolve();
          if (stream && !stream.readFinished) this.awaitFin(stream);
        }
      };
      const onAbort = (): void => finish(this.err("aborted", "call aborted", signal?.reason), StreamCode.CANCELLED);
      const onLost = (error: SenderError): void => finish(error, StreamCode.SHUTDOWN);
      signal?.addEventListener("abort", onAbort, { once: true });
      conn.calls.add(onLost);
      if (options.timeoutMs && options.timeoutMs > 0) {
        const ms = Math.min(options.timeoutMs, 2_147_483_647);
        timer = setTimeout(() => {
          finish(this.err("timeout", `no end of stream within ${ms} ms`), StreamCode.TIMEOUT);
          this.checkLiveness(conn);
        }, ms);
      }
      const deliver = (response: PluginResponse): void => {
        if (settled) return;
        let complete: boolean | void;
        try {
          complete = onFrame(response);
        } catch (e) {
          finish(e instanceof Error ? e : new Error(String(e)), StreamCode.CANCELLED);
          return;
        }
        if (complete) finish(undefined);
      };
      // Waits (FIFO) while the orchestrator's stream limit is reached.
      conn.qc.openStream((s, error) => {
        if (!s) {
          finish(this.classify(error));
          return;
        }
        if (settled) {
          s.reset(StreamCode.CANCELLED);
          return;
        }
        stream = s;
        s.onFrame = (frame) => {
          if (settled) return;
          let response: PluginResponse;
          try {
            response = fromBinary(PluginResponseSchema, frame, PAYLOAD_READ_OPTIONS);
          } catch (e) {
            finish(this.err("frame", `undecodable PluginResponse: ${msg(e)}`, e), StreamCode.MALFORMED);
            return;
          }
          const refusal = s.framesRead === 1 ? refusalOf(request, response) : undefined;
          if (refusal !== undefined) {
            finish(new StreamUnsupportedError(`orchestrator ${this.address}: ${refusal}`), StreamCode.NONE);
            return;
          }
          deliver(response);
        };
        s.onReadEnd = (e) => {
          if (settled) return;
          if (e) finish(this.classify(e), StreamCode.MALFORMED);
          else finish(s.framesRead === 0 ? this.classify(new FrameEmptyStreamError()) : undefined);
        };
        s.onWriteError = (e) => finish(this.classify(e), StreamCode.INTERNAL);
        try {
          s.writeFrame(payload, true);
        } catch (e) {
          finish(this.classify(e), StreamCode.INTERNAL);
          return;
        }
        if (sub && !settled) {
          subscribed = true;
          if (this.lostTopics.delete(sub.topic)) {
            this.log.debug({ address: this.address, topic: sub.topic }, "subscription re-established after a loss");
            deliver(
              create(PluginResponseSchema, {
                requestId: request.requestId,
                response: {
                  case: "eventDelivery",
                  value: { subscriptionId: sub.subscriptionId, topic: sub.topic, eventType: RESUBSCRIBED_EVENT_TYPE },
                },
              }),
            );
          }
        }
      });
    });
  }

  /** Closes the connection; calls in flight reject with `SenderError('closed')`. Idempotent. */
  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      const conn = this.conn;
      this.conn = undefined;
      if (conn) this.drop(conn, this.err("closed", "stream client closed"));
    }
    if (this.connecting) await this.connecting.then((c) => this.drop(c, this.err("closed", "stream client closed")), () => {});
  }

  // ------------------------------------------------------------------------------------------

  private err(kind: SenderError["kind"], detail: string, cause?: unknown): SenderError {
    const text = kind === "connect" ? `orchestrator ${this.address} unreachable: ${detail}` : `orchestrator ${this.address}: ${detail}`;
    return new SenderError(kind, text, cause === undefined ? undefined : { cause });
  }

  private classify(e: unknown): SenderError {
    if (e instanceof SenderError) return e;
    if (e instanceof PeerResetError) return this.classify(new StreamResetByPeer("read", e.code));
    if (e instanceof PeerStopError) return this.classify(new StreamResetByPeer("write", e.code));
    if (e instanceof ConnectionClosedError) return this.classifyClose(e.info);
    if (e instanceof StreamResetByPeer) {
      if (e.code === StreamCode.UNSUPPORTED) {
        return new StreamUnsupportedError(`orchestrator ${this.address}: does not serve this request kind (stream reset, code 5)`, { cause: e });
      }
      if (e.code === StreamCode.SHUTDOWN) return this.err("closed", "server is shutting down", e);
      return this.err("protocol", `server ${e.message}`, e);
    }
    if (e instanceof FrameTooLargeError) return this.err("frame", `response frame of ${e.length} bytes exceeds the ${e.max}-byte limit`, e);
    if (e instanceof FrameError) return this.err("frame", `malformed response: ${e.message}`, e);
    return this.err("closed", msg(e), e);
  }

  /** Maps the end of a connection to the error its calls reject with (as `QuicSender`). */
  private classifyClose(info: CloseInfo): SenderError {
    if (info.kind === "idle-timeout") return this.err("closed", `connection timed out (no packets for ${this.idleTimeoutMs} ms)`);
    return this.err("closed", `connection lost: ${describeClose(info)}`);
  }

  /**
   * The sender's liveness check, run when a call on `conn` hit its deadline: if quiche received
   * no packet at all (not even the ACK of a keep-alive PING) for longer than the keep-alive
   * interval, the peer is gone, so the connection is dropped now rather than at the idle timeout.
   */
  private checkLiveness(conn: Conn): void {
    if (conn.dead) return;
    const now = performance.now();
    const silent = conn.recvWatch.silentFor(conn.qc.packetsReceived, now);
    if (silent > this.keepAliveMs) {
      this.lost(conn, this.err("closed", `connection lost: no packet received for ${Math.round(silent)} ms`));
    }
  }

  /** The connection ended without our asking: log it, fail its calls, drop it. */
  private lost(conn: Conn, error: SenderError): void {
    if (conn.dead) return;
    this.log.warn({ address: this.address, err: error.message }, "QUIC streaming connection lost");
    this.drop(conn, error);
  }

  /** Gives the server's FIN a grace period after the completing frame, then resets the stream. */
  private awaitFin(stream: QuicStream): void {
    const timer = setTimeout(() => {
      if (!stream.readFinished) stream.reset(StreamCode.NONE);
    }, this.opts.finGraceMs ?? 2_000);
    timer.unref();
    stream.onFrame = () => stream.reset(StreamCode.NONE); // nothing may follow the completing frame
    stream.onReadEnd = () => clearTimeout(timer);
  }

  private connection(): Promise<Conn> {
    if (this.conn && !this.conn.dead) return Promise.resolve(this.conn);
    this.connecting ??= this.open().then(
      (conn) => {
        this.connecting = undefined;
        if (this.closed) {
          this.drop(conn, this.err("closed", "stream client closed"));
          throw this.err("closed", "stream client closed");
        }
        this.conn = conn;
        return conn;
      },
      (e: unknown) => {
        this.connecting = undefined;
        throw e instanceof SenderError ? e : this.err("connect", msg(e), e);
      },
    );
    return this.connecting;
  }

  private async open(): Promise<Conn> {
    if (!this.tlsP) {
      const { tls, certsDir, certName } = this.opts;
      this.tlsP = tls ? Promise.resolve(tls) : ensureCertStore(certsDir ?? defaultCertsDir(), certName ?? BRIDGE_CERT_NAME);
      this.tlsP.catch(() => {
        this.tlsP = undefined;
      });
    }
    let material: TlsMaterial;
    try {
      material = await this.tlsP;
    } catch (e) {
      throw this.err("connect", `cannot load TLS material: ${msg(e)}`, e);
    }
    const connectTimeoutMs = this.opts.connectTimeoutMs ?? 5_000;
    let qc: QuicConnection;
    try {
      // Every address of the name, happy-eyeballs style (src/quic/dial.ts).
      qc = await dialQuic({
        host: this.opts.host,
        port: this.opts.port,
        serverName: this.opts.serverName ?? "localhost",
        tls: material,
        alpn: [ALPN],
        idleTimeoutMs: this.idleTimeoutMs,
        keepAliveMs: this.keepAliveMs,
        connectTimeoutMs,
        maxStreamsBidi: 0, // the protocol has no server-initiated streams
        ...(this.opts.udpPayloadBytes !== undefined ? { udpPayloadBytes: this.opts.udpPayloadBytes } : {}),
      });
    } catch (e) {
      throw this.err("connect", e instanceof QuicConnectError || e instanceof ResolveError ? e.message : msg(e), e);
    }
    const conn: Conn = { qc, dead: false, calls: new Set(), recvWatch: new ReceiveWatch(), refused: new RefusedKinds() };
    qc.onClose = (info) => this.lost(conn, this.classifyClose(info));
    return conn;
  }

  private drop(conn: Conn, error: SenderError): void {
    if (conn.dead) return;
    conn.dead = true;
    if (this.conn === conn) this.conn = undefined;
    for (const fail of [...conn.calls]) fail(error);
    conn.qc.onClose = undefined;
    conn.qc.close(0, "");
  }
}

/**
 * One {@link StreamingSender} from a unary sender and a stream client (both to the same
 * orchestrator): `send` → `unary`, `stream` → `streams`, `close` closes both.
 */
export function withStreaming(unary: Sender, streams: Pick<QuicStreamClient, "stream" | "close">): StreamingSender {
  return {
    get address() {
      return unary.address;
    },
    send: (request, options) => unary.send(request, options),
    stream: (request, onFrame, options) => streams.stream(request, onFrame, options),
    close: async () => {
      await Promise.all([unary.close(), streams.close()]);
    },
  };
}

function msg(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
