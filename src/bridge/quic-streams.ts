/**
 * Streaming RPCs over QUIC (orchestra-protocol.md, "Framing and RPC shape": `stream_start` →
 * N × `stream_chunk` + `stream_end`; `subscribe` → `event_delivery` frames), for the bridge's
 * progress notifications and tool-change watch (see ./streaming.ts).
 *
 * {@link QuicStreamClient} keeps its own QUIC connection (opened on the first streaming call,
 * reopened after a loss) with the same TLS material and defences as the unary `QuicSender`:
 * - the request frame and the FIN are written in one event-loop turn (quic-notes fault 1);
 * - after the completing frame the server's FIN gets a short grace, then the stream is
 *   cancelled so its state is released even if the FIN was lost;
 * - idle timeout + keep-alive always set, connecting runs under a timer (fault 3).
 * Cancelling (abort signal, deadline) resets the stream, which the orchestrator treats as
 * `stream_cancel` / unsubscribe. A reset with code "unsupported" (5) from the server becomes
 * {@link StreamUnsupportedError}.
 * Streaming calls are few (one subscription per session, progress-reporting tool calls), so no
 * stream-credit queue is kept: the orchestrator grants far more streams than this uses.
 *
 * {@link withStreaming} combines a unary {@link Sender} with this client into one
 * {@link StreamingSender}.
 */
import { lookup } from "node:dns/promises";
import net from "node:net";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { QUICClient } from "@matrixai/quic";
import type { QUICStream } from "@matrixai/quic";
import { PluginRequestSchema, PluginResponseSchema, type PluginRequest } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { childLogger, type Logger } from "../log.js";
import { BRIDGE_CERT_NAME, defaultCertsDir, ensureCertStore, type TlsMaterial } from "../quic/certs.js";
import { FrameDecoder, FrameError, FrameTooLargeError, MAX_FRAME_BYTES } from "../quic/frame.js";
import {
  ALPN,
  clientCrypto,
  codeToReason,
  isLoopbackHost,
  quietQuicLogger,
  reasonToCode,
  cancelStream,
  watchClientConnection,
  StreamCode,
  StreamResetByPeer,
  udpPayloadConfig,
  writeFrameAndClose,
} from "../quic/quic-common.js";
import { formatHostPort } from "../quic/address.js";
import { SenderError, type SendOptions, type Sender } from "../quic/sender.js";
import { StreamUnsupportedError, type FrameHandler, type StreamingSender } from "./streaming.js";

/** Options of {@link QuicStreamClient}; the same meaning as `QuicSenderOptions`. */
export interface QuicStreamClientOptions {
  host: string;
  port: number;
  certsDir?: string;
  certName?: string;
  tls?: TlsMaterial;
  serverName?: string;
  /** QUIC max idle timeout, ms (default 60 000). */
  idleTimeoutMs?: number;
  /** Keep-alive interval, ms (default 15 000; below the idle timeout). */
  keepAliveMs?: number;
  /** Deadline for connecting, ms (default 5 000). */
  connectTimeoutMs?: number;
  /** How long to wait for the server's FIN after the completing frame, ms (default 2 000). */
  finGraceMs?: number;
  udpPayloadBytes?: number;
  logger?: Logger;
}

interface Conn {
  client: QUICClient;
  dead: boolean;
  /** Fails every call on this connection (connection lost). */
  calls: Set<(error: SenderError) => void>;
}

/** A QUIC client for multi-frame Orchestra RPCs. */
export class QuicStreamClient {
  readonly address: string;
  private readonly log: Logger;
  private tlsP: Promise<TlsMaterial> | undefined;
  private conn: Conn | undefined;
  private connecting: Promise<Conn> | undefined;
  private closed = false;
  private readonly lingering = new Set<Promise<void>>();

  constructor(private readonly opts: QuicStreamClientOptions) {
    this.address = formatHostPort(opts.host, opts.port);
    this.log = opts.logger ?? childLogger("quic-streams");
    const idle = opts.idleTimeoutMs ?? 60_000;
    const keepAlive = opts.keepAliveMs ?? 15_000;
    if (!(keepAlive > 0 && keepAlive < idle)) throw new RangeError(`keepAliveMs (${keepAlive}) must be positive and below idleTimeoutMs (${idle})`);
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
    let stream: QUICStream;
    try {
      stream = conn.client.connection.newStream("bidi");
    } catch (e) {
      this.drop(conn, this.err("closed", `connection refused a new stream: ${msg(e)}`, e));
      throw this.err("closed", `cannot open a stream: ${msg(e)}`, e);
    }
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      const signal = options.signal;
      const reader = stream.readable.getReader();
      const finish = (error: SenderError | Error | undefined, code: StreamCode = StreamCode.CANCELLED): void => {
        if (settled) return;
        settled = true;
        if (timer) clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        conn.calls.delete(onLost);
        if (error) {
          cancelStream(stream, code, error.message);
          reject(error);
        } else {
          resolve();
          this.awaitFin(stream, reader);
        }
      };
      const onAbort = (): void => finish(this.err("aborted", "call aborted", signal?.reason), StreamCode.CANCELLED);
      const onLost = (error: SenderError): void => finish(error, StreamCode.SHUTDOWN);
      signal?.addEventListener("abort", onAbort, { once: true });
      conn.calls.add(onLost);
      if (options.timeoutMs && options.timeoutMs > 0) {
        const ms = Math.min(options.timeoutMs, 2_147_483_647);
        timer = setTimeout(() => finish(this.err("timeout", `no end of stream within ${ms} ms`), StreamCode.TIMEOUT), ms);
      }
      const decoder = new FrameDecoder(MAX_FRAME_BYTES);
      const readLoop = async (): Promise<void> => {
        while (!settled) {
          const { value, done } = await reader.read();
          if (done) {
            decoder.end(); // throws on a truncated frame
            finish(undefined);
            return;
          }
          for (const frame of decoder.push(value)) {
            if (settled) return;
            const response = fromBinary(PluginResponseSchema, frame);
            let complete: boolean | void;
            try {
              complete = onFrame(response);
            } catch (e) {
              finish(e instanceof Error ? e : new Error(String(e)), StreamCode.CANCELLED);
              return;
            }
            if (complete) {
              finish(undefined);
              return;
            }
          }
        }
      };
      readLoop().catch((e: unknown) => finish(this.classify(e), StreamCode.MALFORMED));
      writeFrameAndClose(stream, payload).catch((e: unknown) => finish(this.classify(e), StreamCode.INTERNAL));
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
    let timer: NodeJS.Timeout | undefined;
    const cap = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, 3_000);
      timer.unref();
    });
    await Promise.race([Promise.allSettled([...this.lingering]), cap]);
    clearTimeout(timer);
  }

  // ------------------------------------------------------------------------------------------

  private err(kind: SenderError["kind"], detail: string, cause?: unknown): SenderError {
    const text = kind === "connect" ? `orchestrator ${this.address} unreachable: ${detail}` : `orchestrator ${this.address}: ${detail}`;
    return new SenderError(kind, text, cause === undefined ? undefined : { cause });
  }

  private classify(e: unknown): SenderError {
    if (e instanceof SenderError) return e;
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

  private awaitFin(stream: QUICStream, reader: ReadableStreamDefaultReader<Uint8Array>): void {
    const timer = setTimeout(() => cancelStream(stream, StreamCode.NONE, "stream complete; FIN not received in time"), this.opts.finGraceMs ?? 2_000);
    timer.unref();
    reader.read().then(
      (r) => {
        clearTimeout(timer);
        if (!r.done) cancelStream(stream, StreamCode.NONE, "stream complete");
      },
      () => clearTimeout(timer),
    );
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
    let ip = this.opts.host;
    let family = net.isIP(ip);
    if (family === 0) {
      try {
        const found = await lookup(this.opts.host);
        ip = found.address;
        family = found.family;
      } catch (e) {
        throw this.err("connect", `cannot resolve ${this.opts.host}: ${msg(e)}`, e);
      }
    }
    const connectTimeoutMs = this.opts.connectTimeoutMs ?? 5_000;
    let client: QUICClient;
    try {
      client = await QUICClient.createQUICClient(
        {
          host: ip,
          port: this.opts.port,
          serverName: this.opts.serverName ?? "localhost",
          localHost: family === 6 ? "::" : "0.0.0.0",
          crypto: clientCrypto,
          config: {
            ca: material.caPem,
            cert: material.certPem,
            key: material.keyPem,
            verifyPeer: true,
            applicationProtos: [ALPN],
            maxIdleTimeout: this.opts.idleTimeoutMs ?? 60_000,
            keepAliveIntervalTime: this.opts.keepAliveMs ?? 15_000,
            readableChunkSize: 16 * 1024,
            ...udpPayloadConfig(isLoopbackHost(ip), this.opts.udpPayloadBytes),
          },
          reasonToCode,
          codeToReason,
          logger: quietQuicLogger("quic-streams"),
        },
        { timer: connectTimeoutMs },
      );
    } catch (e) {
      throw this.err("connect", msg(e), e);
    }
    const conn: Conn = { client, dead: false, calls: new Set() };
    watchClientConnection(client, (detail) =>
      this.drop(conn, this.err("closed", `connection lost: ${detail instanceof Error ? detail.message : "closed"}`, detail)),
    );
    return conn;
  }

  private drop(conn: Conn, error: SenderError): void {
    if (conn.dead) return;
    conn.dead = true;
    if (this.conn === conn) this.conn = undefined;
    for (const fail of [...conn.calls]) fail(error);
    const p = conn.client
      .destroy({ isApp: true, errorCode: 0, force: true })
      .catch((e: unknown) => this.log.debug({ err: msg(e) }, "QUIC client destroy failed"))
      .finally(() => this.lingering.delete(p));
    this.lingering.add(p);
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
