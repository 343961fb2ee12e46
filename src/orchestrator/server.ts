/**
 * The reference orchestrator: a QUIC server speaking the Orchestra plugin protocol
 * (orchestra-protocol.md, "Transport", "Framing and RPC shape", "Orchestrator side").
 * It runs on the project's QUIC engine (src/quic/engine: quiche driven directly, no web
 * streams; docs/quic-performance.md), with mutual TLS against the cert store's CA.
 *
 * One RPC per client-opened bidirectional stream: read one `PluginRequest` frame, answer with one
 * `PluginResponse` frame (echoing `request_id`) and finish the stream. Served kinds (see
 * ./dispatch.ts for the answers):
 * - unary: `health`, `list_tools`, `tool_call` (routed by name to the {@link ToolRegistry};
 *   failures become `ToolResponse{success:false, error_code, error_message}`), `list_prompts`,
 *   `prompt_get`, `storage_read`, `storage_write`, `storage_delete`, `storage_list`;
 * - streaming: `stream_start` (N × `stream_chunk`, then `stream_end` written together with the
 *   FIN) and `subscribe` (`event_delivery` frames until the client cancels the stream). During a
 *   streaming RPC a `stream_cancel` frame from the client, or a reset of the stream, aborts it.
 *   Tool-set changes of the registry are published on the `tools` topic (`list_changed`).
 *
 * Any other request kind is answered `tool_call {success: false, error_code: "unknown_request"}`
 * (./dispatch.ts {@link refusal}), as the upstream Go orchestrator does.
 *
 * Stream-level errors (RESET_STREAM + STOP_SENDING with a {@link StreamCode}), the server staying up:
 * - a frame declaring more than 16 MiB → `FRAME_TOO_LARGE` (3), raised once the 4-byte header
 *   is read, nothing buffered;
 * - a truncated frame or undecodable protobuf → `MALFORMED` (4);
 * - a response that would exceed 16 MiB: a `tool_call` gets `ToolResponse{success:false,
 *   error_code:"result_too_large"}`, anything else `FRAME_TOO_LARGE`.
 * A stream the client cancels aborts the running handler's `signal`.
 */
import { createHmac } from "node:crypto";
import { performance } from "node:perf_hooks";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  PluginRequestSchema,
  PluginResponseSchema,
  type PluginRequest,
  type PluginResponse,
} from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { childLogger, type Logger } from "../log.js";
import { defaultCertsDir, ensureCertStore, ORCHESTRATOR_CERT_NAME, type TlsMaterial } from "../pki/store.js";
import { FrameError, FrameTooLargeError, MAX_FRAME_BYTES, PAYLOAD_READ_OPTIONS } from "../quic/frame.js";
import { ALPN, isLoopbackHost, StreamAbort, StreamCode, udpPayloadConfig } from "../quic/quic-common.js";
import { QuicServerEndpoint, type QuicStream } from "../quic/engine/index.js";
import { formatHostPort } from "../quic/address.js";
import { builtinTools } from "./builtin-tools.js";
import { ToolRegistry } from "./registry.js";
import { DEFAULT_MAX_STREAMS } from "./defaults.js";
import { dispatchStream, dispatchUnary, EventBus, isStreamingRequest, refusal, TOOLS_TOPIC, type OrchestratorServices } from "./dispatch.js";
import { builtinPrompts, PromptRegistry } from "./prompts.js";
import { MemoryStorage, sampleStorageEntries } from "./storage.js";

/** Options of {@link startOrchestrator}. */
export interface OrchestratorOptions {
  /** Listen address (default `127.0.0.1`). */
  host?: string;
  /** UDP port; 0 (default) picks an ephemeral one. */
  port?: number;
  /** Cert store directory when {@link tls} is absent (default `~/.orchestra/certs`). */
  certsDir?: string;
  /** Party name in the cert store (default `orchestrator`). */
  certName?: string;
  /** PEM material to use instead of the cert store. */
  tls?: TlsMaterial;
  /** Tools to serve (default: a registry of the built-ins `echo`, `slow`, `count`, `stats`). */
  tools?: ToolRegistry;
  /** Prompts to serve (default: the built-ins `greet` and `review`). */
  prompts?: PromptRegistry;
  /** Storage to serve (default: in memory, holding {@link sampleStorageEntries}). */
  storage?: MemoryStorage;
  /** Event bus for `subscribe` (default: a fresh one). */
  events?: EventBus;
  /** Concurrent bidirectional streams granted to each client (`initialMaxStreamsBidi`, default 1000). */
  maxStreams?: number;
  /** QUIC max idle timeout in ms (default 300 000, like existing parties). */
  idleTimeoutMs?: number;
  /** Keep-alive interval in ms (default 15 000; must be below the idle timeout). */
  keepAliveMs?: number;
  /**
   * Largest UDP datagram payload to send, in bytes (1200..65527). Default: 16 KiB when listening
   * on loopback (every client is then local), else 1350 (quiche's default).
   */
  udpPayloadBytes?: number;
  /** Logger (default: project pino logger, component `orchestrator`). */
  logger?: Logger;
}

/** Per-server counters (monotonic except `activeStreams`). */
export interface OrchestratorStats {
  /** Client connections accepted. */
  connections: number;
  /** RPC streams opened by clients. */
  streamsOpened: number;
  /** Streams answered with a complete response frame. */
  streamsCompleted: number;
  /** Streams the client cancelled (reset/stopped) before the response was fully written. */
  streamsCancelled: number;
  /** Request frames refused for declaring more than 16 MiB. */
  framesTooLarge: number;
  /** Truncated frames or undecodable requests. */
  malformedRequests: number;
  /** Requests of a kind this server does not serve. */
  unsupportedRequests: number;
  /** `tool_call` requests routed to the registry. */
  toolCalls: number;
  /** `stream_start` requests served. */
  streamCalls?: number;
  /** `subscribe` requests served. */
  subscriptions?: number;
  /**
   * Connection attempts refused because the cap on unfinished handshakes was reached (QUIC:
   * client Initials dropped, `maxHandshakes`; TLS: TCP connections closed at once).
   */
  handshakesRefused?: number;
  /** Streams currently being handled. */
  activeStreams: number;
  /** Highest {@link activeStreams} seen. */
  peakActiveStreams: number;
}

/** A running orchestrator. */
export interface RunningOrchestrator {
  /** Bound IP address. */
  host: string;
  /** Bound UDP port. */
  port: number;
  /** `host:port` (IPv6 in brackets). */
  address: string;
  /** CA certificate (PEM) clients must trust / be signed by. */
  caPem: string;
  /** The server's certificate (PEM). */
  certPem: string;
  /** Cert store directory used, if any. */
  certsDir: string | undefined;
  /** The registry being served. */
  tools: ToolRegistry;
  /** The prompts being served (QUIC server). */
  prompts?: PromptRegistry;
  /** The storage being served (QUIC server). */
  storage?: MemoryStorage;
  /** The event bus of `subscribe` (QUIC server); `publish` on it reaches subscribed clients. */
  events?: EventBus;
  /** Live counters. */
  readonly stats: Readonly<OrchestratorStats>;
  /** Aborts running handlers and stops the server (closing client connections). Idempotent. */
  stop(): Promise<void>;
}

export { DEFAULT_MAX_STREAMS };

/**
 * Starts the reference orchestrator.
 * @throws CertStoreError when the cert store cannot be used; RangeError for bad options;
 *   the socket error when the UDP port cannot be bound; Error when quiche cannot load the TLS material
 */
export async function startOrchestrator(options: OrchestratorOptions = {}): Promise<RunningOrchestrator> {
  const log = options.logger ?? childLogger("orchestrator");
  const idleTimeoutMs = options.idleTimeoutMs ?? 300_000;
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  const maxStreams = options.maxStreams ?? DEFAULT_MAX_STREAMS;
  if (!(idleTimeoutMs > 0) || !(keepAliveMs > 0) || keepAliveMs >= idleTimeoutMs) {
    throw new RangeError(`keepAliveMs (${keepAliveMs}) must be positive and below idleTimeoutMs (${idleTimeoutMs})`);
  }
  if (!Number.isInteger(maxStreams) || maxStreams < 1) throw new RangeError(`maxStreams must be a positive integer`);
  const certsDir = options.tls ? undefined : (options.certsDir ?? defaultCertsDir());
  const tls =
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
  const running = new Map<AbortController, QuicStream>();

  const udp = udpPayloadConfig(isLoopbackHost(listenHost), options.udpPayloadBytes);
  // Own QUIC engine over quiche (src/quic/engine; docs/quic-performance.md). Mutual TLS: the
  // client must present a certificate signed by our CA. 4 MiB UDP socket buffers.
  const server = await QuicServerEndpoint.listen({
    host: listenHost,
    port: options.port ?? 0,
    tls,
    alpn: [ALPN],
    idleTimeoutMs,
    keepAliveMs,
    maxStreamsBidi: maxStreams,
    maxSendUdpPayload: udp.maxSendUdpPayloadSize,
    maxRecvUdpPayload: udp.maxRecvUdpPayloadSize,
    // Stable across restarts with the same key: a restarted orchestrator answers its clients'
    // old connections with a stateless reset, so they reconnect at once (RFC 9000 §10.3).
    statelessResetSecret: createHmac("sha256", tls.keyPem).update("orchestra-stdio stateless reset v1").digest(),
  });

  Object.defineProperty(stats, "handshakesRefused", { enumerable: true, get: () => server.initialsRefused });
  const services: OrchestratorServices = { tools, prompts, storage, events, stats };
  const stopWatchingTools = tools.onChange((change) => events.publish(TOOLS_TOPIC, "list_changed", { change: change.kind, name: change.name }));
  const handler = new StreamHandler(services, stats, running, log);
  server.onConnection = (conn) => {
    stats.connections++;
    conn.onStream = (stream) => handler.handle(stream);
    conn.onClose = (info) => {
      if (info.kind !== "local") log.debug({ reason: info }, "client connection closed");
    };
  };
  // Connection failures before the handshake completed (e.g. a refused client certificate).
  server.onHandshakeFailure = (info) => {
    log.debug({ reason: info }, "client handshake failed");
  };

  const { host, port } = server.address;
  let stopP: Promise<void> | undefined;
  return {
    host,
    port,
    address: formatHostPort(host, port),
    caPem: tls.caPem,
    certPem: tls.certPem,
    certsDir,
    tools,
    prompts,
    storage,
    events,
    stats,
    stop(): Promise<void> {
      stopP ??= (async () => {
        stopWatchingTools();
        // Tell clients why their calls end (SHUTDOWN), sent before the CONNECTION_CLOSE.
        const reason = new StreamAbort(StreamCode.SHUTDOWN, "orchestrator stopping");
        for (const [ac, stream] of running) {
          ac.abort(reason);
          stream.reset(StreamCode.SHUTDOWN);
        }
        for (const conn of server.connections()) conn.sendNow();
        await server.close(0, "orchestrator stopping");
      })();
      return stopP;
    },
  };
}

/** How long an answered stream waits for the client's FIN before reading stops (ms). */
const FIN_GRACE_MS = 5_000;

/** Per-stream state of {@link StreamHandler}. */
interface Rpc {
  stream: QuicStream;
  ac: AbortController;
  request: PluginRequest | undefined;
  responded: boolean;
  cancelled: boolean;
  finished: boolean;
}

/**
 * Serves RPC streams: the first frame is the request; a second frame is only allowed during a
 * streaming RPC (`stream_cancel`); the client's FIN is expected right after the request.
 */
class StreamHandler {
  /** Answered streams still waiting for the client's FIN, in deadline order, and their shared timer. */
  private finWaits: Array<{ stream: QuicStream; deadline: number }> = [];
  private finTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly services: OrchestratorServices,
    private readonly stats: OrchestratorStats,
    private readonly running: Map<AbortController, QuicStream>,
    private readonly log: Logger,
  ) {}

  handle(stream: QuicStream): void {
    this.stats.streamsOpened++;
    this.stats.activeStreams++;
    if (this.stats.activeStreams > this.stats.peakActiveStreams) this.stats.peakActiveStreams = this.stats.activeStreams;
    const rpc: Rpc = { stream, ac: new AbortController(), request: undefined, responded: false, cancelled: false, finished: false };
    this.running.set(rpc.ac, stream);
    stream.onFrame = (payload) => {
      if (stream.framesRead === 1) this.onRequest(rpc, payload);
      else this.onExtraFrame(rpc, payload);
    };
    stream.onReadEnd = (error) => {
      if (!error) {
        if (stream.framesRead === 0) {
          this.stats.malformedRequests++;
          this.refuse(rpc, StreamCode.MALFORMED);
        }
        return; // FIN after the request: nothing to do
      }
      if (error instanceof FrameTooLargeError) {
        this.stats.framesTooLarge++;
        this.refuse(rpc, StreamCode.FRAME_TOO_LARGE);
      } else if (error instanceof FrameError) {
        // Truncated: before the request, or trailing bytes after it.
        this.stats.malformedRequests++;
        this.refuse(rpc, StreamCode.MALFORMED);
      } else this.clientGone(rpc);
    };
    stream.onWriteError = () => this.clientGone(rpc);
  }

  /** The client reset/stopped the stream, or the connection ended. */
  private clientGone(rpc: Rpc): void {
    if (!rpc.responded && !rpc.cancelled) {
      rpc.cancelled = true;
      this.stats.streamsCancelled++;
    }
    rpc.ac.abort(new StreamAbort(StreamCode.CANCELLED, "client cancelled the stream"));
    if (rpc.request === undefined) this.finish(rpc);
  }

  /** Resets the stream with `code`, aborts a running handler, and ends the RPC if none runs. */
  private refuse(rpc: Rpc, code: StreamCode): void {
    rpc.stream.reset(code);
    if (!rpc.ac.signal.aborted) rpc.ac.abort(new StreamAbort(code, "stream refused"));
    if (rpc.request === undefined) this.finish(rpc);
  }

  private finish(rpc: Rpc): void {
    if (rpc.finished) return;
    rpc.finished = true;
    this.running.delete(rpc.ac);
    this.stats.activeStreams--;
    if (rpc.responded && !rpc.stream.readFinished) this.awaitFin(rpc.stream);
  }

  /**
   * An answered stream whose request FIN has not arrived: give it {@link FIN_GRACE_MS}, then
   * stop reading (STOP_SENDING) so its state is released even if the FIN never comes.
   */
  private awaitFin(stream: QuicStream): void {
    this.finWaits.push({ stream, deadline: performance.now() + FIN_GRACE_MS });
    if (!this.finTimer) this.armFinTimer(FIN_GRACE_MS);
  }

  private armFinTimer(ms: number): void {
    this.finTimer = setTimeout(() => {
      this.finTimer = undefined;
      const now = performance.now();
      let i = 0;
      while (i < this.finWaits.length && this.finWaits[i]!.deadline <= now + 1) {
        const { stream } = this.finWaits[i]!;
        if (!stream.readFinished) stream.stopReading(StreamCode.NONE);
        i++;
      }
      this.finWaits = this.finWaits.slice(i);
      const head = this.finWaits[0];
      if (head) this.armFinTimer(Math.max(10, head.deadline - now));
    }, ms);
    this.finTimer.unref();
  }

  private onExtraFrame(rpc: Rpc, payload: Uint8Array): void {
    const request = rpc.request;
    if (request !== undefined && isStreamingRequest(request) && rpc.stream.framesRead === 2) {
      let next: PluginRequest | undefined;
      try {
        next = fromBinary(PluginRequestSchema, payload, PAYLOAD_READ_OPTIONS);
      } catch {
        next = undefined;
      }
      if (next?.request.case === "streamCancel") {
        if (!rpc.responded && !rpc.cancelled) {
          rpc.cancelled = true;
          this.stats.streamsCancelled++;
        }
        this.log.debug({ requestId: request.requestId }, "stream_cancel received");
        rpc.ac.abort(new StreamAbort(StreamCode.CANCELLED, "client sent stream_cancel"));
        return;
      }
    }
    this.stats.malformedRequests++;
    this.refuse(rpc, StreamCode.MALFORMED);
  }

  private onRequest(rpc: Rpc, payload: Uint8Array): void {
    let request: PluginRequest;
    try {
      request = fromBinary(PluginRequestSchema, payload, PAYLOAD_READ_OPTIONS);
    } catch {
      this.stats.malformedRequests++;
      this.refuse(rpc, StreamCode.MALFORMED);
      return;
    }
    rpc.request = request;
    const work = isStreamingRequest(request) ? this.serveStreaming(rpc, request) : this.serveUnary(rpc, request);
    work
      .catch((e: unknown) => {
        this.log.warn({ err: e instanceof Error ? e.message : String(e) }, "stream handler failed");
        rpc.stream.reset(StreamCode.INTERNAL);
      })
      .finally(() => this.finish(rpc));
  }

  private async serveUnary(rpc: Rpc, request: PluginRequest): Promise<void> {
    const { stream, ac } = rpc;
    let response = await dispatchUnary(this.services, request, ac.signal);
    if (response === undefined) {
      this.stats.unsupportedRequests++;
      response = refusal(request);
    }
    if (ac.signal.aborted) return; // the client went away (or we are stopping): nothing to write

    let bytes = toBinary(PluginResponseSchema, response);
    if (bytes.byteLength > MAX_FRAME_BYTES) {
      if (response.response.case !== "toolCall") {
        stream.reset(StreamCode.FRAME_TOO_LARGE);
        return;
      }
      bytes = toBinary(
        PluginResponseSchema,
        create(PluginResponseSchema, {
          requestId: request.requestId,
          response: {
            case: "toolCall",
            value: {
              success: false,
              errorCode: "result_too_large",
              errorMessage: `tool result of ${bytes.byteLength} bytes exceeds the ${MAX_FRAME_BYTES}-byte frame limit`,
            },
          },
        }),
      );
    }
    if (!this.write(rpc, bytes, true)) return;
    rpc.responded = true;
    this.stats.streamsCompleted++;
  }

  /** Writes one frame (`fin`: and the FIN with its last bytes); false when the stream is gone. */
  private write(rpc: Rpc, bytes: Uint8Array, fin: boolean): boolean {
    if (rpc.stream.writeFinished) return false;
    try {
      rpc.stream.writeFrame(bytes, fin);
      return true;
    } catch (e) {
      if (e instanceof FrameTooLargeError) throw e;
      return false; // reset by the client or the connection closed
    }
  }

  /**
   * A streaming RPC: frames as the handler emits them, the last one (if any) together with the
   * FIN. A `stream_cancel` frame from the client (see {@link onExtraFrame}) or a reset aborts it.
   */
  private async serveStreaming(rpc: Rpc, request: PluginRequest): Promise<void> {
    const { stream, ac } = rpc;
    let failed = false;
    let last: PluginResponse | undefined;
    try {
      last = await dispatchStream(this.services, request, ac.signal, (frame) => {
        if (failed || ac.signal.aborted) return;
        if (!this.write(rpc, toBinary(PluginResponseSchema, frame), false)) failed = true;
      });
    } catch (e) {
      if (e instanceof FrameTooLargeError) {
        ac.abort();
        stream.reset(StreamCode.FRAME_TOO_LARGE);
        return;
      }
      throw e;
    }
    if (ac.signal.aborted || failed) {
      if (request.request.case === "subscribe" && !rpc.cancelled && !ac.signal.aborted) stream.reset(StreamCode.NONE);
      return; // cancelled by the client or the server is stopping: nothing more to write
    }
    if (!last) {
      stream.reset(StreamCode.NONE);
      return;
    }
    try {
      if (!this.write(rpc, toBinary(PluginResponseSchema, last), true)) return;
    } catch (e) {
      if (e instanceof FrameTooLargeError) {
        stream.reset(StreamCode.FRAME_TOO_LARGE);
        return;
      }
      throw e;
    }
    rpc.responded = true;
    this.stats.streamsCompleted++;
  }
}
