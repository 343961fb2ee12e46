/**
 * The reference orchestrator over TLS 1.3 / TCP (docs/tls-transport.md): the same tools,
 * counters and return shape as the QUIC server ({@link startOrchestrator} in ./server.ts), on one
 * multiplexed connection per client instead of one QUIC stream per RPC.
 *
 * Per connection: read `[u32 BE length][PluginRequest]` frames; run each request concurrently;
 * write each `PluginResponse` (echoing `request_id`) as one frame when it is ready, in completion
 * order. Unary kinds are dispatched exactly as by the QUIC server (src/orchestrator/dispatch.ts:
 * health, tools, prompts, storage); streaming kinds (`stream_start`, `subscribe`) are not served:
 * they and any other kind are answered `tool_call {success: false, error_code: "unknown_request"}`
 * as over QUIC (./dispatch.ts {@link refusal}).
 * Where the QUIC server resets a stream, this one answers `PluginResponse{stream_end:
 * {success:false, error_code}}` for that request (src/tls/mux.ts, {@link RequestErrorCode}):
 * - a response over 16 MiB: a `tool_call` gets `ToolResponse{success:false,
 *   error_code:"result_too_large"}` (as over QUIC), anything else `frame_too_large`;
 * - `stream_cancel` for a request in flight aborts its handler's `signal`; nothing is answered;
 * - on `stop()`, requests in flight get `shutting_down`.
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
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  PluginRequestSchema,
  PluginResponseSchema,
  type PluginRequest,
  type PluginResponse,
} from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { childLogger, type Logger } from "../log.js";
import { defaultCertsDir, ensureCertStore, ORCHESTRATOR_CERT_NAME, type TlsMaterial } from "../pki/store.js";
import { FrameDecoder, FrameTooLargeError, MAX_FRAME_BYTES, PAYLOAD_READ_OPTIONS } from "../quic/frame.js";
import { formatHostPort } from "../quic/address.js";
import { cancelTarget, FrameWriter, RequestErrorCode, requestErrorResponse, TLS_ALPN } from "../tls/mux.js";
import { builtinTools } from "./builtin-tools.js";
import { dispatchUnary, EventBus, refusal, type OrchestratorServices } from "./dispatch.js";
import { builtinPrompts, PromptRegistry } from "./prompts.js";
import { ToolRegistry } from "./registry.js";
import { MemoryStorage, sampleStorageEntries } from "./storage.js";
import type { OrchestratorStats, RunningOrchestrator } from "./server.js";

/** Options of {@link startTlsOrchestrator}. */
export interface TlsOrchestratorOptions {
  /** Listen address (default `127.0.0.1`). */
  host?: string;
  /** TCP port; 0 (default) picks an ephemeral one. */
  port?: number;
  /** Cert store directory when {@link tls} is absent (default `~/.orchestra/certs`). */
  certsDir?: string;
  /** Party name in the cert store (default `orchestrator`). */
  certName?: string;
  /** PEM material to use instead of the cert store. */
  tls?: TlsMaterial;
  /** Tools to serve (default: a registry of the built-ins `echo` and `slow`). */
  tools?: ToolRegistry;
  /** Prompts to serve (default: the built-ins `greet` and `review`). */
  prompts?: PromptRegistry;
  /** Storage to serve (default: in memory, holding {@link sampleStorageEntries}). */
  storage?: MemoryStorage;
  /** Event bus (default: a fresh one); TLS serves no `subscribe`, as it has no streams. */
  events?: EventBus;
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
  /** Logger (default: project pino logger, component `tls-orchestrator`). */
  logger?: Logger;
}

/** Default of {@link TlsOrchestratorOptions.maxHandshakes}. */
export const TLS_DEFAULT_MAX_HANDSHAKES = 256;

/** Default of {@link TlsOrchestratorOptions.maxHandshakesPerAddress}. */
export const TLS_DEFAULT_MAX_HANDSHAKES_PER_ADDRESS = 32;

/** Default per-connection request cap of {@link TlsOrchestratorOptions.maxStreams}. */
export const TLS_DEFAULT_MAX_STREAMS = 1000;

/**
 * Bytes of waiting request frames per connection above which the server stops reading from it.
 * While paused it cannot see cancellations either, so this is a memory bound, not the
 * concurrency limit (that is `maxStreams`).
 */
const MAX_BACKLOG_BYTES = 32 * 1024 * 1024;

/** How long `stop()` lets connections flush their last frames before destroying them (ms). */
const STOP_GRACE_MS = 1_000;

/**
 * Starts the reference orchestrator on TLS 1.3 / TCP.
 *
 * Stats: `streamsOpened` counts requests received, `streamsCompleted` responses written,
 * `streamsCancelled` requests cancelled by the client while running, `activeStreams` requests
 * running or awaiting their write, `framesTooLarge` / `malformedRequests` connection faults.
 *
 * @returns the same shape as {@link startOrchestrator}; `port` is a TCP port
 * @throws CertStoreError when the cert store cannot be used; RangeError for bad options;
 *   the listen error (e.g. `EADDRINUSE`) when the port cannot be bound
 */
export async function startTlsOrchestrator(options: TlsOrchestratorOptions = {}): Promise<RunningOrchestrator> {
  const log = options.logger ?? childLogger("tls-orchestrator");
  const maxStreams = options.maxStreams ?? TLS_DEFAULT_MAX_STREAMS;
  if (!Number.isInteger(maxStreams) || maxStreams < 1) throw new RangeError(`maxStreams must be a positive integer`);
  const maxHandshakes = options.maxHandshakes ?? TLS_DEFAULT_MAX_HANDSHAKES;
  if (!Number.isInteger(maxHandshakes) || maxHandshakes < 1) throw new RangeError(`maxHandshakes must be a positive integer`);
  const maxPerAddress = options.maxHandshakesPerAddress ?? TLS_DEFAULT_MAX_HANDSHAKES_PER_ADDRESS;
  if (!Number.isInteger(maxPerAddress) || maxPerAddress < 1) throw new RangeError(`maxHandshakesPerAddress must be a positive integer`);
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  if (!(keepAliveMs > 0)) throw new RangeError(`keepAliveMs must be positive`);
  const certsDir = options.tls ? undefined : (options.certsDir ?? defaultCertsDir());
  const material =
    options.tls ?? (await ensureCertStore(certsDir ?? defaultCertsDir(), options.certName ?? ORCHESTRATOR_CERT_NAME));
  const tools = options.tools ?? new ToolRegistry(builtinTools());
  const prompts = options.prompts ?? new PromptRegistry(builtinPrompts());
  const storage = options.storage ?? new MemoryStorage(sampleStorageEntries());
  const events = options.events ?? new EventBus();
  const listenHost = options.host ?? "127.0.0.1";

  const stats: OrchestratorStats = {
    connections: 0,
    streamsOpened: 0,
    streamsCompleted: 0,
    streamsCancelled: 0,
    framesTooLarge: 0,
    malformedRequests: 0,
    unsupportedRequests: 0,
    toolCalls: 0,
    activeStreams: 0,
    peakActiveStreams: 0,
  };
  // The same unary dispatch as the QUIC server (src/orchestrator/dispatch.ts): tools, prompts, storage.
  const services: OrchestratorServices = { tools, prompts, storage, events, stats };
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
  // TCP connections still in their TLS handshake, by peer address and port, and by remote IP
  // address (oldest first).
  const handshaking = new Map<string, Socket>();
  const byAddress = new Map<string, Socket[]>();
  const peerKey = (s: Socket) => `${s.remoteAddress}|${s.remotePort}`;
  const handshakeDone = (key: string) => {
    const raw = handshaking.get(key);
    if (raw === undefined) return;
    handshaking.delete(key);
    const address = raw.remoteAddress ?? "";
    const list = byAddress.get(address);
    if (list === undefined) return;
    const i = list.indexOf(raw);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) byAddress.delete(address);
  };
  const refuse = (raw: Socket) => {
    stats.handshakesRefused = (stats.handshakesRefused ?? 0) + 1;
    raw.destroy();
  };
  server.on("connection", (raw: Socket) => {
    const address = raw.remoteAddress ?? "";
    const own = byAddress.get(address)?.length ?? 0;
    if (own >= maxPerAddress) return refuse(raw);
    if (handshaking.size >= maxHandshakes) {
      let busiest: Socket[] | undefined;
      for (const list of byAddress.values()) if (busiest === undefined || list.length > busiest.length) busiest = list;
      if (busiest === undefined || busiest.length <= own) return refuse(raw);
      const oldest = busiest[0]!;
      handshakeDone(peerKey(oldest));
      refuse(oldest);
    }
    const key = peerKey(raw);
    handshaking.set(key, raw);
    const list = byAddress.get(address);
    if (list === undefined) byAddress.set(address, [raw]);
    else list.push(raw);
    raw.once("close", () => {
      if (handshaking.get(key) === raw) handshakeDone(key);
    });
  });
  server.on("secureConnection", (socket: tls.TLSSocket) => {
    handshakeDone(peerKey(socket));
    if (stopping) {
      socket.destroy();
      return;
    }
    if (socket.alpnProtocol !== TLS_ALPN) {
      log.debug({ alpn: socket.alpnProtocol }, "client did not negotiate ALPN orchestra-plugin; closing");
      socket.destroy();
      return;
    }
    stats.connections++;
    socket.setNoDelay(true);
    socket.setKeepAlive(true, keepAliveMs);
    const conn = new ClientConnection(socket, services, stats, maxStreams, log);
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
  let stopP: Promise<void> | undefined;
  return {
    host: bound.address,
    port: bound.port,
    address: formatHostPort(bound.address, bound.port),
    caPem: material.caPem,
    certPem: material.certPem,
    certsDir,
    tools,
    stats,
    stop(): Promise<void> {
      stopP ??= (async () => {
        stopping = true;
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        await Promise.all([...connections].map((c) => c.shutdown(STOP_GRACE_MS)));
        await closed;
      })();
      return stopP;
    },
  };
}

interface Running {
  ac: AbortController;
  /** Request kind, and the tool name for `tool_call` (for logs). */
  what: string;
  /** The request's answer is queued or written: it no longer counts against the cap. */
  done: boolean;
}

/** One client connection: frame decoding, concurrent dispatch, ordered frame writing. */
class ClientConnection {
  private readonly decoder = new FrameDecoder(MAX_FRAME_BYTES);
  private readonly writer: FrameWriter;
  private readonly running = new Map<string, Running>();
  /** Requests running or with an answer not yet handed to the socket. */
  private busy = 0;
  /** Requests received but not started (the cap was reached), with their frame sizes. */
  private readonly backlog: Array<{ request: PluginRequest; bytes: number }> = [];
  private backlogBytes = 0;
  private paused = false;
  private closed = false;

  constructor(
    private readonly socket: tls.TLSSocket,
    private readonly services: OrchestratorServices,
    private readonly stats: OrchestratorStats,
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
    for (const r of this.running.values()) r.ac.abort(new Error(reason));
    this.running.clear();
  }

  /**
   * Server stop: answers every running request with `shutting_down`, aborts the handlers, ends
   * the connection and destroys it after `graceMs` if the client does not close.
   */
  async shutdown(graceMs: number): Promise<void> {
    if (!this.closed) {
      for (const [id, r] of this.running) {
        r.ac.abort(new Error("orchestrator stopping"));
        this.write(requestErrorResponse(id, RequestErrorCode.SHUTDOWN, "orchestrator stopping"));
      }
      this.running.clear();
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

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    let payloads: Uint8Array[];
    try {
      payloads = this.decoder.push(chunk);
    } catch (e) {
      if (e instanceof FrameTooLargeError) this.stats.framesTooLarge++;
      else this.stats.malformedRequests++;
      this.fatal(`request frame refused: ${(e as Error).message}`);
      return;
    }
    for (const payload of payloads) {
      let request: PluginRequest;
      try {
        request = fromBinary(PluginRequestSchema, payload, PAYLOAD_READ_OPTIONS);
      } catch (e) {
        this.stats.malformedRequests++;
        this.fatal(`undecodable PluginRequest: ${(e as Error).message}`);
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
      this.onRequest(next.request);
    }
    this.updatePause();
  }

  /** `stream_cancel` for `requestId`: abort it if running, drop it if not started yet. */
  private cancel(requestId: string): void {
    const r = this.running.get(requestId);
    if (r) {
      this.stats.streamsCancelled++;
      this.running.delete(requestId);
      r.ac.abort(new Error("client cancelled the request"));
      this.log.debug({ requestId, what: r.what }, "request cancelled by the client");
      return;
    }
    const i = this.backlog.findIndex((q) => q.request.requestId === requestId);
    if (i >= 0) {
      this.backlogBytes -= this.backlog[i]!.bytes;
      this.backlog.splice(i, 1);
      this.stats.streamsCancelled++;
    }
  }

  private onRequest(request: PluginRequest): void {
    const id = request.requestId;
    if (id === "" || this.running.has(id)) {
      this.stats.malformedRequests++;
      this.log.warn({ requestId: id }, id === "" ? "request without request_id dropped" : "duplicate request_id in flight dropped");
      return;
    }
    this.stats.streamsOpened++;
    this.stats.activeStreams++;
    if (this.stats.activeStreams > this.stats.peakActiveStreams) this.stats.peakActiveStreams = this.stats.activeStreams;
    this.busy++;
    const what = request.request.case === "toolCall" ? `tool_call ${request.request.value.toolName}` : String(request.request.case);
    const r: Running = { ac: new AbortController(), what, done: false };
    this.running.set(id, r);
    void this.serve(request, r)
      .catch((e: unknown) => {
        this.log.warn({ err: e instanceof Error ? e.message : String(e) }, "request handler failed");
        if (this.running.get(id) === r && !r.ac.signal.aborted) {
          this.write(requestErrorResponse(id, RequestErrorCode.INTERNAL, "internal error"));
        }
      })
      .finally(() => {
        if (this.running.get(id) === r) this.running.delete(id);
        this.stats.activeStreams--;
        if (!r.done) this.release(r);
      });
  }

  private async serve(request: PluginRequest, r: Running): Promise<void> {
    const id = request.requestId;
    let response = await dispatchUnary(this.services, request, r.ac.signal);
    if (r.ac.signal.aborted || this.closed) return; // cancelled, or the connection is gone
    if (response === undefined) {
      this.stats.unsupportedRequests++;
      response = refusal(request);
    }
    let bytes = toBinary(PluginResponseSchema, response);
    if (bytes.byteLength > MAX_FRAME_BYTES) {
      if (response.response.case === "toolCall") {
        bytes = toBinary(PluginResponseSchema, resultTooLarge(id, bytes.byteLength));
      } else {
        this.write(
          requestErrorResponse(id, RequestErrorCode.FRAME_TOO_LARGE, `response of ${bytes.byteLength} bytes exceeds 16 MiB`),
          r,
        );
        return;
      }
    }
    this.running.delete(id);
    this.writeBytes(bytes, r);
    this.stats.streamsCompleted++;
  }

  private write(response: PluginResponse, r?: Running): void {
    this.writeBytes(toBinary(PluginResponseSchema, response), r);
  }

  private writeBytes(bytes: Uint8Array, r?: Running): void {
    if (r) {
      r.done = true;
      this.writer.enqueue(bytes, { onWritten: () => this.release(r) });
    } else {
      this.writer.enqueue(bytes);
    }
  }

  /** The request no longer counts against the cap. */
  private release(r: Running): void {
    r.done = true;
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

function resultTooLarge(requestId: string, bytes: number): PluginResponse {
  return create(PluginResponseSchema, {
    requestId,
    response: {
      case: "toolCall",
      value: {
        success: false,
        errorCode: "result_too_large",
        errorMessage: `tool result of ${bytes} bytes exceeds the ${MAX_FRAME_BYTES}-byte frame limit`,
      },
    },
  });
}

