/**
 * The reference orchestrator: a QUIC server speaking the Orchestra plugin protocol
 * (orchestra-protocol.md, "Transport", "Framing and RPC shape", "Orchestrator side").
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
 * Stream-level errors (RESET_STREAM + STOP_SENDING with a {@link StreamCode}), the server staying up:
 * - any other request kind → `UNSUPPORTED` (5): there is no generic error response in the protocol;
 * - a frame declaring more than 16 MiB → `FRAME_TOO_LARGE` (3), raised once the 4-byte header
 *   is read, nothing buffered;
 * - a truncated frame or undecodable protobuf → `MALFORMED` (4);
 * - a response that would exceed 16 MiB: a `tool_call` gets `ToolResponse{success:false,
 *   error_code:"result_too_large"}`, anything else `FRAME_TOO_LARGE`.
 * A stream the client cancels aborts the running handler's `signal`.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { QUICServer, errors as quicErrors, events as quicEvents } from "@matrixai/quic";
import type { QUICConnection, QUICStream } from "@matrixai/quic";
import {
  HealthResult_Status,
  PluginRequestSchema,
  PluginResponseSchema,
  type PluginRequest,
  type PluginResponse,
} from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { childLogger, type Logger } from "../log.js";
import { defaultCertsDir, ensureCertStore, ORCHESTRATOR_CERT_NAME, type TlsMaterial } from "../quic/certs.js";
import { FrameError, FrameTooLargeError, MAX_FRAME_BYTES } from "../quic/frame.js";
import {
  ALPN,
  codeToReason,
  createServerCrypto,
  enlargeUdpBuffers,
  isLoopbackHost,
  quietQuicLogger,
  readOneFrame,
  reasonToCode,
  StreamAbort,
  StreamCode,
  udpPayloadConfig,
  writeFrameAndClose,
} from "../quic/quic-common.js";
import { formatHostPort } from "../quic/address.js";
import { encodeFrameParts } from "../quic/frame.js";
import { builtinTools } from "./builtin-tools.js";
import { ToolRegistry } from "./registry.js";
import { DEFAULT_MAX_STREAMS } from "./defaults.js";
import { dispatchStream, dispatchUnary, EventBus, isStreamingRequest, TOOLS_TOPIC, type OrchestratorServices } from "./dispatch.js";
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
   * on loopback (every client is then local), else 1350 (the library default).
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
 *   the library's error when the socket cannot be bound
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
  const running = new Map<AbortController, QUICStream>();

  const server = new QUICServer({
    crypto: await createServerCrypto(),
    config: {
      key: tls.keyPem,
      cert: tls.certPem,
      ca: tls.caPem,
      verifyPeer: true,
      applicationProtos: [ALPN],
      initialMaxStreamsBidi: maxStreams,
      maxIdleTimeout: idleTimeoutMs,
      keepAliveIntervalTime: keepAliveMs,
      readableChunkSize: 16 * 1024,
      ...udpPayloadConfig(isLoopbackHost(listenHost), options.udpPayloadBytes),
    },
    reasonToCode,
    codeToReason,
    logger: quietQuicLogger("quic-server"),
  });

  const services: OrchestratorServices = { tools, prompts, storage, events, stats };
  const stopWatchingTools = tools.onChange((change) => events.publish(TOOLS_TOPIC, "list_changed", { change: change.kind, name: change.name }));
  const handler = new StreamHandler(services, stats, running, log);
  server.addEventListener(quicEvents.EventQUICServerConnection.name, (evt: Event) => {
    const conn = (evt as unknown as { detail: QUICConnection }).detail;
    stats.connections++;
    conn.addEventListener(quicEvents.EventQUICConnectionStream.name, (se: Event) => {
      handler.handle((se as unknown as { detail: QUICStream }).detail);
    });
  });
  // Connection failures (bad client certificate, idle timeouts) are re-dispatched on the server.
  server.addEventListener(quicEvents.EventQUICConnectionError.name, (evt: Event) => {
    const e = (evt as unknown as { detail: unknown }).detail;
    log.debug({ err: e instanceof Error ? e.message : String(e) }, "client connection closed with an error");
  });

  await server.start({ host: listenHost, port: options.port ?? 0 });
  enlargeUdpBuffers(server); // 4 MiB UDP buffers: bursts of streams overflow the default (docs/quic-performance.md)
  const host = String(server.host);
  const port = Number(server.port);
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
        // Tell clients why their calls end (SHUTDOWN) before the library force-closes streams.
        const reason = new StreamAbort(StreamCode.SHUTDOWN, "orchestrator stopping");
        for (const [ac, stream] of running) {
          ac.abort(reason);
          cancel(stream, StreamCode.SHUTDOWN, reason.message);
        }
        await server.stop({ isApp: true, errorCode: 0, force: true });
      })();
      return stopP;
    },
  };
}

/** How long to wait for the client's FIN after answering before releasing the stream (ms). */
const FIN_GRACE_MS = 5_000;

class StreamHandler {
  constructor(
    private readonly services: OrchestratorServices,
    private readonly stats: OrchestratorStats,
    private readonly running: Map<AbortController, QUICStream>,
    private readonly log: Logger,
  ) {}

  handle(stream: QUICStream): void {
    this.stats.streamsOpened++;
    this.stats.activeStreams++;
    if (this.stats.activeStreams > this.stats.peakActiveStreams) this.stats.peakActiveStreams = this.stats.activeStreams;
    const ac = new AbortController();
    this.running.set(ac, stream);
    const state = { responded: false, cancelled: false };
    const onStreamError = (evt: Event): void => {
      const e = (evt as unknown as { detail: unknown }).detail;
      if (e instanceof quicErrors.ErrorQUICStreamPeerRead || e instanceof quicErrors.ErrorQUICStreamPeerWrite) {
        if (!state.responded && !state.cancelled) {
          state.cancelled = true;
          this.stats.streamsCancelled++;
        }
        ac.abort(new StreamAbort(StreamCode.CANCELLED, "client cancelled the stream"));
      }
    };
    stream.addEventListener(quicEvents.EventQUICStreamError.name, onStreamError);
    void this.serve(stream, ac, state)
      .catch((e: unknown) => {
        this.log.warn({ err: e instanceof Error ? e.message : String(e) }, "stream handler failed");
        cancel(stream, StreamCode.INTERNAL, "internal error");
      })
      .finally(() => {
        this.running.delete(ac);
        this.stats.activeStreams--;
      });
  }

  private async serve(
    stream: QUICStream,
    ac: AbortController,
    state: { responded: boolean; cancelled: boolean },
  ): Promise<void> {
    const reader = stream.readable.getReader();
    let payload: Uint8Array;
    let extra: number;
    try {
      ({ payload, extra } = await readOneFrame(reader));
    } catch (e) {
      if (e instanceof FrameTooLargeError) {
        this.stats.framesTooLarge++;
        cancel(stream, StreamCode.FRAME_TOO_LARGE, e.message);
      } else if (e instanceof FrameError) {
        this.stats.malformedRequests++;
        cancel(stream, StreamCode.MALFORMED, e.message);
      } else {
        cancel(stream, StreamCode.CANCELLED, "read failed");
      }
      return;
    }
    if (extra > 0) {
      this.stats.malformedRequests++;
      cancel(stream, StreamCode.MALFORMED, "more than one request frame on the stream");
      return;
    }
    let request: PluginRequest;
    try {
      request = fromBinary(PluginRequestSchema, payload);
    } catch (e) {
      this.stats.malformedRequests++;
      cancel(stream, StreamCode.MALFORMED, `undecodable PluginRequest: ${(e as Error).message}`);
      return;
    }
    if (isStreamingRequest(request)) {
      await this.serveStreaming(stream, reader, request, ac, state);
      return;
    }
    // Consume the FIN (and detect trailing bytes) in the background while the request runs.
    const tail = reader.read().then(
      (r) => {
        if (!r.done) {
          this.stats.malformedRequests++;
          ac.abort(new StreamAbort(StreamCode.MALFORMED, "trailing bytes"));
          cancel(stream, StreamCode.MALFORMED, "more than one request frame on the stream");
        }
        return true;
      },
      () => true,
    );

    const response = await dispatchUnary(this.services, request, ac.signal);
    if (response === undefined) {
      this.stats.unsupportedRequests++;
      cancel(stream, StreamCode.UNSUPPORTED, `unsupported request kind ${String(request.request.case)}`);
      return;
    }
    if (ac.signal.aborted) return; // the client went away (or we are stopping): nothing to write

    let bytes = toBinary(PluginResponseSchema, response);
    if (bytes.byteLength > MAX_FRAME_BYTES) {
      if (response.response.case !== "toolCall") {
        cancel(stream, StreamCode.FRAME_TOO_LARGE, "response exceeds 16 MiB");
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
    try {
      await writeFrameAndClose(stream, bytes);
    } catch {
      return; // cancelled by the client: counted by the stream error listener
    }
    state.responded = true;
    this.stats.streamsCompleted++;
    // Release the stream even if the client's FIN never arrives.
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      tail,
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), FIN_GRACE_MS);
      }),
    ]);
    clearTimeout(timer);
    if (!finished) cancel(stream, StreamCode.NONE, "request FIN not received");
  }

  /**
   * A streaming RPC: frames as the handler emits them, the last one (if any) together with the
   * FIN. Meanwhile the client's side is read: a `stream_cancel` frame aborts the handler; its FIN
   * changes nothing.
   */
  private async serveStreaming(
    stream: QUICStream,
    reader: ReadableStreamDefaultReader<Uint8Array>,
    request: PluginRequest,
    ac: AbortController,
    state: { responded: boolean; cancelled: boolean },
  ): Promise<void> {
    const tail = readOneFrame(reader).then(
      ({ payload }) => {
        let next: PluginRequest | undefined;
        try {
          next = fromBinary(PluginRequestSchema, payload);
        } catch {
          next = undefined;
        }
        if (next?.request.case === "streamCancel") {
          if (!state.responded && !state.cancelled) {
            state.cancelled = true;
            this.stats.streamsCancelled++;
          }
          this.log.debug({ requestId: request.requestId }, "stream_cancel received");
          ac.abort(new StreamAbort(StreamCode.CANCELLED, "client sent stream_cancel"));
        } else {
          this.stats.malformedRequests++;
          ac.abort(new StreamAbort(StreamCode.MALFORMED, "unexpected frame during a streaming RPC"));
          cancel(stream, StreamCode.MALFORMED, "unexpected frame during a streaming RPC");
        }
        return true;
      },
      () => true, // FIN (or reset: the stream error listener handles it)
    );
    const writer = stream.writable.getWriter();
    let failed = false;
    const writeFrame = (frame: PluginResponse, close: boolean): Promise<void> => {
      const parts = encodeFrameParts(toBinary(PluginResponseSchema, frame)); // throws FrameTooLargeError first
      const pending = parts.map((part) => writer.write(part));
      if (close) pending.push(writer.close());
      const all = Promise.all(pending).then(() => undefined);
      all.catch(() => {
        failed = true;
      });
      for (const p of pending) p.catch(() => {});
      return all;
    };
    let last: PluginResponse | undefined;
    try {
      last = await dispatchStream(this.services, request, ac.signal, (frame) => {
        if (failed || ac.signal.aborted) return;
        void writeFrame(frame, false).catch(() => {});
      });
    } catch (e) {
      if (e instanceof FrameTooLargeError) {
        ac.abort();
        cancel(stream, StreamCode.FRAME_TOO_LARGE, "stream frame exceeds 16 MiB");
        return;
      }
      throw e;
    }
    if (ac.signal.aborted || failed) {
      if (request.request.case === "subscribe" && !state.cancelled && !ac.signal.aborted) cancel(stream, StreamCode.NONE, "subscription ended");
      return; // cancelled by the client or the server is stopping: nothing more to write
    }
    if (!last) {
      cancel(stream, StreamCode.NONE, "stream ended");
      return;
    }
    try {
      await writeFrame(last, true);
    } catch {
      return;
    }
    state.responded = true;
    this.stats.streamsCompleted++;
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      tail,
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), FIN_GRACE_MS);
      }),
    ]);
    clearTimeout(timer);
    if (!finished) cancel(stream, StreamCode.NONE, "request FIN not received");
  }
}

function cancel(stream: QUICStream, code: StreamCode, reason: string): void {
  try {
    stream.cancel(new StreamAbort(code, reason));
  } catch {
    /* already closed */
  }
}
