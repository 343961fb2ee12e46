/**
 * {@link TlsSender}: the {@link Sender} over one multiplexed TLS 1.3 / TCP connection
 * (docs/tls-transport.md). The alternative to QUIC for networks or hosts where QUIC misbehaves;
 * QUIC stays the default and the interoperable transport.
 *
 * Wire: mutual TLS with the cert store's CA (same store and names as QUIC), ALPN
 * `orchestra-plugin`, then `[u32 BE length][protobuf]` frames in both directions
 * (src/tls/mux.ts), responses matched to requests by `request_id`. A cancelled or timed-out call
 * sends `PluginRequest{stream_cancel}` for its id (our extension).
 */
import tls from "node:tls";
import { toBinary } from "@bufbuild/protobuf";
import { v7 as uuidv7 } from "uuid";
import {
  PluginRequestSchema,
  type PluginRequest,
  type PluginResponse,
} from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { childLogger, type Logger } from "../log.js";
import { formatHostPort, resolveAddresses, type Resolver } from "../quic/address.js";
import { BRIDGE_CERT_NAME, defaultCertsDir, ensureCertStore, type TlsMaterial } from "../pki/store.js";
import { FrameDecoder, FrameError, FrameTooLargeError, MAX_FRAME_BYTES } from "../quic/frame.js";
import { SenderError, type Sender, type SenderErrorKind, type SendOptions } from "../quic/sender.js";
import {
  cancelRequest,
  FrameWriter,
  RequestErrorCode,
  requestErrorOf,
  ResponseRouter,
  TLS_ALPN,
  type QueuedFrame,
} from "./mux.js";

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
export interface TlsSenderOptions {
  /** Orchestrator host name or IP address. */
  host: string;
  /** Orchestrator TCP port. */
  port: number;
  /** Cert store directory used when {@link tls} is absent (default `~/.orchestra/certs`). */
  certsDir?: string;
  /** Party name in the cert store (default `transport.stdio-client`). */
  certName?: string;
  /** PEM material to use instead of the cert store. */
  tls?: TlsMaterial;
  /** Name the server certificate must carry; also sent as SNI (default `localhost`). */
  serverName?: string;
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
  /** Name resolution (default: the system resolver, every address; see `resolveAddresses`). */
  resolver?: Resolver;
}

/** Longest delay `setTimeout` honours (ms). */
const MAX_TIMER_MS = 2_147_483_647;

/** Longest `close()` waits for the socket to close after ending it (ms). */
const CLOSE_WAIT_MS = 1_000;

interface Conn {
  socket: tls.TLSSocket;
  writer: FrameWriter;
  decoder: FrameDecoder;
  router: ResponseRouter<Call>;
  dead: boolean;
  /** A response arrived: the server accepted us (TLS 1.3 reports client-cert refusals late). */
  proven: boolean;
}

interface Call {
  requestId: string;
  payload: Uint8Array;
  resolve: (r: PluginResponse) => void;
  reject: (e: SenderError) => void;
  settled: boolean;
  conn?: Conn;
  frame?: QueuedFrame;
  dispose: () => void;
}

/**
 * A {@link Sender} over one lazily opened, multiplexed TLS 1.3 connection.
 *
 * - Connects on the first `send` (TCP + TLS 1.3, ALPN `orchestra-plugin`, client certificate
 *   from the cert store, the server must present a certificate for `serverName` signed by the
 *   store's CA) under `connectTimeoutMs`.
 * - Every call writes one request frame; its response is matched by `request_id` (a request
 *   with an empty id gets a fresh UUIDv7; an id already in flight is refused with
 *   `SenderError('protocol')`). Frames are written with socket backpressure.
 * - Deadline (`timeoutMs`, else `callTimeoutMs`) or abort (`signal`): the call rejects at once
 *   (`timeout` / `aborted`); if its request was already written, a `stream_cancel` for its id
 *   follows so the server stops the handler.
 * - Connection lost: every call in flight rejects at once with `SenderError('closed')`; the next
 *   `send` reconnects, no earlier than a backoff delay after the failure (100 ms doubling to
 *   5 s, reset once a new connection has answered). A failed connect rejects the waiting calls
 *   with `SenderError('connect')`.
 * - Errors are always {@link SenderError}s whose message names the address.
 */
export class TlsSender implements Sender {
  /** `host:port` (used in every error message). */
  readonly address: string;
  private readonly opts: Required<Omit<TlsSenderOptions, "tls" | "certsDir" | "logger" | "resolver">> & {
    tls: TlsMaterial | undefined;
    certsDir: string;
  };
  private readonly log: Logger;
  private conn: Conn | undefined;
  private connecting = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  /** Calls waiting for a connection. */
  private readonly waiting: Call[] = [];
  private tlsP: Promise<TlsMaterial> | undefined;
  private closed = false;
  /** Consecutive failures (failed connects or connections lost before answering). */
  private failures = 0;
  /** Earliest time (ms since epoch) of the next connection attempt. */
  private notBefore = 0;
  private readonly sockets = new Set<tls.TLSSocket>();
  /** `net.LookupFunction` over {@link resolveAddresses}: every address, families interleaved. */
  private readonly lookup: NonNullable<tls.ConnectionOptions["lookup"]>;

  /**
   * @throws RangeError for a bad port or non-positive timeouts
   */
  constructor(options: TlsSenderOptions) {
    if (!Number.isInteger(options.port) || options.port < 1 || options.port > 65535) {
      throw new RangeError(`port must be 1..65535, got ${options.port}`);
    }
    this.address = formatHostPort(options.host, options.port);
    const resolver = options.resolver;
    this.lookup = (hostname, lookupOptions, callback) => {
      resolveAddresses(hostname, resolver).then(
        (list) => {
          if (lookupOptions.all) callback(null, list);
          else callback(null, list[0]!.address, list[0]!.family);
        },
        (e: Error) => callback(Object.assign(e, { code: "ENOTFOUND" }), ""),
      );
    };
    this.opts = {
      host: options.host,
      port: options.port,
      certsDir: options.certsDir ?? defaultCertsDir(),
      certName: options.certName ?? BRIDGE_CERT_NAME,
      tls: options.tls,
      serverName: options.serverName ?? TLS_SENDER_DEFAULTS.serverName,
      connectTimeoutMs: options.connectTimeoutMs ?? TLS_SENDER_DEFAULTS.connectTimeoutMs,
      callTimeoutMs: options.callTimeoutMs ?? TLS_SENDER_DEFAULTS.callTimeoutMs,
      keepAliveMs: options.keepAliveMs ?? TLS_SENDER_DEFAULTS.keepAliveMs,
      reconnectMinMs: options.reconnectMinMs ?? TLS_SENDER_DEFAULTS.reconnectMinMs,
      reconnectMaxMs: options.reconnectMaxMs ?? TLS_SENDER_DEFAULTS.reconnectMaxMs,
    };
    for (const key of ["connectTimeoutMs", "callTimeoutMs", "keepAliveMs", "reconnectMaxMs"] as const) {
      if (!(this.opts[key] > 0)) throw new RangeError(`${key} must be positive, got ${this.opts[key]}`);
    }
    if (!(this.opts.reconnectMinMs >= 0) || this.opts.reconnectMinMs > this.opts.reconnectMaxMs) {
      throw new RangeError(`reconnectMinMs must be in 0..reconnectMaxMs, got ${this.opts.reconnectMinMs}`);
    }
    this.log = options.logger ?? childLogger("tls-sender");
  }

  /** Calls currently sent and awaiting a response. */
  get inFlight(): number {
    return this.conn?.router.size ?? 0;
  }

  /** Delay before the next connection attempt would be made, in ms (0 = at once). */
  get reconnectDelayMs(): number {
    return Math.max(0, this.notBefore - Date.now());
  }

  /**
   * Sends one request and resolves with its response.
   * @param request a `PluginRequest`; an empty `request_id` is replaced by a UUIDv7
   * @throws SenderError `connect`, `closed`, `timeout`, `aborted`, `frame` (request over 16 MiB,
   *   oversized or undecodable response), `protocol` (duplicate id, per-request server error)
   */
  send(request: PluginRequest, options: SendOptions = {}): Promise<PluginResponse> {
    if (this.closed) return Promise.reject(this.err("closed", "sender closed"));
    if (options.signal?.aborted) return Promise.reject(this.err("aborted", "call aborted", options.signal.reason));
    const req = request.requestId === "" ? { ...request, requestId: uuidv7() } : request;
    if (this.isPending(req.requestId)) {
      return Promise.reject(this.err("protocol", `request_id ${JSON.stringify(req.requestId)} is already in flight`));
    }
    let payload: Uint8Array;
    try {
      payload = toBinary(PluginRequestSchema, req);
    } catch (e) {
      return Promise.reject(this.err("protocol", `cannot encode the request: ${msg(e)}`, e));
    }
    if (payload.byteLength > MAX_FRAME_BYTES) {
      return Promise.reject(
        this.err("frame", `request frame of ${payload.byteLength} bytes exceeds the ${MAX_FRAME_BYTES}-byte limit`),
      );
    }
    const requested = options.timeoutMs && options.timeoutMs > 0 ? options.timeoutMs : this.opts.callTimeoutMs;
    const timeoutMs = Math.min(requested, MAX_TIMER_MS);
    return new Promise<PluginResponse>((resolve, reject) => {
      const call: Call = { requestId: req.requestId, payload, resolve, reject, settled: false, dispose: () => {} };
      const timer = setTimeout(() => {
        this.fail(call, this.err("timeout", `no response within ${timeoutMs} ms`), true);
      }, timeoutMs);
      const signal = options.signal;
      const onAbort = (): void => {
        this.fail(call, this.err("aborted", "call aborted", signal?.reason), true);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      call.dispose = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      this.waiting.push(call);
      this.pump();
    });
  }

  /**
   * Closes the connection; waiting and in-flight calls reject with `SenderError('closed')`.
   * Idempotent. Resolves once the socket is closed (or after a short cap).
   */
  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
      this.reconnectTimer = undefined;
      const error = this.err("closed", "sender closed");
      for (const call of this.waiting.splice(0)) this.fail(call, error, false);
      const conn = this.conn;
      this.conn = undefined;
      if (conn) this.dropConnection(conn, error, true);
    }
    const open = [...this.sockets];
    if (open.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(open.map((s) => new Promise<void>((resolve) => (s.closed ? resolve() : s.once("close", () => resolve()))))),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CLOSE_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    for (const s of this.sockets) s.destroy();
  }

  // ------------------------------------------------------------------------------------------

  private err(kind: SenderErrorKind, detail: string, cause?: unknown): SenderError {
    const text =
      kind === "connect" ? `orchestrator ${this.address} unreachable: ${detail}` : `orchestrator ${this.address}: ${detail}`;
    return new SenderError(kind, text, cause === undefined ? undefined : { cause });
  }

  private isPending(requestId: string): boolean {
    return this.waiting.some((c) => c.requestId === requestId) || (this.conn?.router.has(requestId) ?? false);
  }

  /** Hands waiting calls to the live connection, or starts (re)connecting. */
  private pump(): void {
    if (this.closed || this.waiting.length === 0) return;
    const conn = this.conn;
    if (!conn || conn.dead) {
      this.scheduleConnect();
      return;
    }
    for (const call of this.waiting.splice(0)) {
      if (call.settled) continue;
      if (!conn.router.add(call.requestId, call)) {
        // Only reachable if two waiting calls share an id (send() checks the common case).
        this.fail(call, this.err("protocol", `request_id ${JSON.stringify(call.requestId)} is already in flight`), false);
        continue;
      }
      call.conn = conn;
      call.frame = conn.writer.enqueue(call.payload);
    }
  }

  private scheduleConnect(): void {
    if (this.connecting || this.reconnectTimer || this.closed) return;
    const delay = this.reconnectDelayMs;
    if (delay > 0) {
      this.reconnectTimer = setTimeout(() => {
        this.reconnectTimer = undefined;
        this.scheduleConnect();
      }, delay);
      this.reconnectTimer.unref(); // the waiting calls' own deadlines keep the process alive
      return;
    }
    if (this.waiting.every((c) => c.settled)) {
      this.waiting.length = 0;
      return;
    }
    this.connecting = true;
    this.openConnection().then(
      (conn) => {
        this.connecting = false;
        if (this.closed) {
          this.dropConnection(conn, this.err("closed", "sender closed"), true);
          return;
        }
        this.conn = conn;
        this.pump();
      },
      (e: unknown) => {
        this.connecting = false;
        const error = e instanceof SenderError ? e : this.classify(e, false);
        if (this.closed) return; // close() already rejected everything
        this.noteFailure();
        this.log.warn({ address: this.address, err: error.message }, "TLS connect failed");
        for (const call of this.waiting.splice(0)) this.fail(call, error, false);
      },
    );
  }

  private noteFailure(): void {
    this.failures++;
    const delay = Math.min(this.opts.reconnectMinMs * 2 ** (this.failures - 1), this.opts.reconnectMaxMs);
    this.notBefore = Date.now() + delay;
  }

  private async loadMaterial(): Promise<TlsMaterial> {
    if (!this.tlsP) {
      const { tls: material, certsDir, certName } = this.opts;
      this.tlsP = material ? Promise.resolve(material) : ensureCertStore(certsDir, certName);
      this.tlsP.catch(() => {
        this.tlsP = undefined; // retry reading the store next time
      });
    }
    try {
      return await this.tlsP;
    } catch (e) {
      throw this.err("connect", `cannot load TLS material: ${msg(e)}`, e);
    }
  }

  private async openConnection(): Promise<Conn> {
    const material = await this.loadMaterial();
    const socket = await new Promise<tls.TLSSocket>((resolve, reject) => {
      let settled = false;
      const s = tls.connect({
        host: this.opts.host,
        port: this.opts.port,
        servername: this.opts.serverName,
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
      this.sockets.add(s);
      s.once("close", () => this.sockets.delete(s));
      const done = (e?: unknown): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
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
      const timer = setTimeout(() => {
        done(this.err("connect", `no TLS handshake within ${this.opts.connectTimeoutMs} ms`));
      }, this.opts.connectTimeoutMs);
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
      throw e instanceof SenderError ? e : this.classify(e, false);
    });
    socket.setNoDelay(true);
    socket.setKeepAlive(true, this.opts.keepAliveMs);
    const conn: Conn = {
      socket,
      writer: new FrameWriter(socket),
      decoder: new FrameDecoder(MAX_FRAME_BYTES),
      router: new ResponseRouter<Call>(),
      dead: false,
      proven: false,
    };
    socket.on("data", (chunk: Buffer) => this.onData(conn, chunk));
    socket.on("error", (e: Error) => this.onConnectionLost(conn, e));
    socket.on("end", () => this.onConnectionLost(conn, new Error("the orchestrator closed the connection")));
    socket.on("close", () => this.onConnectionLost(conn, new Error("connection closed")));
    return conn;
  }

  private onData(conn: Conn, chunk: Buffer): void {
    if (conn.dead) return;
    let payloads: Uint8Array[];
    try {
      payloads = conn.decoder.push(chunk);
    } catch (e) {
      this.onConnectionLost(conn, e);
      return;
    }
    for (const payload of payloads) {
      const routed = conn.router.route(payload);
      if (routed.kind === "undecodable") {
        this.onConnectionLost(conn, this.err("frame", `undecodable PluginResponse: ${routed.error.message}`, routed.error));
        return;
      }
      if (!conn.proven) {
        conn.proven = true;
        this.failures = 0;
        this.notBefore = 0;
      }
      if (routed.kind === "unknown") {
        // A late answer to a call that timed out or was cancelled.
        this.log.debug({ address: this.address, requestId: routed.response.requestId }, "response for no pending call ignored");
        continue;
      }
      const call = routed.entry;
      const problem = requestErrorOf(routed.response);
      if (problem) {
        this.fail(call, this.requestError(problem.code, problem.message), false);
        continue;
      }
      this.settle(call);
      call.resolve(routed.response);
    }
  }

  private requestError(code: string, message: string): SenderError {
    switch (code) {
      case RequestErrorCode.FRAME_TOO_LARGE:
        return this.err("frame", `server could not answer: ${message}`);
      case RequestErrorCode.SHUTDOWN:
        return this.err("closed", `server is shutting down: ${message}`);
      case RequestErrorCode.UNSUPPORTED:
        return this.err("protocol", `server does not support this request kind: ${message}`);
      default:
        return this.err("protocol", `server error ${code}: ${message}`);
    }
  }

  private onConnectionLost(conn: Conn, cause: unknown): void {
    if (conn.dead) return;
    const error = conn.proven ? this.classify(cause, true) : this.classifyEarlyLoss(cause);
    this.log.warn({ address: this.address, err: error.message }, "TLS connection lost");
    if (this.conn === conn) this.conn = undefined;
    // Reconnect on the next call, but not in a tight loop: a connection that answered had reset
    // the failure count, so this waits reconnectMinMs; one that never answered keeps doubling.
    this.noteFailure();
    this.dropConnection(conn, error, false);
    this.pump();
  }

  /** Marks `conn` dead, rejects its calls with `error` and closes the socket. */
  private dropConnection(conn: Conn, error: SenderError, graceful: boolean): void {
    if (conn.dead) return;
    conn.dead = true;
    conn.writer.close();
    for (const call of conn.router.drain()) this.fail(call, error, false);
    if (graceful && !conn.socket.destroyed) conn.socket.end();
    else conn.socket.destroy();
  }

  private settle(call: Call): void {
    call.settled = true;
    call.dispose();
    const conn = call.conn;
    if (conn) {
      conn.router.delete(call.requestId, call);
      call.conn = undefined;
    } else {
      const i = this.waiting.indexOf(call);
      if (i >= 0) this.waiting.splice(i, 1);
    }
  }

  /**
   * Rejects `call` once. With `cancelRemote`, a call whose request already went out is followed
   * by a `stream_cancel` for its id; one still queued locally is simply withdrawn.
   */
  private fail(call: Call, error: SenderError, cancelRemote: boolean): void {
    if (call.settled) return;
    const conn = call.conn;
    const frame = call.frame;
    this.settle(call);
    if (conn && frame && !conn.dead && !frame.withdraw() && cancelRemote) {
      try {
        conn.writer.enqueue(toBinary(PluginRequestSchema, cancelRequest(call.requestId)), { urgent: true });
      } catch (e) {
        this.log.debug({ err: msg(e) }, "cannot send stream_cancel");
      }
    }
    call.reject(error);
  }

  /**
   * A connection lost before any response arrived. With TLS 1.3 the server verifies our
   * certificate after our side of the handshake is complete, and a Node server that refuses it
   * just closes the connection (no alert reaches us), so say so.
   */
  private classifyEarlyLoss(cause: unknown): SenderError {
    const specific = this.classify(cause, true);
    if (specific.kind !== "closed") return specific;
    return this.err(
      "connect",
      `the connection closed after the TLS handshake, before any answer (${msg(cause)}); ` +
        `the orchestrator may have refused this client's certificate (is it signed by the orchestrator's CA?)`,
      cause,
    );
  }

  /** Maps a socket/TLS/framing error to a {@link SenderError} naming the address. */
  private classify(e: unknown, established: boolean): SenderError {
    if (e instanceof SenderError) return e;
    if (e instanceof FrameTooLargeError) {
      return this.err("frame", `response frame of ${e.length} bytes exceeds the ${e.max}-byte limit; connection dropped`, e);
    }
    if (e instanceof FrameError) return this.err("frame", `malformed response: ${e.message}; connection dropped`, e);
    const code = (e as { code?: unknown } | undefined)?.code;
    const codeText = typeof code === "string" ? code : "";
    if (/ALERT/.test(codeText) || codeText === "ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED") {
      // TLS 1.3: the server checks our certificate after our handshake completed.
      return this.err("connect", `server rejected the TLS handshake (client certificate?): ${msg(e)}`, e);
    }
    if (CERT_VERIFY_CODES.has(codeText) || codeText.startsWith("ERR_TLS_CERT")) {
      return this.err("connect", `TLS verification of the server failed: ${msg(e)}`, e);
    }
    if (codeText.startsWith("ERR_SSL")) {
      return this.err(established ? "closed" : "connect", `TLS error: ${msg(e)}`, e);
    }
    if (!established) return this.err("connect", msg(e), e);
    return this.err("closed", `connection lost: ${msg(e)}`, e);
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

function msg(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
