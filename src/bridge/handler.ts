/**
 * The MCP server side of the bridge: one instance per stdio session, serving every supported
 * MCP revision (docs/mcp-orchestra-mapping.md has the method × revision table).
 *
 * Input: one JSON-RPC line at a time ({@link McpHandler.handleLine}). Output: JSON-RPC messages
 * (or batch answers) handed to a sink. Between them, in order: JSON parse → kind (batches only
 * where the revision has them) → protocol revision of the message → generated envelope validator
 * → generated per-method validator → method table → translator → {@link Sender} → translator →
 * revision-specific decoration → generated result validator → sink. Nothing here throws to the
 * caller: every failure becomes a JSON-RPC error response (or, for notifications, a log line).
 *
 * Revisions:
 * - 2024-11-05 … 2025-11-25 ("initialize family"): `initialize` negotiates the session's revision
 *   (the client's when supported, else our latest of the family; never a stateless revision).
 *   Requests before `initialize` are served with our latest family revision.
 * - 2026-07-28 and later (stateless): a request carrying
 *   `params._meta["io.modelcontextprotocol/protocolVersion"]` is served in that revision, whatever
 *   the session did before; an unsupported one is answered with `-32022`.
 * The method table is the intersection of what this class implements and what the revision's
 * schema defines; anything else is `-32601`. Capabilities advertise exactly that intersection.
 */
import { v4 as uuidv4, v7 as uuidv7 } from "uuid";
import { create } from "@bufbuild/protobuf";
import type { Logger } from "../log.js";
import { childLogger } from "../log.js";
import type {
  CallToolRequest,
  CallToolResult,
  GetPromptRequest,
  Implementation,
  InitializeRequest,
  InitializeResult,
  Prompt,
  ProgressToken,
  ServerCapabilities,
  Tool,
} from "../gen/mcp/2025-06-18/types.js";
import { PluginRequestSchema, SubscribeSchema, type PluginRequest, type PluginResponse, type StorageEntry } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { ErrorCode } from "../jsonrpc/errors.js";
import {
  classify,
  errorResponse,
  recoverIdFromPrefix,
  resultResponse,
  type JSONRPCError,
  type JSONRPCResponse,
  type OutboundBatch,
  type OutboundLine,
} from "../jsonrpc/message.js";
import { ExactId } from "../jsonrpc/request-id.js";
import { exceedsDepth, MAX_NESTING_DEPTH, scanLine, type MessageTokens } from "../jsonrpc/line-scan.js";
import {
  buildDiscoverResult,
  decorateResult,
  DEFAULT_VERSION_SUPPORT,
  LOG_LEVEL_META_KEY,
  McpErrorCode,
  negotiateInitializeVersion,
  notificationProtocolVersion,
  requestProtocolVersion,
  SUBSCRIPTION_ID_META_KEY,
} from "../mcp/negotiation.js";
import { validatorsFor, type ProtocolValidators, type SchemaIssue } from "../mcp/validation.js";
import { SenderError, type Sender } from "../transport/sender.js";
import { featuresOf, type VersionFeatures } from "../translate/features.js";
import { InvalidCursorError, paginate, DEFAULT_PAGE_SIZE } from "../translate/pagination.js";
import {
  getPromptParamsToPluginRequest,
  listPromptsPluginRequest,
  listPromptsResponseToPrompts,
  missingPromptArguments,
  promptGetResponseToResult,
  PromptTranslationError,
  resourcePathsOf,
} from "../translate/prompts.js";
import {
  isExposed,
  resourceTemplatesFor,
  ResourceUriError,
  storageEntriesToResources,
  storageListPluginRequest,
  storagePathToUri,
  storageReadPluginRequest,
  storageReadResponseToContents,
  uriToStoragePath,
  type ResourceContents,
} from "../translate/resources.js";
import { isStreamRefusal, progressNotification, StreamAccumulator } from "../translate/streams.js";
import { StructConversionError } from "../translate/struct.js";
import {
  callToolParamsToPluginRequest,
  callToolParamsToStreamStart,
  invalidArgumentsResult,
  isUnknownToolAnswer,
  listToolsPluginRequest,
  toolDefinitionToMcpTool,
  toolResponseToCallToolResult,
} from "../translate/tools.js";
import { NamedCatalog } from "./catalog.js";
import { atLeast, isLoggingLevel, logNotification, type LoggingLevel } from "./client-log.js";
import { canStream, StreamUnsupportedError } from "../transport/sender.js";
import { ToolArgumentChecker } from "./tool-args.js";

/** Where output goes (stdout's {@link MessageWriter} in `serve`, an array in tests). */
export type MessageSink = (message: OutboundLine) => void;

/** MCP error code: the resource does not exist (server/resources, "Error Handling"). */
export const RESOURCE_NOT_FOUND = -32002;
/** MCP error code (≥ 2026-07-28): the request's protocol revision is not supported. */
export const UNSUPPORTED_PROTOCOL_VERSION = McpErrorCode.UnsupportedProtocolVersion;

/** Orchestra event topic the bridge subscribes to for tool-set changes (our convention). */
export const TOOLS_TOPIC = "tools";
/** Longest wait between attempts to re-subscribe to {@link TOOLS_TOPIC} after a loss (ms). */
export const WATCH_RETRY_MAX_MS = 5_000;

export interface HandlerOptions {
  sender: Sender;
  sink: MessageSink;
  /** `serverInfo` in the initialize result (and `_meta` serverInfo in stateless results). */
  serverInfo: Implementation;
  /** `instructions` in the initialize / discover result, when set. */
  instructions?: string;
  /** `ToolRequest.session_id` for this session; a fresh UUID by default. */
  sessionId?: string;
  /** Deadline for `tools/call` RPCs, ms (default 300 000). */
  toolCallTimeoutMs?: number;
  /** Deadline for list, prompt and storage RPCs, ms (default 10 000). */
  listTimeoutMs?: number;
  /** Items per page of `tools/list`, `prompts/list`, `resources/list`, `resources/templates/list` (default 100). */
  pageSize?: number;
  /** Storage path prefixes exposed as resources (default `[""]`: everything). */
  resourcePrefixes?: readonly string[];
  /** `storage_type` of the storage requests (default `""`: the orchestrator's default). */
  storageType?: string;
  /**
   * Subscribe to the orchestrator's `tools` topic to send `notifications/tools/list_changed`
   * (default true; effective only when the sender can stream, see ./streaming.ts).
   */
  watchToolChanges?: boolean;
  logger?: Logger;
  /** Called whenever a request stops being in flight (answered, dropped or failed). */
  onSettled?: () => void;
}

/** Any MCP result object (`InitializeResult`, `CallToolResult`, ...). */
type Result = object;

/** Per-request context handed to method implementations. */
interface Scope {
  /** The request's id exactly as written (responses carry its token text). */
  id: ExactId;
  method: string;
  version: string;
  validators: ProtocolValidators;
  features: VersionFeatures;
  signal: AbortSignal;
  entry: InFlight;
  progressToken?: ProgressToken | ExactId;
  /** Per-request log level (stateless revisions). */
  logLevel?: LoggingLevel;
  /** `tools/call`: the tool's name (named in errors about the call or its result). */
  tool?: string;
}

type MethodHandler = (params: Record<string, unknown>, scope: Scope) => Result | Promise<Result>;

/** Where one request's response goes: straight to the sink, or into a batch answer. */
interface Responder {
  send(message: JSONRPCResponse | JSONRPCError): void;
  /** The request ends without a response (cancelled). */
  drop(): void;
}

interface InFlight {
  id: ExactId;
  /** Bytes of the input line charged to this request until it settles (see `unansweredBytes`). */
  bytes: number;
  controller: AbortController;
  /** Set when the client cancelled it: no response may follow (MCP cancellation). */
  cancelled: boolean;
  /** Set once answered (or dropped): no notification for it may follow. */
  done: boolean;
  responder: Responder;
}

/** One open `subscriptions/listen` stream (≥ 2026-07-28). */
interface Listener {
  id: ExactId;
  /** The client opted in to `notifications/tools/list_changed` and we honour it. */
  toolsListChanged: boolean;
  /** Ends the stream gracefully: the request is answered with `SubscriptionsListenResult`. */
  end(): void;
}

/** The session's subscription to tool-set changes. */
interface Watch {
  controller: AbortController;
  /** Pending retry. */
  timer?: NodeJS.Timeout;
}

/** Thrown inside method handlers to answer with a specific JSON-RPC error. */
export class JsonRpcError extends Error {
  constructor(
    readonly code: ErrorCode | number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export { negotiateInitializeVersion };

export class McpHandler {
  /** Revision negotiated by `initialize`; undefined before (and in a purely stateless session). */
  sessionVersion: string | undefined;
  /** True once `initialize` was answered. */
  initializeAnswered = false;
  /** True once the client sent `notifications/initialized`. */
  initialized = false;
  /** Session log level set by `logging/setLevel`; no log notifications while undefined. */
  logLevel: LoggingLevel | undefined;

  private validators: ProtocolValidators;
  /** Keyed by {@link ExactId.key}: ids compare by exact value, not by their double. */
  private readonly inFlight = new Map<string, InFlight>();
  /** Source text of the exact tokens of each message parsed by {@link handleLine}. */
  private readonly tokens = new WeakMap<object, MessageTokens>();
  /** Input bytes charged to the next request dispatched (its share of the current line). */
  private chargeBytes = 0;
  /** While a batch is dispatched: the keys of the request ids seen in it so far. */
  private batchIds: Set<string> | undefined;
  private inFlightBytes = 0;
  private idleWaiters: Array<() => void> = [];
  private readonly sessionId: string;
  private readonly log: Logger;
  private readonly methods: Record<string, MethodHandler>;
  private readonly toolCallTimeoutMs: number;
  private readonly listTimeoutMs: number;
  private readonly pageSize: number;
  private readonly resourcePrefixes: readonly string[];
  private readonly storageType: string;
  /** The orchestrator's tools (input schemas for argument checks). */
  readonly tools: NamedCatalog<Tool>;
  /** The orchestrator's prompts (names and required arguments). */
  readonly prompts: NamedCatalog<Prompt>;
  private readonly argChecker: ToolArgumentChecker;
  /** Tools the orchestrator refused to stream; called unary until the tool set changes. */
  private readonly unaryOnly = new Set<string>();
  private watch: Watch | undefined;
  /** Set when the orchestrator answered `subscribe` in a way that says it has no events. */
  private toolEventsRefused = false;
  /** The comparison of the tool set running after a tool-change event, and whether another event came meanwhile. */
  private toolCheck: { again: boolean } | undefined;
  private readonly listeners = new Set<Listener>();
  private closed = false;

  constructor(private readonly options: HandlerOptions) {
    this.validators = requireValidators(this.protocolVersion);
    this.sessionId = options.sessionId ?? uuidv4();
    this.log = options.logger ?? childLogger("bridge");
    this.toolCallTimeoutMs = options.toolCallTimeoutMs ?? 300_000;
    this.listTimeoutMs = options.listTimeoutMs ?? 10_000;
    this.pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isInteger(this.pageSize) || this.pageSize < 1) throw new RangeError(`pageSize must be a positive integer, got ${options.pageSize}`);
    this.resourcePrefixes = options.resourcePrefixes && options.resourcePrefixes.length > 0 ? [...options.resourcePrefixes] : [""];
    this.storageType = options.storageType ?? "";
    this.argChecker = new ToolArgumentChecker(this.log);
    this.tools = new NamedCatalog(() => this.fetchTools());
    this.prompts = new NamedCatalog(() => this.fetchPrompts());
    this.methods = {
      initialize: (p) => this.initialize(p as InitializeRequest["params"]),
      ping: () => ({}),
      "server/discover": (_p, s) => this.discover(s),
      "logging/setLevel": (p) => this.setLevel(p),
      "tools/list": (p, s) => this.listTools(p, s),
      "tools/call": (p, s) => this.callTool(p as CallToolRequest["params"], s),
      "prompts/list": (p, s) => this.listPrompts(p, s),
      "prompts/get": (p, s) => this.getPrompt(p as GetPromptRequest["params"], s),
      "resources/list": (p, s) => this.listResources(p, s),
      "resources/templates/list": (p, s) => this.listResourceTemplates(p, s),
      "resources/read": (p, s) => this.readResource(p, s),
      "subscriptions/listen": (p, s) => this.listen(p, s),
    };
  }

  /**
   * The session's revision: negotiated by `initialize`, else our newest initialize-family one
   * (what batches, pings and log notifications outside a request follow before `initialize`).
   */
  get protocolVersion(): string {
    return this.sessionVersion ?? negotiateInitializeVersion(undefined);
  }

  /** Number of requests received and not yet answered. */
  get pending(): number {
    return this.inFlight.size;
  }

  /** Bytes of input lines whose requests are still in flight (a batch's line is shared by its requests). */
  get unansweredBytes(): number {
    return this.inFlightBytes;
  }

  /**
   * Whether the bridge will send `notifications/tools/list_changed` (and advertises it): the
   * sender can stream and the orchestrator has not refused the tool-change subscription.
   */
  get watchesToolChanges(): boolean {
    return this.options.watchToolChanges !== false && canStream(this.options.sender) && !this.toolEventsRefused;
  }

  /**
   * Handles one inbound line (without its terminator). Never throws.
   * @param line UTF-8 bytes or text of one JSON-RPC message or batch.
   */
  handleLine(line: Buffer | string): void {
    const text = typeof line === "string" ? line : line.toString("utf8");
    // Before JSON.parse: a too-deep line is refused without building it (see ../jsonrpc/line-scan.ts).
    const scan = scanLine(text, MAX_NESTING_DEPTH);
    if (scan.tooDeep) {
      const token = scan.messages[0]?.id;
      const id = token === undefined ? undefined : ExactId.parse(token);
      this.options.sink(
        errorResponse(id ?? null, ErrorCode.InvalidRequest, `Invalid Request: nesting depth exceeds the limit of ${MAX_NESTING_DEPTH}`, {
          maxDepth: MAX_NESTING_DEPTH,
        }),
      );
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch (err) {
      this.options.sink(errorResponse(null, ErrorCode.ParseError, `Parse error: ${(err as Error).message}`));
      return;
    }
    if (Array.isArray(message)) {
      scan.messages.forEach((tokens, i) => {
        const element: unknown = message[i];
        if (tokens && element !== null && typeof element === "object") this.tokens.set(element, tokens);
      });
    } else if (message !== null && typeof message === "object" && scan.messages[0]) {
      this.tokens.set(message, scan.messages[0]);
    }
    this.chargeBytes = typeof line === "string" ? Buffer.byteLength(line) : line.length;
    try {
      this.handleMessage(message);
    } finally {
      this.chargeBytes = 0;
    }
  }

  /**
   * `value` (a member of `message`) as an exact id, using the source text {@link handleLine}
   * recorded for `slot` when it is `value`'s token; `undefined` when it is not an MCP request id.
   */
  private exactId(message: object, slot: keyof MessageTokens, value: unknown): ExactId | undefined {
    return ExactId.fromSource(this.tokens.get(message)?.[slot], value);
  }

  /** The message's id for an error response: exact when it is an MCP request id, else `null`. */
  private idOf(message: unknown): ExactId | null {
    if (message === null || typeof message !== "object") return null;
    return this.exactId(message, "id", (message as { id?: unknown }).id) ?? null;
  }

  /**
   * Handles a line that exceeded the size cap (its bytes were discarded). Answers with
   * `-32600` using the id recovered from the line's first bytes, or `null`.
   */
  handleOversizedLine(head: Buffer, bytes: number, maxBytes: number): void {
    const id = recoverIdFromPrefix(head.toString("utf8"));
    this.options.sink(
      errorResponse(id, ErrorCode.InvalidRequest, `Message of ${bytes} bytes exceeds the ${maxBytes}-byte limit`, {
        bytes,
        maxBytes,
      }),
    );
  }

  /** Handles one parsed JSON value (a message or a batch). Never throws. */
  handleMessage(message: unknown): void {
    if (classify(message) === "batch") {
      this.onBatch(message as unknown[]);
      return;
    }
    this.dispatch(message, this.direct, false);
  }

  /** Resolves when no request is in flight. */
  idle(): Promise<void> {
    if (this.inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Fails every in-flight request with `-32603` (`reason`) and aborts its RPC. Used on shutdown
   * after the grace period.
   */
  failAll(reason: string): void {
    const entries = [...this.inFlight.values()];
    this.inFlight.clear();
    this.inFlightBytes = 0;
    for (const entry of entries) {
      if (entry.cancelled || entry.done) continue;
      entry.done = true; // the handler's own completion must not answer again
      entry.controller.abort();
      entry.responder.send(errorResponse(entry.id, ErrorCode.InternalError, reason));
    }
    this.notifyIdle();
  }

  /**
   * Stops background work: the tool-change subscription, and every open `subscriptions/listen`
   * stream, which is answered with its closing result (ended gracefully). Idempotent; other
   * in-flight requests are not touched.
   */
  close(): void {
    this.closed = true;
    for (const l of [...this.listeners]) l.end();
    this.listeners.clear();
    if (this.watch) {
      this.watch.controller.abort();
      if (this.watch.timer) clearTimeout(this.watch.timer);
      this.watch = undefined;
    }
  }

  // ---------------------------------------------------------------- dispatch

  private readonly direct: Responder = {
    send: (message) => this.options.sink(message),
    drop: () => {},
  };

  private dispatch(message: unknown, responder: Responder, inBatch: boolean): void {
    switch (classify(message)) {
      case "request":
        return this.onRequest(message as Record<string, unknown>, responder, inBatch);
      case "notification":
        responder.drop();
        return this.onNotification(message as Record<string, unknown>);
      case "response":
        // The bridge sends no server→client requests, so no response can be expected.
        this.log.warn({ id: this.idOf(message)?.text }, "ignoring a response to a request the bridge never sent");
        responder.drop();
        return;
      case "batch":
        responder.send(errorResponse(null, ErrorCode.InvalidRequest, "Invalid Request: a batch may not contain a batch"));
        return;
      case "invalid":
        responder.send(errorResponse(this.idOf(message), ErrorCode.InvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message"));
        return;
    }
  }

  /**
   * JSON-RPC batches: only in revisions that have them (2025-03-26). Each element is processed as
   * if sent alone; the responses are written as one array once all are done (none when the
   * batch held only notifications; cancelled requests are left out).
   */
  private onBatch(batch: unknown[]): void {
    const features = featuresOf(this.protocolVersion);
    if (!features.batches) {
      this.options.sink(
        errorResponse(null, ErrorCode.InvalidRequest, `JSON-RPC batches are not supported in MCP protocol version ${this.protocolVersion}`),
      );
      return;
    }
    if (batch.length === 0) {
      this.options.sink(errorResponse(null, ErrorCode.InvalidRequest, "Invalid Request: empty batch"));
      return;
    }
    const collector = new BatchCollector((answer) => this.options.sink(answer));
    this.chargeBytes = Math.ceil(this.chargeBytes / batch.length);
    this.batchIds = new Set();
    try {
      for (const element of batch) this.dispatch(element, collector.slot(), true);
    } finally {
      this.batchIds = undefined;
    }
    collector.seal();
  }

  // ---------------------------------------------------------------- requests

  private onRequest(message: Record<string, unknown>, responder: Responder, inBatch: boolean): void {
    // JSON-RPC 2.0 §5: an id that cannot be read is answered with a null id.
    const id = this.exactId(message, "id", message.id);
    if (id === undefined) {
      // JSON.parse makes an integer beyond the range of a double (over ~309 digits) Infinity.
      const limit = typeof message.id === "number" && !Number.isFinite(message.id) ? ` (an integer id must be within ±${Number.MAX_VALUE}, about 309 digits)` : "";
      responder.send(errorResponse(null, ErrorCode.InvalidRequest, `Invalid Request: the id of a request must be a string or an integer${limit}`));
      return;
    }
    if (this.batchIds !== undefined) {
      // Like an id already in flight: answered with a null id, so that the first keeps its own answer.
      if (this.batchIds.has(id.key)) {
        responder.send(errorResponse(null, ErrorCode.InvalidRequest, `Invalid Request: duplicate id in batch: ${id.text}`, { duplicateId: id }));
        return;
      }
      this.batchIds.add(id.key);
    }
    if (Array.isArray(message.params)) {
      // JSON-RPC 2.0 §4.2 allows positional params; MCP methods take named params only.
      responder.send(errorResponse(id, ErrorCode.InvalidParams, "Invalid params: MCP params must be an object (by name), not an array (by position)"));
      return;
    }
    // The one place that decides a request's revision: src/mcp/negotiation.ts.
    const revision = requestProtocolVersion(message, this.sessionVersion);
    if (!revision.ok) {
      // A method no supported revision defines is "not found" whatever its revision would be.
      const method = message.method;
      if (typeof method === "string" && !Object.hasOwn(this.methods, method) && !definedInAnyRevision(method)) {
        responder.send(errorResponse(id, ErrorCode.MethodNotFound, `Method not found: ${method}`));
        return;
      }
      responder.send(errorResponse(id, revision.error.code, revision.error.message, revision.error.data));
      return;
    }
    const validators = requireValidators(revision.version);
    const envelopeIssues = validators.validate("JSONRPCRequest", message);
    if (envelopeIssues) {
      responder.send(
        errorResponse(id, ErrorCode.InvalidRequest, `Invalid Request: ${describe(envelopeIssues)}`, issueData(envelopeIssues)),
      );
      return;
    }
    const method = message.method as string;
    if (inBatch && method === "initialize") {
      responder.send(errorResponse(id, ErrorCode.InvalidRequest, "Invalid Request: initialize must not be part of a JSON-RPC batch"));
      return;
    }
    const definition = validators.messageDefinition("c2s", method);
    const handler = Object.hasOwn(this.methods, method) ? this.methods[method] : undefined;
    if (!definition || definition.kind !== "request" || !handler) {
      responder.send(errorResponse(id, ErrorCode.MethodNotFound, `Method not found: ${method}`));
      return;
    }
    const issues = validators.validate(definition.definition, message);
    if (issues) {
      responder.send(errorResponse(id, ErrorCode.InvalidParams, `Invalid params: ${describe(issues)}`, issueData(issues)));
      return;
    }
    if (this.inFlight.has(id.key)) {
      // Answered with a null id: an error carrying the duplicated id would be taken by the client as
      // the answer to the original request, whose real result would then be dropped.
      responder.send(
        errorResponse(null, ErrorCode.InvalidRequest, `Invalid Request: request id ${id.text} is already in flight`, {
          duplicateId: id,
        }),
      );
      return;
    }
    const entry: InFlight = { id, bytes: this.chargeBytes, controller: new AbortController(), cancelled: false, done: false, responder };
    this.inFlight.set(id.key, entry);
    this.inFlightBytes += entry.bytes;
    const params = (message.params ?? {}) as Record<string, unknown>;
    const meta = (params._meta ?? {}) as Record<string, unknown>;
    const features = featuresOf(revision.version);
    const scope: Scope = { id, method, version: revision.version, validators, features, signal: entry.controller.signal, entry };
    const token = meta.progressToken;
    if (typeof token === "string" || typeof token === "number") scope.progressToken = this.exactProgressToken(message, token);
    if (features.perRequestLogLevel && isLoggingLevel(meta[LOG_LEVEL_META_KEY])) scope.logLevel = meta[LOG_LEVEL_META_KEY];
    if (features.stateless) this.startWatch();
    const resultDefinition = definition.resultDefinition;
    let outcome: Result | Promise<Result>;
    try {
      outcome = handler(params, scope);
    } catch (err) {
      this.finish(scope, undefined, err, resultDefinition);
      return;
    }
    if (outcome instanceof Promise) {
      outcome.then(
        (result) => this.finish(scope, result, undefined, resultDefinition),
        (err: unknown) => this.finish(scope, undefined, err, resultDefinition),
      );
    } else {
      this.finish(scope, outcome, undefined, resultDefinition);
    }
  }

  private finish(scope: Scope, result: Result | undefined, err: unknown, resultDefinition: string | undefined): void {
    const { id, entry } = scope;
    if (this.inFlight.get(id.key) !== entry) return; // already answered (shutdown) or replaced
    this.inFlight.delete(id.key);
    this.inFlightBytes -= entry.bytes;
    if (entry.cancelled || entry.done) {
      if (!entry.done) entry.responder.drop();
      entry.done = true;
    } else {
      // Built before `done` is set: building an error may still log to the client about this request.
      const message = err === undefined ? this.resultMessage(scope, result as Result, resultDefinition) : this.errorFor(scope, err);
      entry.done = true;
      entry.responder.send(message);
    }
    this.notifyIdle();
  }

  /** Decorates (stateless revisions), validates and wraps a result. */
  private resultMessage(scope: Scope, result: Result, resultDefinition: string | undefined): JSONRPCResponse | JSONRPCError {
    // Stateless revisions: resultType, serverInfo in _meta, cache hints (negotiation.ts).
    const final = decorateResult(scope.version, scope.method, result, { serverInfo: this.options.serverInfo });
    if (exceedsDepth(final, MAX_NESTING_DEPTH)) {
      return errorResponse(scope.id, ErrorCode.InternalError, `Internal error: the result nests deeper than the limit of ${MAX_NESTING_DEPTH}`, {
        maxDepth: MAX_NESTING_DEPTH,
      });
    }
    const issues = resultDefinition ? scope.validators.validate(resultDefinition, withPlainMetaIds(final)) : null;
    if (issues) {
      this.log.error({ id: scope.id, issues }, "outbound result failed schema validation");
      const whose = scope.tool === undefined ? "the result" : `the result of tool ${scope.tool}`;
      return errorResponse(scope.id, ErrorCode.InternalError, `Internal error: ${whose} would not be valid MCP: ${describe(issues)}`, {
        ...issueData(issues),
        ...(scope.tool === undefined ? {} : { tool: scope.tool }),
      });
    }
    return resultResponse(scope.id, final as JSONRPCResponse["result"]);
  }

  private errorFor(scope: Scope, err: unknown): JSONRPCError {
    const id = scope.id;
    if (err instanceof JsonRpcError) return errorResponse(id, err.code, err.message, err.data);
    if (err instanceof SenderError && err.kind === "frame") {
      // Not the orchestrator's fault: a request or its answer does not fit the protocol's 16 MiB frame.
      return errorResponse(id, ErrorCode.InternalError, `Message too large for the Orchestra protocol: ${err.message}`, {
        kind: err.kind,
        address: this.options.sender.address,
      });
    }
    if (err instanceof SenderError) {
      // The sender's message names the orchestrator's address; say which call failed and, for a
      // deadline, which option sets it.
      const address = this.options.sender.address;
      const what = scope.tool === undefined ? scope.method : `tools/call of tool ${scope.tool}`;
      const hint = err.kind === "timeout" ? (scope.method === "tools/call" ? " (serve --call-timeout)" : " (serve --list-timeout)") : "";
      const message = `${what} failed: ${err.message.includes(address) ? "" : `orchestrator ${address}: `}${err.message}${hint}`;
      this.clientLog(scope, "error", { message, kind: err.kind });
      return errorResponse(id, ErrorCode.InternalError, message, {
        kind: err.kind,
        address,
        ...(scope.tool === undefined ? {} : { tool: scope.tool }),
      });
    }
    if (err instanceof StructConversionError) {
      return errorResponse(id, ErrorCode.InvalidParams, `Invalid params: ${err.message}`, { pointer: err.pointer });
    }
    if (err instanceof InvalidCursorError) return errorResponse(id, ErrorCode.InvalidParams, err.message);
    if (err instanceof ResourceUriError) return errorResponse(id, RESOURCE_NOT_FOUND, err.message, { uri: err.uri });
    if (err instanceof PromptTranslationError) {
      return errorResponse(id, ErrorCode.InternalError, `Internal error: the orchestrator's prompt cannot be expressed in MCP: ${err.message}`);
    }
    this.log.error({ err, id }, "request handler failed");
    return errorResponse(id, ErrorCode.InternalError, `Internal error: ${(err as Error)?.message ?? String(err)}`);
  }

  /** The progress token exactly as written when it is an id-like token, else its value (e.g. a non-integer number). */
  private exactProgressToken(message: object, token: string | number): ProgressToken | ExactId {
    return ExactId.fromSource(this.tokens.get(message)?.progressToken, token) ?? token;
  }

  private notifyIdle(): void {
    this.options.onSettled?.();
    if (this.inFlight.size > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  // ---------------------------------------------------------------- notifications

  private onNotification(message: Record<string, unknown>): void {
    // Notifications carry no revision: the session's, else the newest stateless one (negotiation.ts).
    const version = notificationProtocolVersion(this.sessionVersion);
    if (version === undefined) {
      this.log.debug({ method: message.method }, "ignoring a notification before initialize");
      return;
    }
    const validators = requireValidators(version);
    const envelopeIssues = validators.validate("JSONRPCNotification", message);
    if (envelopeIssues) {
      this.log.warn({ issues: envelopeIssues }, "dropping an invalid notification");
      return;
    }
    const method = message.method as string;
    const definition = validators.messageDefinition("c2s", method);
    if (!definition || definition.kind !== "notification") {
      this.log.debug({ method }, "ignoring an unknown notification");
      return;
    }
    const issues = validators.validate(definition.definition, message);
    if (issues) {
      this.log.warn({ method, issues }, "dropping a notification with invalid params");
      return;
    }
    const params = (message.params ?? {}) as Record<string, unknown>;
    switch (method) {
      case "notifications/initialized":
        this.initialized = true;
        return;
      case "notifications/cancelled": {
        const requestId = this.exactId(message, "requestId", params.requestId);
        // A token JSON.parse rounds to an integer (`9007199254740993.5`) passes the schema but is no request id.
        if (requestId === undefined) {
          this.log.warn({ method, issues: [{ path: "/params/requestId", message: "must be a string or an integer" }] }, "dropping a notification with invalid params");
          return;
        }
        this.cancel(requestId, params.reason as string | undefined);
        return;
      }
      default:
        this.log.debug({ method }, "notification has no effect on the bridge");
    }
  }

  /** MCP cancellation: abort the request's RPC (its QUIC stream is cancelled); it gets no response afterwards. */
  private cancel(id: ExactId | undefined, reason: string | undefined): void {
    const entry = id && this.inFlight.get(id.key);
    if (!entry || entry.done) return; // unknown or already answered: ignore, per the spec
    entry.cancelled = true;
    entry.controller.abort(new Error(reason ?? "cancelled by client"));
    this.log.debug({ id: id.text, reason }, "request cancelled by client");
  }

  /** The log level that applies to `scope` (per request in stateless revisions, else the session's); undefined: no log messages. */
  private logThreshold(scope: Scope | undefined): LoggingLevel | undefined {
    const features = scope?.features ?? featuresOf(this.protocolVersion);
    return features.perRequestLogLevel ? scope?.logLevel : this.logLevel;
  }

  /** Sends a `notifications/message` (from `logger`, default the bridge's name) when the applicable log level lets `level` through. */
  private clientLog(scope: Scope | undefined, level: LoggingLevel, data: unknown, logger?: string): void {
    const threshold = this.logThreshold(scope);
    if (threshold === undefined || !atLeast(level, threshold)) return;
    if (scope && (scope.entry.done || scope.entry.cancelled)) return;
    const validators = scope?.validators ?? this.validators;
    if (!validators.messageDefinition("s2c", "notifications/message")) return;
    this.options.sink(logNotification(level, data, logger));
  }

  // ---------------------------------------------------------------- lifecycle methods

  private initialize(params: InitializeRequest["params"]): InitializeResult {
    this.sessionVersion = negotiateInitializeVersion(params.protocolVersion);
    this.validators = requireValidators(this.sessionVersion);
    this.initializeAnswered = true;
    this.startWatch();
    const result: InitializeResult = {
      protocolVersion: this.protocolVersion,
      capabilities: this.capabilities(this.validators, featuresOf(this.protocolVersion)),
      serverInfo: this.options.serverInfo,
    };
    if (this.options.instructions) result.instructions = this.options.instructions;
    return result;
  }

  /** `server/discover` (≥ 2026-07-28): supported stateless revisions, capabilities, identity. */
  private discover(scope: Scope): Result {
    return buildDiscoverResult({
      serverInfo: this.options.serverInfo,
      capabilities: this.capabilities(scope.validators, scope.features) as Parameters<typeof buildDiscoverResult>[0]["capabilities"],
      supportedVersions: DEFAULT_VERSION_SUPPORT.modern,
      ...(this.options.instructions ? { instructions: this.options.instructions } : {}),
    });
  }

  /**
   * Exactly what this bridge implements in a revision: a capability is advertised when the
   * revision's schema defines its methods and this class serves them.
   */
  private capabilities(validators: ProtocolValidators, features: VersionFeatures): ServerCapabilities {
    const serves = (method: string): boolean =>
      Object.hasOwn(this.methods, method) && validators.messageDefinition("c2s", method)?.kind === "request";
    const caps: Record<string, unknown> = {};
    if (serves("tools/list") && serves("tools/call")) {
      // Stateless revisions deliver list changes only on a `subscriptions/listen` stream.
      const channel = features.stateless ? serves("subscriptions/listen") : true;
      const listChanged = channel && this.watchesToolChanges && validators.messageDefinition("s2c", "notifications/tools/list_changed") !== undefined;
      caps.tools = { listChanged };
    }
    if (serves("prompts/list") && serves("prompts/get")) caps.prompts = { listChanged: false };
    if (serves("resources/list") && serves("resources/read")) caps.resources = { subscribe: false, listChanged: false };
    const logs = validators.messageDefinition("s2c", "notifications/message") !== undefined;
    if (logs && (features.perRequestLogLevel || serves("logging/setLevel"))) caps.logging = {};
    return caps as ServerCapabilities;
  }

  private setLevel(params: Record<string, unknown>): Result {
    if (!isLoggingLevel(params.level)) throw new JsonRpcError(ErrorCode.InvalidParams, `Invalid params: unknown logging level ${JSON.stringify(params.level)}`);
    this.logLevel = params.level;
    return {};
  }

  // ---------------------------------------------------------------- tools

  private async fetchTools(): Promise<Tool[]> {
    const response = await this.options.sender.send(listToolsPluginRequest(), { timeoutMs: this.listTimeoutMs });
    if (response.response.case !== "listTools") throw unexpected(response, "list_tools");
    return response.response.value.tools.map(toolDefinitionToMcpTool);
  }

  private async listTools(params: Record<string, unknown>, scope: Scope): Promise<Result> {
    const cursor = params.cursor as string | undefined;
    let tools: Tool[];
    if (cursor === undefined) {
      const response = await this.rpc(listToolsPluginRequest(), scope, this.listTimeoutMs);
      if (response.response.case !== "listTools") throw unexpected(response, "list_tools");
      tools = response.response.value.tools.map(toolDefinitionToMcpTool);
      this.tools.store(tools);
      this.unaryOnly.clear();
    } else {
      tools = await this.withSignal(this.tools.current(), scope.signal);
    }
    const page = paginate(tools, "tools", cursor, this.pageSize);
    return page.nextCursor === undefined ? { tools: page.items } : { tools: page.items, nextCursor: page.nextCursor };
  }

  private async callTool(params: CallToolRequest["params"], scope: Scope): Promise<Result> {
    scope.tool = params.name;
    const tool = await this.withSignal(this.tools.lookup(params.name), scope.signal);
    if (!tool) throw unknownTool(params.name, "not in the orchestrator's tool list");
    const problem = await this.argChecker.check(tool.inputSchema as Record<string, unknown>, params.arguments, scope.version);
    if (problem) {
      const text = `${problem.pointer || "/"}: ${problem.reason}`;
      if (scope.features.inputErrorsAreToolErrors) return invalidArgumentsResult(params.name, text);
      throw new JsonRpcError(ErrorCode.InvalidParams, `Invalid params: arguments of tool ${params.name}: ${text}`, {
        pointer: `/params/arguments${problem.pointer}`,
        reason: problem.reason,
        tool: params.name,
      });
    }
    const sender = this.options.sender;
    // Progress and tool log messages travel only on the streaming path (docs/mcp-orchestra-mapping.md).
    const wantsStream = scope.progressToken !== undefined || this.logThreshold(scope) !== undefined;
    if (wantsStream && canStream(sender) && !this.unaryOnly.has(params.name)) {
      const streamed = await this.callToolStreaming(params, scope, scope.progressToken);
      if (streamed) return streamed;
      this.clientLog(scope, "debug", { message: `tool ${params.name} does not stream; called without progress or log messages` });
    }
    const request = callToolParamsToPluginRequest(params, { sessionId: this.sessionId });
    const response = await this.rpc(request, scope, this.toolCallTimeoutMs);
    if (response.response.case !== "toolCall") throw unexpected(response, "tool_call");
    if (isUnknownToolAnswer(response.response.value)) throw this.toolGone(params.name, response.response.value.errorMessage);
    return toolResponseToCallToolResult(response.response.value, scope.features);
  }

  /**
   * The orchestrator answered `tool_not_found` for `name`: the cached tool list is stale (the
   * next lookup fetches it), and the call is an unknown tool.
   */
  private toolGone(name: string, detail: string): JsonRpcError {
    this.tools.invalidate();
    return unknownTool(name, detail);
  }

  /**
   * `tools/call` with a progress token or with log messages wanted: `stream_start`; each progress
   * or data `stream_chunk` → one `notifications/progress` (when there is a token), each log chunk
   * → one `notifications/message` (when the log level lets it through); `stream_end` → the result.
   * @returns undefined when the orchestrator refused to stream this tool (remembered until the
   *   tool set changes) or serves no `stream_start` (the sender remembers that per connection):
   *   the caller falls back
   */
  private async callToolStreaming(params: CallToolRequest["params"], scope: Scope, token: ProgressToken | ExactId | undefined): Promise<CallToolResult | undefined> {
    const sender = this.options.sender;
    if (!canStream(sender)) return undefined;
    const request = callToolParamsToStreamStart(params);
    const acc = new StreamAccumulator();
    let result: CallToolResult | undefined;
    let refused = false;
    try {
      await sender.stream(
        request,
        (frame) => {
          const r = frame.response;
          if (r.case === "streamChunk") {
            const event = acc.add(r.value);
            if (event.kind === "log") this.clientLog(scope, event.message.level, event.message.data, event.message.logger ?? params.name);
            else if (event.kind === "progress" && token !== undefined && !scope.entry.done && !scope.entry.cancelled) {
              this.options.sink(progressNotification(token, event.update));
            }
            return false;
          }
          if (r.case === "streamEnd") {
            if (isUnknownToolAnswer(r.value)) throw this.toolGone(params.name, r.value.errorMessage);
            if (isStreamRefusal(r.value, acc.chunks)) refused = true;
            else result = acc.result(r.value, scope.features);
            return true;
          }
          if (r.case === "toolCall") {
            // An orchestrator that answers a stream_start like a unary call (its refusal of the
            // kind, `unknown_request`, is a StreamUnsupportedError from the sender).
            if (isUnknownToolAnswer(r.value)) throw this.toolGone(params.name, r.value.errorMessage);
            result = toolResponseToCallToolResult(r.value, scope.features);
            return true;
          }
          throw unexpected(frame, "stream_start");
        },
        { signal: scope.signal, timeoutMs: this.toolCallTimeoutMs },
      );
    } catch (err) {
      if (err instanceof StreamUnsupportedError) return undefined;
      throw err;
    }
    if (refused) {
      this.unaryOnly.add(params.name);
      return undefined;
    }
    if (!result) throw new JsonRpcError(ErrorCode.InternalError, `Orchestrator ended the stream of ${params.name} without stream_end`);
    this.clientLog(scope, "debug", { message: `${scope.method}: orchestrator stream_start answered`, chunks: acc.chunks });
    return result;
  }

  // ---------------------------------------------------------------- prompts

  private async fetchPrompts(): Promise<Prompt[]> {
    const response = await this.options.sender.send(listPromptsPluginRequest(), { timeoutMs: this.listTimeoutMs });
    if (response.response.case !== "listPrompts") throw unexpected(response, "list_prompts");
    return listPromptsResponseToPrompts(response.response.value);
  }

  private async listPrompts(params: Record<string, unknown>, scope: Scope): Promise<Result> {
    const cursor = params.cursor as string | undefined;
    let prompts: Prompt[];
    if (cursor === undefined) {
      const response = await this.rpc(listPromptsPluginRequest(), scope, this.listTimeoutMs);
      if (response.response.case !== "listPrompts") throw unexpected(response, "list_prompts");
      prompts = listPromptsResponseToPrompts(response.response.value);
      this.prompts.store(prompts);
    } else {
      prompts = await this.withSignal(this.prompts.current(), scope.signal);
    }
    const page = paginate(prompts, "prompts", cursor, this.pageSize);
    return page.nextCursor === undefined ? { prompts: page.items } : { prompts: page.items, nextCursor: page.nextCursor };
  }

  private async getPrompt(params: GetPromptRequest["params"], scope: Scope): Promise<Result> {
    const prompt = await this.withSignal(this.prompts.lookup(params.name), scope.signal);
    if (!prompt) throw new JsonRpcError(ErrorCode.InvalidParams, `Invalid params: unknown prompt ${JSON.stringify(params.name)}`, { prompt: params.name });
    const missing = missingPromptArguments(prompt, params.arguments);
    if (missing.length > 0) {
      throw new JsonRpcError(ErrorCode.InvalidParams, `Invalid params: prompt ${params.name} requires argument${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`, {
        prompt: params.name,
        missing,
      });
    }
    const response = await this.rpc(getPromptParamsToPluginRequest(params), scope, this.listTimeoutMs);
    if (response.response.case !== "promptGet") throw unexpected(response, "prompt_get");
    const value = response.response.value;
    const embedded = new Map<string, ResourceContents>();
    await Promise.all(
      resourcePathsOf(value).map(async (path) => {
        const contents = await this.readStorage(path, scope);
        if (contents) embedded.set(path, contents);
      }),
    );
    return promptGetResponseToResult(value, embedded, scope.features);
  }

  // ---------------------------------------------------------------- resources

  /** One `storage_list` per exposed prefix, the entries of all answers. */
  private async listStorage(scope: Scope): Promise<StorageEntry[]> {
    const answers = await Promise.all(
      this.resourcePrefixes.map(async (prefix) => {
        const response = await this.rpc(storageListPluginRequest(prefix, this.storageType), scope, this.listTimeoutMs);
        if (response.response.case !== "storageList") throw unexpected(response, "storage_list");
        return response.response.value.entries;
      }),
    );
    return answers.flat();
  }

  private async listResources(params: Record<string, unknown>, scope: Scope): Promise<Result> {
    const cursor = params.cursor as string | undefined;
    const resources = storageEntriesToResources(await this.listStorage(scope), this.resourcePrefixes);
    const page = paginate(resources, "resources", cursor, this.pageSize);
    return page.nextCursor === undefined ? { resources: page.items } : { resources: page.items, nextCursor: page.nextCursor };
  }

  private async listResourceTemplates(params: Record<string, unknown>, scope: Scope): Promise<Result> {
    const templates = resourceTemplatesFor(this.resourcePrefixes, await this.listStorage(scope));
    const page = paginate(templates, "resource-templates", params.cursor as string | undefined, this.pageSize);
    return page.nextCursor === undefined ? { resourceTemplates: page.items } : { resourceTemplates: page.items, nextCursor: page.nextCursor };
  }

  private async readResource(params: Record<string, unknown>, scope: Scope): Promise<Result> {
    const uri = params.uri as string;
    const path = uriToStoragePath(uri);
    if (!isExposed(path, this.resourcePrefixes)) throw new ResourceUriError(uri, `Resource not found: ${uri}`);
    const contents = await this.readStorage(path, scope, uri);
    if (!contents) throw new JsonRpcError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri });
    return { contents: [contents] };
  }

  /** One `storage_read`; undefined when the entry does not exist. */
  private async readStorage(path: string, scope: Scope, uri: string = storagePathToUri(path)): Promise<ResourceContents | undefined> {
    const response = await this.rpc(storageReadPluginRequest(path, this.storageType), scope, this.listTimeoutMs);
    if (response.response.case !== "storageRead") throw unexpected(response, "storage_read");
    return storageReadResponseToContents(uri, path, response.response.value);
  }

  // ---------------------------------------------------------------- subscriptions/listen

  /**
   * `subscriptions/listen` (≥ 2026-07-28): acknowledges with the notification types honoured
   * (only `toolsListChanged`, and only when the tool-change watch runs), then delivers them
   * tagged with the stream's id until the client cancels (no response) or the bridge shuts down
   * (answered with `SubscriptionsListenResult`).
   */
  private listen(params: Record<string, unknown>, scope: Scope): Promise<Result> {
    const wanted = (params.notifications ?? {}) as Record<string, unknown>;
    const honoured: Record<string, unknown> = {};
    if (wanted.toolsListChanged === true && this.watchesToolChanges) honoured.toolsListChanged = true;
    this.options.sink({
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: { _meta: { [SUBSCRIPTION_ID_META_KEY]: scope.id }, notifications: honoured },
    });
    return new Promise<Result>((resolve) => {
      const listener: Listener = {
        id: scope.id,
        toolsListChanged: honoured.toolsListChanged === true,
        end: () => {
          this.listeners.delete(listener);
          resolve({ _meta: { [SUBSCRIPTION_ID_META_KEY]: scope.id } });
        },
      };
      if (this.closed) {
        listener.end();
        return;
      }
      this.listeners.add(listener);
      scope.signal.addEventListener("abort", () => listener.end(), { once: true }); // cancelled: finish() drops the answer
    });
  }

  // ---------------------------------------------------------------- tool-set changes

  /**
   * Subscribes (once per session) to the orchestrator's `tools` topic. Every `event_delivery`
   * (and the resync event of a subscription re-established after a loss) fetches the tool list
   * afresh; only when it differs from the last one known is the change announced
   * ({@link onToolsChanged}). A refused subscription (the sender's StreamUnsupportedError: a
   * reset "unsupported", `unknown_request`, an empty `PluginResponse`) is not retried, and
   * `listChanged` is no longer advertised; a lost one is retried with backoff (1 s doubling to
   * 5 s, so changes are announced within about 5 s of the orchestrator coming back).
   */
  private startWatch(): void {
    if (this.watch || this.closed || !this.watchesToolChanges) return;
    const watch: Watch = { controller: new AbortController() };
    this.watch = watch;
    let delay = 1_000;
    const run = (): void => {
      const sender = this.options.sender;
      if (!canStream(sender) || watch.controller.signal.aborted) return;
      const request = create(PluginRequestSchema, {
        requestId: uuidv7(),
        request: { case: "subscribe", value: create(SubscribeSchema, { subscriptionId: uuidv7(), topic: TOOLS_TOPIC }) },
      });
      sender
        .stream(
          request,
          (frame) => {
            if (frame.response.case === "eventDelivery") {
              delay = 1_000;
              this.onToolEvent(frame.response.value.eventType);
            }
            return false;
          },
          { signal: watch.controller.signal },
        )
        .then(
          () => retry("the orchestrator ended the tools subscription"),
          (err: unknown) => {
            if (watch.controller.signal.aborted) return;
            if (err instanceof StreamUnsupportedError) {
              this.toolEventsRefused = true;
              // Expected of upstream Go orchestrators (the main deployment target): info, not a warning; once per session.
              this.log.info({ err: err.message }, "the orchestrator does not serve tool-change subscriptions (upstream Go orchestrators do not): clients see new tools at their next tools/list, without notifications/tools/list_changed");
              return;
            }
            retry((err as Error).message);
          },
        );
    };
    const retry = (why: string): void => {
      if (watch.controller.signal.aborted) return;
      this.log.debug({ why, delay }, "tools subscription ended; retrying");
      watch.timer = setTimeout(run, delay);
      watch.timer.unref();
      delay = Math.min(delay * 2, WATCH_RETRY_MAX_MS);
    };
    run();
  }

  /**
   * A tool-change event: compares the orchestrator's tool list with the last one known and
   * announces only a real change (a failed fetch counts as one: nothing to compare with). Events
   * arriving during a comparison are folded into one more comparison after it.
   */
  private onToolEvent(eventType: string): void {
    if (this.toolCheck) {
      this.toolCheck.again = true;
      return;
    }
    const check = { again: false };
    this.toolCheck = check;
    const run = async (): Promise<void> => {
      do {
        check.again = false;
        let changed: boolean;
        try {
          changed = await this.tools.refresh();
        } catch (err) {
          this.log.debug({ err: (err as Error).message }, "cannot fetch the tool list after a tool-change event; announcing a change");
          changed = true;
        }
        if (this.closed) return;
        if (changed) this.onToolsChanged(eventType);
        else this.log.debug({ eventType }, "tool-change event, but the tool set is unchanged: not announced");
      } while (check.again);
    };
    void run().finally(() => {
      this.toolCheck = undefined;
    });
  }

  private onToolsChanged(eventType: string): void {
    this.unaryOnly.clear();
    this.log.debug({ eventType }, "orchestrator tool set changed");
    for (const l of this.listeners) {
      if (!l.toolsListChanged) continue;
      this.options.sink({ jsonrpc: "2.0", method: "notifications/tools/list_changed", params: { _meta: { [SUBSCRIPTION_ID_META_KEY]: l.id } } });
    }
    if (!this.initializeAnswered || featuresOf(this.protocolVersion).stateless) return;
    if (!this.validators.messageDefinition("s2c", "notifications/tools/list_changed")) return;
    this.options.sink({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    this.clientLog(undefined, "info", { message: "the orchestrator's tool set changed", eventType });
  }

  // ---------------------------------------------------------------- plumbing

  /** One unary orchestrator RPC for `scope`; a debug log notification names it when it succeeds. */
  private async rpc(request: PluginRequest, scope: Scope, timeoutMs: number): Promise<PluginResponse> {
    const response = await this.options.sender.send(request, { signal: scope.signal, timeoutMs });
    this.clientLog(scope, "debug", { message: `${scope.method}: forwarded to the orchestrator (PluginRequest ${request.request.case ?? "without a request"}), which answered (PluginResponse ${response.response.case ?? "without a response"})`, request: request.request.case, response: response.response.case });
    return response;
  }

  /** `promise`, or a rejection as soon as `signal` aborts (the shared work itself continues). */
  private withSignal<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
    if (signal.aborted) return Promise.reject(new SenderError("aborted", "request cancelled"));
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(new SenderError("aborted", "request cancelled"));
      signal.addEventListener("abort", onAbort, { once: true });
      promise.then(
        (v) => {
          signal.removeEventListener("abort", onAbort);
          resolve(v);
        },
        (e: unknown) => {
          signal.removeEventListener("abort", onAbort);
          reject(e);
        },
      );
    });
  }
}

/**
 * Collects the responses of one batch and emits them as one array when every request element
 * has been answered or dropped and the batch was fully read.
 */
class BatchCollector {
  private readonly answers: OutboundBatch = [];
  private pending = 0;
  private sealed = false;
  private emitted = false;

  constructor(private readonly emit: (answer: OutboundBatch) => void) {}

  slot(): Responder {
    this.pending++;
    let used = false;
    return {
      send: (message) => {
        if (used) return;
        used = true;
        this.answers.push(message);
        this.settle();
      },
      drop: () => {
        if (used) return;
        used = true;
        this.settle();
      },
    };
  }

  seal(): void {
    this.sealed = true;
    this.maybeEmit();
  }

  private settle(): void {
    this.pending--;
    this.maybeEmit();
  }

  private maybeEmit(): void {
    if (!this.sealed || this.pending > 0 || this.emitted) return;
    this.emitted = true;
    if (this.answers.length > 0) this.emit(this.answers);
  }
}

/** Whether any supported revision defines `method` as a client request. */
function definedInAnyRevision(method: string): boolean {
  return [...DEFAULT_VERSION_SUPPORT.legacy, ...DEFAULT_VERSION_SUPPORT.modern].some(
    (v) => validatorsFor(v)?.messageDefinition("c2s", method)?.kind === "request",
  );
}

/**
 * `result` as the schema sees it: the ids the bridge puts in a result's `_meta` (the
 * `subscriptions/listen` stream id) are {@link ExactId}s, validated as their JSON values.
 */
function withPlainMetaIds(result: Result): Result {
  const meta = (result as { _meta?: Record<string, unknown> })._meta;
  if (!meta || !Object.values(meta).some((v) => v instanceof ExactId)) return result;
  const plain = Object.fromEntries(Object.entries(meta).map(([k, v]) => [k, v instanceof ExactId ? v.value : v]));
  return { ...result, _meta: plain };
}

function requireValidators(version: string): ProtocolValidators {
  const validators = validatorsFor(version);
  if (!validators) throw new Error(`no generated validators for MCP protocol version ${version}`);
  return validators;
}

/**
 * The one mapping of a tool the orchestrator does not have (missing from its tool list, or a
 * `tool_not_found` answer) to `-32602` (MCP server/tools, "Error Handling": unknown tools are
 * protocol errors, in every revision).
 */
function unknownTool(name: string, detail: string): JsonRpcError {
  return new JsonRpcError(ErrorCode.InvalidParams, `Unknown tool: ${name}`, { tool: name, detail });
}

function unexpected(response: PluginResponse, expected: string): JsonRpcError {
  const r = response.response;
  // The protocol's only failure shape (e.g. a prompt whose render failed): its message is the answer.
  if (r.case === "toolCall" && !r.value.success) {
    return new JsonRpcError(ErrorCode.InternalError, `Orchestrator could not answer ${expected}: ${r.value.errorMessage || r.value.errorCode}`, { errorCode: r.value.errorCode });
  }
  return new JsonRpcError(
    ErrorCode.InternalError,
    `Orchestrator answered ${expected} with ${response.response.case ?? "an empty response"}`,
  );
}

/** One line for `error.message`: the first issue as `<pointer>: <reason>`. */
function describe(issues: SchemaIssue[]): string {
  const first = issues[0]!;
  return `${first.pointer || "/"}: ${first.reason}`;
}

/** `error.data` for validation failures: the failing JSON pointer and reason, then all issues. */
function issueData(issues: SchemaIssue[]) {
  const first = issues[0]!;
  return { pointer: first.pointer, reason: first.reason, definition: first.definition, issues };
}

