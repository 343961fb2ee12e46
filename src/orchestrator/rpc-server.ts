/**
 * The reference orchestrator's RPC core, independent of the transport (orchestra-protocol.md,
 * "Framing and RPC shape", "Orchestrator side"). A transport adapter (./quic-server.ts: one QUIC
 * stream per RPC; ./tls-server.ts: RPCs multiplexed on one TLS connection) turns its events into
 * calls of this module and implements a {@link CallLink} per RPC; everything between the decoded
 * `PluginRequest` and the encoded `PluginResponse` frame happens here:
 *
 * - decode a request frame ({@link decodeRequest});
 * - dispatch it through ./dispatch.ts: unary kinds to {@link dispatchUnary} (a kind it does not
 *   serve is answered with {@link refusal}), streaming kinds (`stream_start`, `subscribe`) to
 *   {@link dispatchStream} when the adapter carries streams ({@link RpcServerOptions.streaming});
 * - the result size policy: a response frame over 16 MiB ({@link MAX_FRAME_BYTES}) that answers a
 *   `tool_call` becomes `ToolResponse{success:false, error_code:"result_too_large"}`; any other
 *   oversized last frame fails the call with the `frame_too_large` {@link CallFault}; an oversized
 *   intermediate frame of a stream throws {@link FrameTooLargeError} into the emitting tool;
 * - write through the link, cancel (the client abandoned the RPC), abort (its connection is gone),
 *   graceful shutdown (every unanswered call fails with `shutdown`), and the counters
 *   ({@link OrchestratorStats}).
 *
 * It also holds what both adapters share around the loop: the options every transport takes
 * ({@link OrchestratorBaseOptions}), the served content and TLS material, and the
 * {@link RunningOrchestrator} handle ({@link startServer}).
 */
import type { PluginRequest, PluginResponse } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { createPluginResponse, decodePluginRequest, encodePluginResponse } from "../gen/proto/orchestra/plugin/v1/plugin_codec.js";
import { childLogger, type Logger } from "../log.js";
import { defaultCertsDir, ensureCertStore, ORCHESTRATOR_CERT_NAME, type TlsMaterial } from "../pki/store.js";
import { FrameTooLargeError, MAX_FRAME_BYTES, PAYLOAD_CODEC_OPTIONS } from "../framing/frame.js";
import { formatHostPort } from "../quic/address.js";
import { builtinTools } from "./builtin-tools.js";
import { DEFAULT_MAX_STREAMS } from "./defaults.js";
import { dispatchStream, dispatchUnary, EventBus, isStreamingRequest, refusal, type OrchestratorServices } from "./dispatch.js";
import { TOOLS_TOPIC } from "../translate/tools.js";
import { builtinPrompts, PromptRegistry } from "./prompts.js";
import { ToolRegistry } from "./registry.js";
import { MemoryStorage, sampleStorageEntries } from "./storage.js";

export { DEFAULT_MAX_STREAMS };

/** Options every transport's `start…Orchestrator` takes. */
export interface OrchestratorBaseOptions {
  /** Listen address (default `127.0.0.1`). */
  host?: string;
  /** Port (UDP for QUIC, TCP for TLS); 0 (default) picks an ephemeral one. */
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
  /** Logger (default: project pino logger, component `orchestrator` / `tls-orchestrator`). */
  logger?: Logger;
}

/** Per-server counters (monotonic except `activeStreams`). */
export interface OrchestratorStats {
  /** Client connections accepted. */
  connections: number;
  /** RPCs opened by clients (QUIC: streams opened; TLS: requests started). */
  streamsOpened: number;
  /** RPCs answered with a complete response frame. */
  streamsCompleted: number;
  /** RPCs the client cancelled (QUIC: reset/stopped the stream; either: `stream_cancel`) before the response was fully written. */
  streamsCancelled: number;
  /** Request frames refused for declaring more than 16 MiB. */
  framesTooLarge: number;
  /** Truncated frames or undecodable requests (TLS: also an empty or duplicate `request_id`). */
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
  /** RPCs currently being handled. */
  activeStreams: number;
  /** Highest {@link activeStreams} seen. */
  peakActiveStreams: number;
}

/** A running orchestrator. */
export interface RunningOrchestrator {
  /** Bound IP address. */
  host: string;
  /** Bound port (UDP for QUIC, TCP for TLS). */
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
  /** The prompts being served. */
  prompts?: PromptRegistry;
  /** The storage being served. */
  storage?: MemoryStorage;
  /** The event bus of `subscribe`; `publish` on it reaches subscribed clients (QUIC). */
  events?: EventBus;
  /** Live counters. */
  readonly stats: Readonly<OrchestratorStats>;
  /** Aborts running handlers and stops the server (closing client connections). Idempotent. */
  stop(): Promise<void>;
}

/**
 * Why a call ends without a (further) response frame. Each adapter puts it on its wire (QUIC:
 * RESET_STREAM with a `StreamCode`; TLS: `stream_end{success:false, error_code}`):
 * - `malformed`: the request frame was truncated, undecodable or followed by a stray frame;
 * - `frame_too_large`: a request frame declared, or the response would need, more than 16 MiB;
 * - `internal`: the handler failed unexpectedly;
 * - `shutdown`: the server is stopping;
 * - `end`: a streaming call ended with no last frame to send (`subscribe`).
 */
export type CallFault = "malformed" | "frame_too_large" | "internal" | "shutdown" | "end";

/** What the core needs of one RPC's transport: a place to write its response frames. */
export interface CallLink {
  /**
   * Writes one encoded `PluginResponse` (at most {@link MAX_FRAME_BYTES}); `last` ends the
   * call's output (QUIC: the FIN goes with it).
   * @returns false when the peer can no longer receive it (nothing was written)
   */
  write(frame: Uint8Array, last: boolean): boolean;
  /** Ends the call with `fault` instead of a (further) response; `message` is for the peer. */
  fail(fault: CallFault, message: string): void;
  /** The call is over (its handler returned, or it ended before a request); `responded`: its last frame was written. */
  done(responded: boolean): void;
}

/** Options of {@link RpcServer}. */
export interface RpcServerOptions {
  /**
   * The transport carries streaming RPCs (several frames per call): `stream_start` and
   * `subscribe` are served, and tool-set changes are announced on {@link TOOLS_TOPIC}. Without
   * it they are refused like any unserved kind.
   */
  streaming: boolean;
}

/**
 * Decodes one request frame's payload.
 * @returns the decoder's error (not thrown) when the bytes are not a `PluginRequest` or nest
 *   deeper than the limit
 */
export function decodeRequest(payload: Uint8Array): PluginRequest | Error {
  try {
    return decodePluginRequest(payload, PAYLOAD_CODEC_OPTIONS);
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

/** The orchestrator's calls and counters; one per server, shared by all its connections. */
export class RpcServer {
  readonly stats: OrchestratorStats = {
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
  readonly services: OrchestratorServices;
  readonly streaming: boolean;
  /** Calls opened and not yet finished. */
  private readonly live = new Set<RpcCall>();
  private readonly stopWatchingTools: () => void;

  constructor(
    content: { tools: ToolRegistry; prompts: PromptRegistry; storage: MemoryStorage; events: EventBus },
    readonly log: Logger,
    options: RpcServerOptions,
  ) {
    this.services = { ...content, stats: this.stats };
    this.streaming = options.streaming;
    const { tools, events } = content;
    this.stopWatchingTools = options.streaming ? tools.onChange((change) => events.publish(TOOLS_TOPIC, "list_changed", { change: change.kind, name: change.name })) : () => {};
  }

  /** Opens a call the client started (a stream, or a request on a shared connection). */
  open(link: CallLink): RpcCall {
    const stats = this.stats;
    stats.streamsOpened++;
    stats.activeStreams++;
    if (stats.activeStreams > stats.peakActiveStreams) stats.peakActiveStreams = stats.activeStreams;
    const call = new RpcCall(this, link);
    this.live.add(call);
    return call;
  }

  /** Counts a request frame refused before or instead of a call: oversized or malformed. */
  countRefused(fault: "malformed" | "frame_too_large"): void {
    if (fault === "frame_too_large") this.stats.framesTooLarge++;
    else this.stats.malformedRequests++;
  }

  /**
   * Graceful shutdown, first step: stops announcing tool changes and fails every call neither
   * answered nor cancelled with `shutdown` (aborting its handler). The adapter then closes its
   * connections.
   */
  shutdown(): void {
    this.stopWatchingTools();
    const reason = new Error("orchestrator stopping");
    for (const call of this.live) {
      if (call.responded || call.cancelled) continue;
      call.ac.abort(reason);
      call.link.fail("shutdown", reason.message);
    }
  }

  /** @internal */
  finished(call: RpcCall): void {
    this.live.delete(call);
    this.stats.activeStreams--;
  }
}

/** One RPC: its request, its handler's abort signal, and how it ended. */
export class RpcCall {
  /** The request, once {@link serve} was called. */
  request: PluginRequest | undefined = undefined;
  /** Aborted when the client cancels, its connection goes, the call is refused or the server stops. */
  readonly ac = new AbortController();
  /** The last response frame was written. */
  responded = false;
  /** Counted in `streamsCancelled`. */
  cancelled = false;
  private ended = false;

  /** @internal use {@link RpcServer.open} */
  constructor(
    private readonly server: RpcServer,
    readonly link: CallLink,
  ) {}

  /** Whether the request is served as a stream (more frames may follow it, e.g. `stream_cancel`). */
  get streaming(): boolean {
    return this.server.streaming && this.request !== undefined && isStreamingRequest(this.request);
  }

  /** Dispatches `request` and writes its answer; the call finishes when the handler returns. */
  serve(request: PluginRequest): void {
    this.request = request;
    const work = this.streaming ? this.serveStreaming(request) : this.serveUnary(request);
    work
      .catch((e: unknown) => {
        this.server.log.warn({ err: e instanceof Error ? e.message : String(e) }, "request handler failed");
        if (!this.responded && !this.ac.signal.aborted) this.link.fail("internal", "internal error");
      })
      .finally(() => this.finish());
  }

  /** The client abandoned the call: aborts its handler; counted once, unless it was answered. */
  cancel(why: string): void {
    if (!this.responded && !this.cancelled) {
      this.cancelled = true;
      this.server.stats.streamsCancelled++;
      const request = this.request;
      if (request !== undefined) this.server.log.debug({ requestId: request.requestId, what: describe(request), why }, "request cancelled by the client");
    }
    this.ac.abort(new Error(why));
    if (this.request === undefined) this.finish();
  }

  /** A protocol violation on this call: counts it, fails the call with `fault`, aborts its handler. */
  refuse(fault: "malformed" | "frame_too_large"): void {
    this.server.countRefused(fault);
    this.link.fail(fault, fault === "malformed" ? "malformed request" : "request frame exceeds 16 MiB");
    if (!this.ac.signal.aborted) this.ac.abort(new Error("request refused"));
    if (this.request === undefined) this.finish();
  }

  /** Its connection is gone: aborts the handler; nothing is written or counted. */
  abort(why: string): void {
    this.ac.abort(new Error(why));
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.server.finished(this);
    this.link.done(this.responded);
  }

  private async serveUnary(request: PluginRequest): Promise<void> {
    const { services, stats } = this.server;
    let response = await dispatchUnary(services, request, this.ac.signal);
    if (response === undefined) {
      stats.unsupportedRequests++;
      response = refusal(request);
    }
    if (this.ac.signal.aborted) return; // cancelled, the connection is gone or we are stopping
    this.writeLast(response);
  }

  /**
   * A streaming call: frames as the handler emits them, then its last frame (if any). Ends
   * early, writing nothing more, when the call is aborted.
   */
  private async serveStreaming(request: PluginRequest): Promise<void> {
    const signal = this.ac.signal;
    let gone = false;
    let last: PluginResponse | undefined;
    try {
      last = await dispatchStream(this.server.services, request, signal, (frame) => {
        if (gone || signal.aborted) return;
        const bytes = encodePluginResponse(frame, PAYLOAD_CODEC_OPTIONS);
        if (bytes.byteLength > MAX_FRAME_BYTES) throw new FrameTooLargeError(bytes.byteLength);
        if (!this.link.write(bytes, false)) gone = true;
      });
    } catch (e) {
      if (!(e instanceof FrameTooLargeError)) throw e;
      this.ac.abort(e);
      this.link.fail("frame_too_large", e.message);
      return;
    }
    if (signal.aborted || gone) return;
    if (last === undefined) this.link.fail("end", "stream ended");
    else this.writeLast(last);
  }

  /** Writes the call's last frame under the result size policy, and counts it. */
  private writeLast(response: PluginResponse): void {
    let bytes = encodePluginResponse(response, PAYLOAD_CODEC_OPTIONS);
    if (bytes.byteLength > MAX_FRAME_BYTES) {
      if (response.response.case !== "toolCall") {
        this.link.fail("frame_too_large", `response of ${bytes.byteLength} bytes exceeds 16 MiB`);
        return;
      }
      bytes = encodePluginResponse(resultTooLarge(response.requestId, bytes.byteLength), PAYLOAD_CODEC_OPTIONS);
    }
    if (!this.link.write(bytes, true)) return;
    this.responded = true;
    this.server.stats.streamsCompleted++;
  }
}

/** The request's kind, with the tool name for a `tool_call` (for logs). */
function describe(request: PluginRequest): string {
  return request.request.case === "toolCall" ? `tool_call ${request.request.value.toolName}` : String(request.request.case);
}

/** `ToolResponse{success:false, error_code:"result_too_large"}` for a tool result of `bytes` bytes. */
function resultTooLarge(requestId: string, bytes: number): PluginResponse {
  return createPluginResponse({
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

/** What {@link prepareServer} resolves: the adapter's logger, TLS material, listen host and core. */
export interface PreparedServer {
  log: Logger;
  material: TlsMaterial;
  /** Cert store directory used (undefined when the options gave the TLS material). */
  certsDir: string | undefined;
  listenHost: string;
  rpc: RpcServer;
}

/**
 * Resolves the options every transport shares: the logger (`component` by default), the TLS
 * material (from the options or the cert store), the served content (defaults: the built-ins)
 * and the {@link RpcServer} over it.
 * @throws CertStoreError when the cert store cannot be used
 */
async function prepareServer(options: OrchestratorBaseOptions, component: string, rpcOptions: RpcServerOptions): Promise<PreparedServer> {
  const log = options.logger ?? childLogger(component);
  const certsDir = options.tls ? undefined : (options.certsDir ?? defaultCertsDir());
  const material = options.tls ?? (await ensureCertStore(certsDir ?? defaultCertsDir(), options.certName ?? ORCHESTRATOR_CERT_NAME));
  const content = {
    tools: options.tools ?? new ToolRegistry(builtinTools()),
    prompts: options.prompts ?? new PromptRegistry(builtinPrompts()),
    storage: options.storage ?? new MemoryStorage(sampleStorageEntries()),
    events: options.events ?? new EventBus(),
  };
  return { log, material, certsDir, listenHost: options.host ?? "127.0.0.1", rpc: new RpcServer(content, log, rpcOptions) };
}

/** What a transport adapter's `listen` step hands back: the bound address and how to close. */
export interface TransportListener {
  /** Bound IP address. */
  host: string;
  /** Bound port. */
  port: number;
  /**
   * Closes the transport, after {@link RpcServer.shutdown} failed the unanswered calls: sends
   * what is queued, closes client connections, releases the port.
   */
  close(): Promise<void>;
}

/**
 * Starts an orchestrator on one transport: {@link prepareServer}, then the adapter's `listen`
 * (bind, accept connections, map their events onto `server.rpc`). The handle's `stop()` runs
 * {@link RpcServer.shutdown}, then the listener's `close` (once, however often it is called).
 * @throws what {@link prepareServer} and `listen` throw
 */
export async function startServer(
  options: OrchestratorBaseOptions,
  component: string,
  rpcOptions: RpcServerOptions,
  listen: (server: PreparedServer) => Promise<TransportListener>,
): Promise<RunningOrchestrator> {
  const server = await prepareServer(options, component, rpcOptions);
  const { rpc, material } = server;
  let listener: TransportListener;
  try {
    listener = await listen(server);
  } catch (e) {
    rpc.shutdown(); // stops the tool-change watch
    throw e;
  }
  const { host, port, close } = listener;
  let stopP: Promise<void> | undefined;
  return {
    host,
    port,
    address: formatHostPort(host, port),
    caPem: material.caPem,
    certPem: material.certPem,
    certsDir: server.certsDir,
    tools: rpc.services.tools,
    prompts: rpc.services.prompts,
    storage: rpc.services.storage,
    events: rpc.services.events,
    stats: rpc.stats,
    stop(): Promise<void> {
      stopP ??= (async () => {
        rpc.shutdown();
        await close();
      })();
      return stopP;
    },
  };
}

/**
 * Checks that `value` (option `name`) is a positive integer.
 * @throws RangeError naming the option otherwise
 */
export function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
}
