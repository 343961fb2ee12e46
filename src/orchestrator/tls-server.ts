/**
 * The reference orchestrator over TLS 1.3 / TCP (docs/tls-transport.md): the transport adapter of
 * ./rpc-server.ts for one multiplexed connection per client instead of one QUIC stream per RPC;
 * the same content, counters and return shape as the QUIC server ({@link startOrchestrator} in
 * ./quic-server.ts).
 *
 * Per connection: read `[u32 BE length][PluginRequest]` frames; run each request concurrently;
 * write each `PluginResponse` (echoing `request_id`) as one frame when it is ready, in completion
 * order. Unary kinds are served as over QUIC; streaming kinds (`stream_start`, `subscribe`) are
 * not (there is no stream to carry them): they and any other unserved kind are answered
 * `tool_call {success: false, error_code: "unknown_request"}` (./dispatch.ts {@link refusal}).
 * Where the QUIC server resets a stream, this one answers `PluginResponse{stream_end:
 * {success:false, error_code}}` for that request (src/tls/mux.ts, {@link RequestErrorCode}):
 * - a response over 16 MiB: a `tool_call` gets `ToolResponse{success:false,
 *   error_code:"result_too_large"}` (as over QUIC), anything else `frame_too_large`;
 * - `stream_cancel` for a request in flight aborts its handler's `signal`; nothing is answered;
 * - a failing handler gets `internal_error`; on `stop()`, requests in flight get `shutting_down`.
 * Connection-level faults close that connection only: a frame declaring more than 16 MiB
 * (detected from the header, nothing buffered), an undecodable frame (it has no `request_id`
 * to answer). A request with an empty or duplicate in-flight `request_id` is dropped (counted as
 * malformed): its answer could not be told apart.
 * Concurrency: at most `maxStreams` requests of one connection run (or await their write) at
 * once; later ones wait in arrival order. Reading continues meanwhile so that cancellations
 * arrive (a cancelled waiting request is dropped unrun); only when the waiting requests exceed
 * 32 MiB does the server stop reading that connection (TCP backpressure).
 */
import tls from "node:tls";
import type { AddressInfo, Socket } from "node:net";
import type { PluginRequest } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { encodePluginResponse } from "../gen/proto/orchestra/plugin/v1/plugin_codec.js";
import type { Logger } from "../log.js";
import { FrameDecoder, FrameTooLargeError, MAX_FRAME_BYTES, PAYLOAD_CODEC_OPTIONS } from "../framing/frame.js";
import { cancelTarget, FrameWriter, RequestErrorCode, requestErrorResponse, TLS_ALPN } from "../tls/mux.js";
import { decodeRequest, DEFAULT_MAX_STREAMS, positiveInteger, startServer } from "./rpc-server.js";
import type { CallFault, CallLink, OrchestratorBaseOptions, RpcCall, RpcServer, RunningOrchestrator } from "./rpc-server.js";

/** Options of {@link startTlsOrchestrator}. */
export interface TlsOrchestratorOptions extends OrchestratorBaseOptions {
  /**
   * Requests one connection may have running or awaiting their write (default 1000, like the
   * QUIC server's stream credit); further requests wait their turn.
   */
  maxStreams?: number;
  /** TCP keep-alive initial delay in ms (default 15 000). */
  keepAliveMs?: number;
  /**
   * Deadline for a client's TLS handshake, in ms (default 10 000). A connection that has not
   * completed it by then is destroyed.
   */
  handshakeTimeoutMs?: number;
  /**
   * TCP connections whose TLS handshake has not completed that the server keeps at once
   * (default {@link TLS_DEFAULT_MAX_HANDSHAKES}); a connection arriving past it is closed at
   * once, so idle or slow clients cannot use up the process's file descriptors.
   */
  maxHandshakes?: number;
  /**
   * Of those, connections one remote IP address may have at once (default
   * {@link TLS_DEFAULT_MAX_HANDSHAKES_PER_ADDRESS}; loopback counts like any address). A
   * connection past it is closed at once. When {@link maxHandshakes} is reached, the oldest
   * handshaking connection of the address with the most is closed to make room, if that address
   * has more than the newcomer's; otherwise the newcomer is closed.
   */
  maxHandshakesPerAddress?: number;
}

/** Default of {@link TlsOrchestratorOptions.maxHandshakes}. */
export const TLS_DEFAULT_MAX_HANDSHAKES = 256;

/** Default of {@link TlsOrchestratorOptions.maxHandshakesPerAddress}. */
export const TLS_DEFAULT_MAX_HANDSHAKES_PER_ADDRESS = 32;

/** Default per-connection request cap of {@link TlsOrchestratorOptions.maxStreams}: the QUIC server's stream credit. */
export const TLS_DEFAULT_MAX_STREAMS = DEFAULT_MAX_STREAMS;

/**
 * Bytes of waiting request frames per connection above which the server stops reading from it.
 * While paused it cannot see cancellations either, so this is a memory bound, not the
 * concurrency limit (that is `maxStreams`).
 */
const MAX_BACKLOG_BYTES = 32 * 1024 * 1024;

/** How long `stop()` lets connections flush their last frames before destroying them (ms). */
const STOP_GRACE_MS = 1_000;

/**
 * The `stream_end.error_code` each {@link CallFault} is answered with. `malformed` and `end` are
 * never raised here: requests are decoded per connection (an undecodable one closes it) and
 * streaming kinds are not served.
 */
const FAULT_CODES: Record<CallFault, RequestErrorCode | undefined> = {
  malformed: undefined,
  frame_too_large: RequestErrorCode.FRAME_TOO_LARGE,
  internal: RequestErrorCode.INTERNAL,
  shutdown: RequestErrorCode.SHUTDOWN,
  end: undefined,
};

/**
 * Starts the reference orchestrator on TLS 1.3 / TCP.
 *
 * Stats: `streamsOpened` counts requests started, `streamsCompleted` responses written,
 * `streamsCancelled` requests cancelled by the client while running or waiting, `activeStreams`
 * requests running, `framesTooLarge` / `malformedRequests` connection faults and dropped requests.
 *
 * @returns the same shape as {@link startOrchestrator}; `port` is a TCP port
 * @throws CertStoreError when the cert store cannot be used; RangeError for bad options;
 *   the listen error (e.g. `EADDRINUSE`) when the port cannot be bound
 */
export async function startTlsOrchestrator(options: TlsOrchestratorOptions = {}): Promise<RunningOrchestrator> {
  const maxStreams = positiveInteger("maxStreams", options.maxStreams ?? TLS_DEFAULT_MAX_STREAMS);
  const maxHandshakes = positiveInteger("maxHandshakes", options.maxHandshakes ?? TLS_DEFAULT_MAX_HANDSHAKES);
  const maxPerAddress = positiveInteger("maxHandshakesPerAddress", options.maxHandshakesPerAddress ?? TLS_DEFAULT_MAX_HANDSHAKES_PER_ADDRESS);
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  if (!(keepAliveMs > 0)) throw new RangeError(`keepAliveMs must be positive`);
  return startServer(options, "tls-orchestrator", { streaming: false }, async ({ rpc, log, material, listenHost }) => {
    const connections = new Set<ClientConnection>();
    let stopping = false;

    const server = tls.createServer({
      key: material.keyPem,
      cert: material.certPem,
      ca: material.caPem,
      requestCert: true,
      rejectUnauthorized: true,
      ALPNProtocols: [TLS_ALPN],
      minVersion: "TLSv1.3",
      handshakeTimeout: options.handshakeTimeoutMs ?? 10_000,
    });
    const handshakes = new HandshakeLimiter(maxHandshakes, maxPerAddress, () => {
      rpc.stats.handshakesRefused = (rpc.stats.handshakesRefused ?? 0) + 1;
    });
    server.on("connection", (raw: Socket) => handshakes.admit(raw));
    server.on("secureConnection", (socket: tls.TLSSocket) => {
      handshakes.completed(socket);
      if (stopping) {
        socket.destroy();
        return;
      }
      if (socket.alpnProtocol !== TLS_ALPN) {
        log.debug({ alpn: socket.alpnProtocol }, "client did not negotiate ALPN orchestra-plugin; closing");
        socket.destroy();
        return;
      }
      rpc.stats.connections++;
      socket.setNoDelay(true);
      socket.setKeepAlive(true, keepAliveMs);
      const conn = new ClientConnection(socket, rpc, maxStreams, log);
      connections.add(conn);
      socket.once("close", () => {
        connections.delete(conn);
        conn.abortAll("client connection closed");
      });
    });
    server.on("tlsClientError", (e: Error, socket: tls.TLSSocket) => {
      log.debug({ err: e.message }, "TLS handshake with a client failed");
      // Node reports a handshake timeout here but leaves the TCP connection open.
      socket.destroy();
    });

    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: listenHost, port: options.port ?? 0 }, () => {
        server.off("error", reject);
        resolve();
      });
    });
    server.on("error", (e: Error) => log.warn({ err: e.message }, "server error"));
    const bound = server.address() as AddressInfo;
    return {
      host: bound.address,
      port: bound.port,
      close: async () => {
        stopping = true;
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        await Promise.all([...connections].map((c) => c.end(STOP_GRACE_MS)));
        await closed;
      },
    };
  });
}

/**
 * TCP connections still in their TLS handshake, by remote IP address (oldest first), under the
 * caps of {@link TlsOrchestratorOptions.maxHandshakes} and `maxHandshakesPerAddress`.
 */
class HandshakeLimiter {
  /** Handshaking sockets by peer address and port. */
  private readonly pending = new Map<string, Socket>();
  private readonly byAddress = new Map<string, Socket[]>();

  constructor(
    private readonly max: number,
    private readonly maxPerAddress: number,
    private readonly onRefused: () => void,
  ) {}

  /** A new TCP connection: tracked until its handshake ends, or closed at once past the caps. */
  admit(raw: Socket): void {
    const address = raw.remoteAddress ?? "";
    const own = this.byAddress.get(address)?.length ?? 0;
    if (own >= this.maxPerAddress) return this.refuse(raw);
    if (this.pending.size >= this.max) {
      let busiest: Socket[] | undefined;
      for (const list of this.byAddress.values()) if (busiest === undefined || list.length > busiest.length) busiest = list;
      if (busiest === undefined || busiest.length <= own) return this.refuse(raw);
      const oldest = busiest[0]!;
      this.completed(oldest);
      this.refuse(oldest);
    }
    const key = peerKey(raw);
    this.pending.set(key, raw);
    const list = this.byAddress.get(address);
    if (list === undefined) this.byAddress.set(address, [raw]);
    else list.push(raw);
    raw.once("close", () => {
      if (this.pending.get(key) === raw) this.completed(raw);
    });
  }

  /** The socket's handshake ended (or it closed): it no longer counts. */
  completed(socket: Socket): void {
    const key = peerKey(socket);
    const raw = this.pending.get(key);
    if (raw === undefined) return;
    this.pending.delete(key);
    const address = raw.remoteAddress ?? "";
    const list = this.byAddress.get(address);
    if (list === undefined) return;
    const i = list.indexOf(raw);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.byAddress.delete(address);
  }

  private refuse(raw: Socket): void {
    this.onRefused();
    raw.destroy();
  }
}

function peerKey(s: Socket): string {
  return `${s.remoteAddress}|${s.remotePort}`;
}

/** One request on a {@link ClientConnection}, as the core's {@link CallLink}. */
class RequestLink implements CallLink {
  call!: RpcCall;
  /** Its last frame was handed to the writer. */
  queued = false;
  /** It no longer counts against the connection's cap. */
  released = false;

  constructor(
    private readonly conn: ClientConnection,
    readonly requestId: string,
  ) {}

  write(frame: Uint8Array, last: boolean): boolean {
    return this.conn.send(this, frame, last);
  }

  fail(fault: CallFault, message: string): void {
    const code = FAULT_CODES[fault];
    if (code !== undefined) this.conn.send(this, encodePluginResponse(requestErrorResponse(this.requestId, code, message), PAYLOAD_CODEC_OPTIONS), true);
  }

  done(): void {
    this.conn.callDone(this);
  }
}

/** One client connection: frame decoding, cancel routing, the request cap, ordered frame writing. */
class ClientConnection {
  private readonly decoder = new FrameDecoder(MAX_FRAME_BYTES);
  private readonly writer: FrameWriter;
  /** Calls by `request_id`, from their start until answered, cancelled or done. */
  private readonly calls = new Map<string, RpcCall>();
  /** Requests running or with an answer not yet handed to the socket. */
  private busy = 0;
  /** Requests received but not started (the cap was reached), with their frame sizes. */
  private readonly backlog: Array<{ request: PluginRequest; bytes: number }> = [];
  private backlogBytes = 0;
  private paused = false;
  private closed = false;

  constructor(
    private readonly socket: tls.TLSSocket,
    private readonly rpc: RpcServer,
    private readonly maxStreams: number,
    private readonly log: Logger,
  ) {
    this.writer = new FrameWriter(socket);
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("error", (e: Error) => {
      log.debug({ err: e.message }, "client connection error");
    });
  }

  /** Aborts every running handler (the connection is gone). */
  abortAll(reason: string): void {
    this.closed = true;
    this.backlog.length = 0;
    this.backlogBytes = 0;
    this.writer.close();
    for (const call of this.calls.values()) call.abort(reason);
    this.calls.clear();
  }

  /**
   * Server stop, after the core answered the running requests with `shutting_down`: ends the
   * connection and destroys it after `graceMs` if the client does not close.
   */
  async end(graceMs: number): Promise<void> {
    if (!this.closed) {
      this.calls.clear();
      this.closed = true;
      this.socket.end();
    }
    if (this.socket.closed) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.socket.destroy();
        resolve();
      }, graceMs);
      this.socket.once("close", () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Queues one response frame of `link`'s request (`last`: its answer, after which a
   * `stream_cancel` for it is ignored and its slot is freed once written).
   * @returns false when the connection is closed (nothing queued)
   */
  send(link: RequestLink, bytes: Uint8Array, last: boolean): boolean {
    if (this.closed) return false;
    if (!last) {
      this.writer.enqueue(bytes);
      return true;
    }
    if (this.calls.get(link.requestId) === link.call) this.calls.delete(link.requestId);
    link.queued = true;
    this.writer.enqueue(bytes, { onWritten: () => this.release(link) });
    return true;
  }

  /** The request's handler returned. */
  callDone(link: RequestLink): void {
    if (this.calls.get(link.requestId) === link.call) this.calls.delete(link.requestId);
    if (!link.queued) this.release(link);
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    let payloads: Uint8Array[];
    try {
      payloads = this.decoder.push(chunk);
    } catch (e) {
      this.rpc.countRefused(e instanceof FrameTooLargeError ? "frame_too_large" : "malformed");
      this.fatal(`request frame refused: ${(e as Error).message}`);
      return;
    }
    for (const payload of payloads) {
      const request = decodeRequest(payload);
      if (request instanceof Error) {
        this.rpc.countRefused("malformed");
        this.fatal(`undecodable PluginRequest: ${request.message}`);
        return;
      }
      const target = cancelTarget(request);
      if (target === undefined) {
        this.backlog.push({ request, bytes: payload.byteLength });
        this.backlogBytes += payload.byteLength;
      } else {
        this.cancel(target); // never held back: it frees capacity
      }
    }
    this.processBacklog();
  }

  /** Starts requests from the backlog while below the cap; pauses reading otherwise. */
  private processBacklog(): void {
    while (this.backlog.length > 0 && !this.closed && this.busy < this.maxStreams) {
      const next = this.backlog.shift()!;
      this.backlogBytes -= next.bytes;
      this.start(next.request);
    }
    this.updatePause();
  }

  /** `stream_cancel` for `requestId`: cancel it if running, drop it if not started yet. */
  private cancel(requestId: string): void {
    const call = this.calls.get(requestId);
    if (call) {
      this.calls.delete(requestId);
      call.cancel("client cancelled the request");
      return;
    }
    const i = this.backlog.findIndex((q) => q.request.requestId === requestId);
    if (i >= 0) {
      this.backlogBytes -= this.backlog[i]!.bytes;
      this.backlog.splice(i, 1);
      this.rpc.stats.streamsCancelled++;
    }
  }

  private start(request: PluginRequest): void {
    const id = request.requestId;
    if (id === "" || this.calls.has(id)) {
      this.rpc.countRefused("malformed");
      this.log.warn({ requestId: id }, id === "" ? "request without request_id dropped" : "duplicate request_id in flight dropped");
      return;
    }
    this.busy++;
    const link = new RequestLink(this, id);
    link.call = this.rpc.open(link);
    this.calls.set(id, link.call);
    link.call.serve(request);
  }

  /** The request no longer counts against the cap. */
  private release(link: RequestLink): void {
    if (link.released) return;
    link.released = true;
    this.busy--;
    if (this.backlog.length > 0) this.processBacklog();
    else this.updatePause();
  }

  private updatePause(): void {
    if (this.closed) return;
    // Reading goes on while requests wait for a slot, so that cancellations still arrive; only a
    // large backlog stops it (bounding memory).
    const full = this.backlogBytes > MAX_BACKLOG_BYTES;
    if (!this.paused && full) {
      this.paused = true;
      this.socket.pause();
    } else if (this.paused && !full) {
      this.paused = false;
      this.socket.resume();
    }
  }

  /** A connection-level fault: log, stop handlers, drop the connection. */
  private fatal(reason: string): void {
    this.log.warn({ reason }, "closing a client connection");
    this.abortAll(reason);
    this.socket.destroy();
  }
}
