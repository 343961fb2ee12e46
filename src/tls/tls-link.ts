/**
 * The TLS {@link Link}: one multiplexed TLS 1.3 / TCP connection (docs/tls-transport.md), and
 * {@link TlsSender}, the {@link RpcClient} over it. The alternative to QUIC for networks or hosts
 * where QUIC misbehaves; QUIC stays the default and the interoperable transport.
 *
 * Wire: mutual TLS with the cert store's CA (same store and names as QUIC), ALPN
 * `orchestra-plugin`, then `[u32 BE length][protobuf]` frames in both directions
 * (./mux.ts), responses matched to requests by `request_id` (so a `request_id` already in flight
 * is refused with `SenderError('protocol')`). Frames are written with socket backpressure. A
 * cancelled or timed-out call sends `PluginRequest{stream_cancel}` for its id (our extension)
 * when its request already went out; one still queued locally is withdrawn. A call's end marker
 * is a `stream_end` for its id; a per-request error answer (`stream_end` with a
 * {@link RequestErrorCode}) fails the call.
 *
 * The reference TLS orchestrator serves no streaming kinds, so {@link TlsSender} does not offer
 * streaming (`streams: false`): the bridge answers `tools/call` unary over TLS.
 */
import tls from "node:tls";
import type { PluginResponse } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { decodePluginResponse, encodePluginRequest } from "../gen/proto/orchestra/plugin/v1/plugin_codec.js";
import { FrameDecoder, FrameError, FrameTooLargeError, MAX_FRAME_BYTES, PAYLOAD_CODEC_OPTIONS } from "../framing/frame.js";
import { childLogger, type Logger } from "../log.js";
import { resolveAddresses } from "../quic/address.js";
import { messageOf, SenderError, StreamUnsupportedError } from "../transport/errors.js";
import type { CallEvents, CancelReason, Link, LinkCall, LinkDialer } from "../transport/link.js";
import { PeerDialer, type PeerOptions } from "../transport/material.js";
import { RpcClient } from "../transport/rpc-client.js";
import { cancelRequest, FrameWriter, RequestErrorCode, requestErrorOf, ResponseRouter, TLS_ALPN, type QueuedFrame } from "./mux.js";

/** Defaults of {@link TlsSenderOptions}, in milliseconds. */
export const TLS_SENDER_DEFAULTS = {
  serverName: "localhost",
  connectTimeoutMs: 5_000,
  callTimeoutMs: 300_000,
  keepAliveMs: 15_000,
  reconnectMinMs: 100,
  reconnectMaxMs: 5_000,
} as const;

/** Options of {@link TlsSender}. */
export interface TlsSenderOptions extends PeerOptions {
  /** Deadline for TCP connect + TLS handshake, in ms (default 5 000). */
  connectTimeoutMs?: number;
  /** Per-call deadline in ms when `SendOptions.timeoutMs` is not given (default 300 000). */
  callTimeoutMs?: number;
  /** TCP keep-alive initial delay in ms (default 15 000). */
  keepAliveMs?: number;
  /** First reconnect delay after a failure, in ms (default 100); doubles per failure. */
  reconnectMinMs?: number;
  /** Cap of the reconnect delay, in ms (default 5 000). */
  reconnectMaxMs?: number;
  /** Logger for warnings (default: the project's pino logger, component `tls-sender`). */
  logger?: Logger;
}

/** Longest `close()` waits for the socket to close after ending it (ms). */
const CLOSE_WAIT_MS = 1_000;

/** The {@link RpcClient} over one lazily opened, multiplexed TLS 1.3 connection (see the module comment). */
export class TlsSender extends RpcClient {
  /** @throws RangeError for a bad port or non-positive timeouts */
  constructor(options: TlsSenderOptions) {
    if (!Number.isInteger(options.port) || options.port < 1 || options.port > 65535) {
      throw new RangeError(`port must be 1..65535, got ${options.port}`);
    }
    const d = TLS_SENDER_DEFAULTS;
    const o = {
      connectTimeoutMs: options.connectTimeoutMs ?? d.connectTimeoutMs,
      callTimeoutMs: options.callTimeoutMs ?? d.callTimeoutMs,
      keepAliveMs: options.keepAliveMs ?? d.keepAliveMs,
      reconnectMaxMs: options.reconnectMaxMs ?? d.reconnectMaxMs,
    };
    for (const [key, v] of Object.entries(o)) {
      if (!(v > 0)) throw new RangeError(`${key} must be positive, got ${v}`);
    }
    const reconnectMinMs = options.reconnectMinMs ?? d.reconnectMinMs;
    if (!(reconnectMinMs >= 0) || reconnectMinMs > o.reconnectMaxMs) {
      throw new RangeError(`reconnectMinMs must be in 0..reconnectMaxMs, got ${reconnectMinMs}`);
    }
    const logger = options.logger ?? childLogger("tls-sender");
    super(new TlsDialer(options, o.connectTimeoutMs, o.keepAliveMs, logger), {
      callTimeoutMs: o.callTimeoutMs,
      reconnectMinMs,
      reconnectMaxMs: o.reconnectMaxMs,
      maxConcurrentCalls: Infinity,
      livenessMs: Infinity, // TCP keep-alive watches the connection
      logger,
    });
  }
}

/** Dials {@link TlsLink}s (see {@link TlsSender}). */
class TlsDialer extends PeerDialer implements LinkDialer {
  readonly name = "TLS";
  readonly streams = false;
  /** `net.LookupFunction` over {@link resolveAddresses}: every address, families interleaved. */
  private readonly lookup: NonNullable<tls.ConnectionOptions["lookup"]>;

  constructor(
    private readonly opts: TlsSenderOptions,
    private readonly connectTimeoutMs: number,
    private readonly keepAliveMs: number,
    readonly log: Logger,
  ) {
    super(opts);
    const resolver = opts.resolver;
    this.lookup = (hostname, lookupOptions, callback) => {
      resolveAddresses(hostname, resolver).then(
        (list) => {
          if (lookupOptions.all) callback(null, list);
          else callback(null, list[0]!.address, list[0]!.family);
        },
        (e: Error) => callback(Object.assign(e, { code: "ENOTFOUND" }), ""),
      );
    };
  }

  async dial(signal: AbortSignal): Promise<Link> {
    const material = await this.material.load();
    const socket = await new Promise<tls.TLSSocket>((resolve, reject) => {
      let settled = false;
      const s = tls.connect({
        host: this.opts.host,
        port: this.opts.port,
        servername: this.serverName,
        ca: material.caPem,
        cert: material.certPem,
        key: material.keyPem,
        ALPNProtocols: [TLS_ALPN],
        minVersion: "TLSv1.3",
        rejectUnauthorized: true,
        // Every address of the name in our order (resolveAddresses); Node's autoSelectFamily
        // (on by default) races them as RFC 8305 says.
        lookup: this.lookup,
      });
      const done = (e?: unknown): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        s.off("error", done);
        s.off("close", onClose);
        if (e === undefined) {
          resolve(s);
        } else {
          s.on("error", () => {}); // nothing more to report from this socket
          s.destroy();
          reject(e);
        }
      };
      const onClose = (): void => done(new Error("connection closed during the TLS handshake"));
      const onAbort = (): void => done(this.err("closed", "sender closed"));
      const timer = setTimeout(() => done(this.err("connect", `no TLS handshake within ${this.connectTimeoutMs} ms`)), this.connectTimeoutMs);
      signal.addEventListener("abort", onAbort, { once: true });
      s.once("error", done);
      s.once("close", onClose);
      s.once("secureConnect", () => {
        if (s.alpnProtocol !== TLS_ALPN) {
          done(this.err("connect", `server did not agree to ALPN ${JSON.stringify(TLS_ALPN)}`));
          return;
        }
        done();
      });
    }).catch((e: unknown) => {
      throw this.classify(e, false);
    });
    socket.setNoDelay(true);
    socket.setKeepAlive(true, this.keepAliveMs);
    return new TlsLink(socket, this);
  }

  /** The error a per-request error answer (`stream_end` with a {@link RequestErrorCode}) fails its call with. */
  requestError(code: string, message: string): SenderError {
    switch (code) {
      case RequestErrorCode.FRAME_TOO_LARGE:
        return this.err("frame", `server could not answer: ${message}`);
      case RequestErrorCode.SHUTDOWN:
        return this.err("closed", `server is shutting down: ${message}`);
      case RequestErrorCode.UNSUPPORTED:
        return new StreamUnsupportedError(`orchestrator ${this.address}: server does not support this request kind: ${message}`);
      default:
        return this.err("protocol", `server error ${code}: ${message}`);
    }
  }

  /**
   * A connection lost before any response arrived. With TLS 1.3 the server verifies our
   * certificate after our side of the handshake is complete, and a Node server that refuses it
   * just closes the connection (no alert reaches us), so say so.
   */
  classifyEarlyLoss(cause: unknown): SenderError {
    const specific = this.classify(cause, true);
    if (specific.kind !== "closed") return specific;
    return this.err(
      "connect",
      `the connection closed after the TLS handshake, before any answer (${messageOf(cause)}); ` +
        `the orchestrator may have refused this client's certificate (is it signed by the orchestrator's CA?)`,
      cause,
    );
  }

  /** Maps a socket/TLS/framing error to a {@link SenderError} naming the address. */
  classify(e: unknown, established: boolean): SenderError {
    if (e instanceof SenderError) return e;
    if (e instanceof FrameTooLargeError) {
      return this.err("frame", `response frame of ${e.length} bytes exceeds the ${e.max}-byte limit; connection dropped`, e);
    }
    if (e instanceof FrameError) return this.err("frame", `malformed response: ${e.message}; connection dropped`, e);
    const code = (e as { code?: unknown } | undefined)?.code;
    const codeText = typeof code === "string" ? code : "";
    if (/ALERT/.test(codeText) || codeText === "ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED") {
      // TLS 1.3: the server checks our certificate after our handshake completed.
      return this.err("connect", `server rejected the TLS handshake (client certificate?): ${messageOf(e)}`, e);
    }
    if (CERT_VERIFY_CODES.has(codeText) || codeText.startsWith("ERR_TLS_CERT")) {
      return this.err("connect", `TLS verification of the server failed: ${messageOf(e)}`, e);
    }
    if (codeText.startsWith("ERR_SSL")) return this.err(established ? "closed" : "connect", `TLS error: ${messageOf(e)}`, e);
    if (!established) return this.err("connect", messageOf(e), e);
    return this.err("closed", `connection lost: ${messageOf(e)}`, e);
  }
}

/** OpenSSL verification failures Node reports as `err.code` on the client. */
const CERT_VERIFY_CODES = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_SIGNATURE_FAILURE",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "HOSTNAME_MISMATCH",
]);

/** The error codes of per-request error answers, for streaming calls (whose `stream_end` may also be a tool's own failure). */
const REQUEST_ERROR_CODES: ReadonlySet<string> = new Set(Object.values(RequestErrorCode));

/** One TLS connection as a {@link Link}. */
class TlsLink implements Link {
  onCredit: (() => void) | undefined = undefined;
  onDown: ((error: SenderError) => void) | undefined = undefined;
  readonly packetsReceived = undefined;
  readonly writer: FrameWriter;
  private readonly decoder = new FrameDecoder(MAX_FRAME_BYTES);
  readonly router = new ResponseRouter<TlsCall>();
  dead = false;
  /** A response arrived: the server accepted us (TLS 1.3 reports client-cert refusals late). */
  private proven = false;

  constructor(
    private readonly socket: tls.TLSSocket,
    readonly dialer: TlsDialer,
  ) {
    this.writer = new FrameWriter(socket);
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("error", (e: Error) => this.lost(e));
    socket.on("end", () => this.lost(new Error("the orchestrator closed the connection")));
    socket.on("close", () => this.lost(new Error("connection closed")));
  }

  open(requestId: string, multiFrame: boolean, events: CallEvents): LinkCall {
    const call = new TlsCall(requestId, multiFrame, events, this);
    if (!this.router.add(requestId, call)) throw this.dialer.err("protocol", `request_id ${JSON.stringify(requestId)} is already in flight`);
    return call;
  }

  async close(graceful: boolean): Promise<void> {
    this.dead = true;
    this.writer.close();
    const s = this.socket;
    if (graceful && !s.destroyed) s.end();
    else s.destroy();
    if (s.closed) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => s.once("close", () => resolve())),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CLOSE_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    s.destroy();
  }

  private lost(cause: unknown): void {
    if (this.dead) return;
    this.dead = true;
    this.writer.close();
    const error = this.proven ? this.dialer.classify(cause, true) : this.dialer.classifyEarlyLoss(cause);
    this.onDown?.(error);
  }

  private onData(chunk: Buffer): void {
    if (this.dead) return;
    let payloads: Uint8Array[];
    try {
      payloads = this.decoder.push(chunk);
    } catch (e) {
      this.lost(e);
      return;
    }
    for (const payload of payloads) {
      let response: PluginResponse;
      try {
        response = decodePluginResponse(payload, PAYLOAD_CODEC_OPTIONS);
      } catch (e) {
        this.lost(this.dialer.err("frame", `undecodable PluginResponse: ${messageOf(e)}`, e));
        return;
      }
      this.proven = true;
      const call = this.router.get(response.requestId);
      if (call === undefined) {
        // A late answer to a call that timed out or was cancelled.
        this.dialer.log.debug({ address: this.dialer.address, requestId: response.requestId }, "response for no pending call ignored");
        continue;
      }
      call.receive(response);
      if (this.dead) return;
    }
  }
}

/** One call multiplexed on a {@link TlsLink}, keyed by its `request_id`. */
class TlsCall implements LinkCall {
  private frame: QueuedFrame | undefined;

  constructor(
    private readonly requestId: string,
    private readonly multiFrame: boolean,
    private readonly events: CallEvents,
    private readonly link: TlsLink,
  ) {}

  write(payload: Uint8Array): void {
    this.frame = this.link.writer.enqueue(payload);
  }

  /** One response frame for this call's id. */
  receive(response: PluginResponse): void {
    const problem = requestErrorOf(response);
    if (problem && (!this.multiFrame || REQUEST_ERROR_CODES.has(problem.code))) {
      this.release();
      this.events.end(this.link.dialer.requestError(problem.code, problem.message), "refused");
      return;
    }
    const last = !this.multiFrame || response.response.case === "streamEnd";
    if (last) this.release();
    this.events.frame(response);
    if (last && this.multiFrame) this.events.end();
  }

  cancel(reason: CancelReason): void {
    const link = this.link;
    this.release();
    const frame = this.frame;
    if (!frame || link.dead || frame.withdraw() || (reason !== "cancelled" && reason !== "timeout")) return;
    try {
      link.writer.enqueue(encodePluginRequest(cancelRequest(this.requestId), PAYLOAD_CODEC_OPTIONS), { urgent: true });
    } catch (e) {
      link.dialer.log.debug({ err: messageOf(e) }, "cannot send stream_cancel");
    }
  }

  release(): void {
    this.link.router.delete(this.requestId, this);
  }
}
