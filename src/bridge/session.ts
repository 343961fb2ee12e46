/**
 * The MCP session of one stdio connection: every inbound line goes through the same stages, in
 * order, and every request with an id gets exactly one response with that exact id.
 *
 * 1. parse: a too-deep line is refused before `JSON.parse` (../jsonrpc/line-scan.ts); the exact
 *    source text of ids and progress tokens is kept (../jsonrpc/request-id.ts).
 * 2. classify: request, notification, response, batch, invalid (../jsonrpc/message.ts).
 * 3. version: the revision governing the message (../mcp/negotiation.ts `requestProtocolVersion`).
 * 4. validate: the revision's generated envelope and per-method validators (../mcp/validation.ts).
 * 5. in-flight / cancel / batch: duplicate ids, `notifications/cancelled`, batches (2025-03-26).
 * 6. dispatch to the handler registered for the method (./methods/); absent: `-32601`.
 * 7. result check: decoration for stateless revisions, depth limit, the generated result validator.
 * 8. sink: the response (or the batch answer) goes to {@link SessionOptions.sink}.
 *
 * Nothing here throws to the caller and no method body lives here. A handler answers with a
 * result or a thrown {@link JsonRpcError} (which carries its code); any other failure passes
 * through {@link SessionOptions.failure} (the transport's errors, ./methods/orchestrator.ts) and
 * is otherwise `-32603`.
 *
 * Revisions: 2024-11-05 … 2025-11-25 negotiate the session's revision with `initialize` (the
 * client's when supported, else our newest of that family); requests before it are served with
 * our newest initialize-based revision. 2026-07-28 and later are stateless: a request naming its
 * revision in `params._meta["io.modelcontextprotocol/protocolVersion"]` is served in it; an
 * unsupported one is `-32022`.
 */
import type { Implementation, ProgressToken } from "../gen/mcp/2025-06-18/types.js";
import { ErrorCode, JsonRpcError } from "../jsonrpc/errors.js";
import { exceedsDepth, MAX_NESTING_DEPTH, scanLine, type MessageTokens } from "../jsonrpc/line-scan.js";
import {
  classify,
  errorResponse,
  recoverIdFromPrefix,
  resultResponse,
  type JSONRPCError,
  type JSONRPCNotification,
  type JSONRPCResponse,
  type OutboundLine,
} from "../jsonrpc/message.js";
import { ExactId } from "../jsonrpc/request-id.js";
import type { Logger } from "../log.js";
import {
  decorateResult,
  DEFAULT_VERSION_SUPPORT,
  LOG_LEVEL_META_KEY,
  negotiateInitializeVersion,
  notificationProtocolVersion,
  requestProtocolVersion,
} from "../mcp/negotiation.js";
import { validatorsFor, type ProtocolValidators, type SchemaIssue } from "../mcp/validation.js";
import { featuresOf } from "../translate/features.js";
import { Cancellation } from "../transport/cancel.js";
import { BatchCollector, type Responder } from "./batch.js";
import { atLeast, isLoggingLevel, logNotification, type LoggingLevel } from "./client-log.js";
import type { MethodRegistry, RequestScope, SessionState } from "./methods/context.js";

/** Where output goes (stdout's `MessageWriter` in `serve`, an array in tests). */
export type MessageSink = (message: OutboundLine) => void;

export interface SessionOptions {
  /** The methods served; a method absent from it is `-32601`. */
  registry: MethodRegistry;
  sink: MessageSink;
  /** `_meta` serverInfo of stateless results. */
  serverInfo: Implementation;
  log: Logger;
  /** The JSON-RPC error for a failure that is not a {@link JsonRpcError}; undefined: `-32603` "Internal error". */
  failure?: (scope: RequestScope, err: unknown) => JsonRpcError | undefined;
  /** Called for every request dispatched to a handler, before the handler runs. */
  onDispatch?: (scope: RequestScope) => void;
  /** `initialize` adopted a revision. */
  onAdopt?: () => void;
  /** Called whenever a request stops being in flight (answered, dropped or failed). */
  onSettled?: () => void;
}

interface InFlight {
  id: ExactId;
  /** Bytes of the input line charged to this request until it settles (see `unansweredBytes`). */
  bytes: number;
  /** Its cancellation (client cancel, shutdown); the handler's `scope.signal`. */
  controller: Cancellation;
  cancelled: boolean;
  done: boolean;
  responder: Responder;
}

/** One stdio session: the stages above over a {@link MethodRegistry}; see {@link SessionState} for the lifecycle fields. */
export class McpSession implements SessionState {
  sessionVersion: string | undefined;
  initializeAnswered = false;
  /** True once the client sent `notifications/initialized`. */
  initialized = false;
  logLevel: LoggingLevel | undefined;
  validators: ProtocolValidators;

  /** Keyed by {@link ExactId.key}: ids compare by exact value, not by their double. */
  private readonly inFlight = new Map<string, InFlight>();
  /** Source text of the exact tokens of each element of a batch parsed by {@link handleLine}. */
  private readonly tokens = new WeakMap<object, MessageTokens>();
  /** While {@link handleLine} handles a line of one message: that message and its exact tokens. */
  private lineMessage: object | undefined;
  private lineTokens: MessageTokens | undefined;
  /** Input bytes charged to the next request dispatched (its share of the current line). */
  private chargeBytes = 0;
  /** While a batch is dispatched: the keys of the request ids seen in it so far. */
  private batchIds: Set<string> | undefined;
  private inFlightBytes = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly options: SessionOptions) {
    this.validators = requireValidators(this.protocolVersion);
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

  adopt(version: string): void {
    this.sessionVersion = version;
    this.validators = requireValidators(version);
    this.initializeAnswered = true;
    this.options.onAdopt?.();
  }

  /** Writes a server→client notification. */
  notify(message: JSONRPCNotification): void {
    this.options.sink(message);
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
    } else if (message !== null && typeof message === "object") {
      this.lineMessage = message;
      this.lineTokens = scan.messages[0];
    }
    this.chargeBytes = typeof line === "string" ? Buffer.byteLength(line) : line.length;
    try {
      this.handleMessage(message);
    } finally {
      this.chargeBytes = 0;
      this.lineMessage = undefined;
      this.lineTokens = undefined;
    }
  }

  /**
   * Handles a line that exceeded the size cap (its bytes were discarded). Answers with
   * `-32600` using the id recovered from the line's first bytes, or `null`.
   */
  handleOversizedLine(head: Buffer, bytes: number, maxBytes: number): void {
    const id = recoverIdFromPrefix(head.toString("utf8"));
    this.options.sink(errorResponse(id, ErrorCode.InvalidRequest, `Message of ${bytes} bytes exceeds the ${maxBytes}-byte limit`, { bytes, maxBytes }));
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

  /** The log level that applies to `scope` (per request in stateless revisions, else the session's); undefined: no log messages. */
  logThreshold(scope: RequestScope | undefined): LoggingLevel | undefined {
    const features = scope?.features ?? featuresOf(this.protocolVersion);
    return features.perRequestLogLevel ? scope?.logLevel : this.logLevel;
  }

  /** Sends a `notifications/message` (from `logger`, default the bridge's name) when the applicable log level lets `level` through. */
  clientLog(scope: RequestScope | undefined, level: LoggingLevel, data: unknown, logger?: string): void {
    const threshold = this.logThreshold(scope);
    if (threshold === undefined || !atLeast(level, threshold)) return;
    if (scope && (scope.entry.done || scope.entry.cancelled)) return;
    const validators = scope?.validators ?? this.validators;
    if (!validators.messageDefinition("s2c", "notifications/message")) return;
    this.options.sink(logNotification(level, data, logger));
  }

  // ---------------------------------------------------------------- classify

  private readonly direct: Responder = {
    send: (message) => this.options.sink(message),
    drop: () => {},
  };

  /**
   * `value` (a member of `message`) as an exact id, using the source text {@link handleLine}
   * recorded for `slot` when it is `value`'s token; `undefined` when it is not an MCP request id.
   */
  private exactId(message: object, slot: keyof MessageTokens, value: unknown): ExactId | undefined {
    return ExactId.fromSource(this.tokensOf(message)?.[slot], value);
  }

  /** The exact tokens {@link handleLine} recorded for `message`, if it parsed it. */
  private tokensOf(message: object): MessageTokens | undefined {
    return message === this.lineMessage ? this.lineTokens : this.tokens.get(message);
  }

  /** The message's id for an error response: exact when it is an MCP request id, else `null`. */
  private idOf(message: unknown): ExactId | null {
    if (message === null || typeof message !== "object") return null;
    return this.exactId(message, "id", (message as { id?: unknown }).id) ?? null;
  }

  private dispatch(message: unknown, responder: Responder, inBatch: boolean): void {
    switch (classify(message)) {
      case "request":
        return this.onRequest(message as Record<string, unknown>, responder, inBatch);
      case "notification":
        responder.drop();
        return this.onNotification(message as Record<string, unknown>);
      case "response":
        // The bridge sends no server→client requests, so no response can be expected.
        this.options.log.warn({ id: this.idOf(message)?.logged }, "ignoring a response to a request the bridge never sent");
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
    if (!featuresOf(this.protocolVersion).batches) {
      this.options.sink(errorResponse(null, ErrorCode.InvalidRequest, `JSON-RPC batches are not supported in MCP protocol version ${this.protocolVersion}`));
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

  // ---------------------------------------------------------------- requests: version, validate, in flight, dispatch

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
    const registry = this.options.registry;
    // The one place that decides a request's revision: src/mcp/negotiation.ts.
    const revision = requestProtocolVersion(message, this.sessionVersion);
    if (!revision.ok) {
      // A method no supported revision defines is "not found" whatever its revision would be.
      const method = message.method;
      if (typeof method === "string" && !registry.has(method) && !definedInAnyRevision(method)) {
        responder.send(errorResponse(id, ErrorCode.MethodNotFound, `Method not found: ${method}`));
        return;
      }
      responder.send(errorResponse(id, revision.error.code, revision.error.message, revision.error.data));
      return;
    }
    const validators = requireValidators(revision.version);
    const envelopeIssues = validators.validate("JSONRPCRequest", message);
    if (envelopeIssues) {
      responder.send(errorResponse(id, ErrorCode.InvalidRequest, `Invalid Request: ${describe(envelopeIssues)}`, issueData(envelopeIssues)));
      return;
    }
    const method = message.method as string;
    if (inBatch && method === "initialize") {
      responder.send(errorResponse(id, ErrorCode.InvalidRequest, "Invalid Request: initialize must not be part of a JSON-RPC batch"));
      return;
    }
    const definition = validators.messageDefinition("c2s", method);
    const handler = registry.get(method);
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
      responder.send(errorResponse(null, ErrorCode.InvalidRequest, `Invalid Request: request id ${id.text} is already in flight`, { duplicateId: id }));
      return;
    }
    const entry: InFlight = { id, bytes: this.chargeBytes, controller: new Cancellation(), cancelled: false, done: false, responder };
    this.inFlight.set(id.key, entry);
    this.inFlightBytes += entry.bytes;
    const params = (message.params ?? {}) as Record<string, unknown>;
    const meta = (params._meta ?? {}) as Record<string, unknown>;
    const features = featuresOf(revision.version);
    const token = meta.progressToken;
    const logLevel = meta[LOG_LEVEL_META_KEY];
    const scope: RequestScope = {
      id,
      method,
      version: revision.version,
      validators,
      features,
      signal: entry.controller,
      entry,
      ...(typeof token === "string" || typeof token === "number" ? { progressToken: this.exactProgressToken(message, token) } : {}),
      ...(features.perRequestLogLevel && isLoggingLevel(logLevel) ? { logLevel } : {}),
    };
    this.options.onDispatch?.(scope);
    const resultDefinition = definition.resultDefinition;
    let outcome: object | Promise<object>;
    try {
      outcome = handler(params, scope);
    } catch (err) {
      this.finish(scope, entry, undefined, err, resultDefinition);
      return;
    }
    if (outcome instanceof Promise) {
      outcome.then(
        (result) => this.finish(scope, entry, result, undefined, resultDefinition),
        (err: unknown) => this.finish(scope, entry, undefined, err, resultDefinition),
      );
    } else {
      this.finish(scope, entry, outcome, undefined, resultDefinition);
    }
  }

  /** The progress token exactly as written when it is an id-like token, else its value (e.g. a non-integer number). */
  private exactProgressToken(message: object, token: string | number): ProgressToken | ExactId {
    return ExactId.fromSource(this.tokensOf(message)?.progressToken, token) ?? token;
  }

  // ---------------------------------------------------------------- result check and sink

  private finish(scope: RequestScope, entry: InFlight, result: object | undefined, err: unknown, resultDefinition: string | undefined): void {
    const id = entry.id;
    if (this.inFlight.get(id.key) !== entry) return; // already answered (shutdown) or replaced
    this.inFlight.delete(id.key);
    this.inFlightBytes -= entry.bytes;
    if (entry.cancelled || entry.done) {
      if (!entry.done) entry.responder.drop();
      entry.done = true;
    } else {
      // Built before `done` is set: building an error may still log to the client about this request.
      const message = err === undefined ? this.resultMessage(scope, result!, resultDefinition) : this.errorFor(scope, err);
      entry.done = true;
      entry.responder.send(message);
    }
    this.notifyIdle();
  }

  /** Decorates (stateless revisions), checks and wraps a result. */
  private resultMessage(scope: RequestScope, result: object, resultDefinition: string | undefined): JSONRPCResponse | JSONRPCError {
    // Stateless revisions: resultType, serverInfo in _meta, cache hints (negotiation.ts).
    const final = decorateResult(scope.version, scope.method, result, { serverInfo: this.options.serverInfo });
    if (exceedsDepth(final, MAX_NESTING_DEPTH)) {
      return errorResponse(scope.id, ErrorCode.InternalError, `Internal error: the result nests deeper than the limit of ${MAX_NESTING_DEPTH}`, {
        maxDepth: MAX_NESTING_DEPTH,
      });
    }
    const issues = resultDefinition ? scope.validators.validate(resultDefinition, withPlainMetaIds(final)) : null;
    if (issues) {
      this.options.log.error({ id: scope.id.logged, issues }, "outbound result failed schema validation");
      const whose = scope.tool === undefined ? "the result" : `the result of tool ${scope.tool}`;
      return errorResponse(scope.id, ErrorCode.InternalError, `Internal error: ${whose} would not be valid MCP: ${describe(issues)}`, {
        ...issueData(issues),
        ...(scope.tool === undefined ? {} : { tool: scope.tool }),
      });
    }
    return resultResponse(scope.id, final as JSONRPCResponse["result"]);
  }

  private errorFor(scope: RequestScope, err: unknown): JSONRPCError {
    const failure = err instanceof JsonRpcError ? err : this.options.failure?.(scope, err);
    if (failure) return errorResponse(scope.id, failure.code, failure.message, failure.data);
    this.options.log.error({ err, id: scope.id.logged }, "request handler failed");
    return errorResponse(scope.id, ErrorCode.InternalError, `Internal error: ${(err as Error)?.message ?? String(err)}`);
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
      this.options.log.debug({ method: message.method }, "ignoring a notification before initialize");
      return;
    }
    const validators = requireValidators(version);
    const envelopeIssues = validators.validate("JSONRPCNotification", message);
    if (envelopeIssues) {
      this.options.log.warn({ issues: envelopeIssues }, "dropping an invalid notification");
      return;
    }
    const method = message.method as string;
    const definition = validators.messageDefinition("c2s", method);
    if (!definition || definition.kind !== "notification") {
      this.options.log.debug({ method }, "ignoring an unknown notification");
      return;
    }
    const issues = validators.validate(definition.definition, message);
    if (issues) {
      this.options.log.warn({ method, issues }, "dropping a notification with invalid params");
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
          this.options.log.warn({ method, issues: [{ path: "/params/requestId", message: "must be a string or an integer" }] }, "dropping a notification with invalid params");
          return;
        }
        this.cancel(requestId, params.reason as string | undefined);
        return;
      }
      default:
        this.options.log.debug({ method }, "notification has no effect on the bridge");
    }
  }

  /** MCP cancellation: abort the request's RPC (its QUIC stream is cancelled); it gets no response afterwards. */
  private cancel(id: ExactId, reason: string | undefined): void {
    const entry = this.inFlight.get(id.key);
    if (!entry || entry.done || entry.cancelled) {
      // Unknown, already answered or already cancelled: ignored, per the spec (a notification without effect).
      const what = entry?.cancelled === true && !entry.done ? "already cancelled" : "not in flight (unknown or already answered)";
      this.options.log.debug({ id: id.logged, reason }, `cancellation of a request ${what}: ignored`);
      return;
    }
    entry.cancelled = true;
    entry.controller.abort(new Error(reason ?? "cancelled by client"));
    this.options.log.debug({ id: id.logged, reason }, "request cancelled by client");
  }
}

/** Whether any supported revision defines `method` as a client request. */
function definedInAnyRevision(method: string): boolean {
  return [...DEFAULT_VERSION_SUPPORT.legacy, ...DEFAULT_VERSION_SUPPORT.modern].some((v) => validatorsFor(v)?.messageDefinition("c2s", method)?.kind === "request");
}

/**
 * `result` as the schema sees it: the ids the bridge puts in a result's `_meta` (the
 * `subscriptions/listen` stream id) are {@link ExactId}s, validated as their JSON values.
 */
function withPlainMetaIds(result: object): object {
  const meta = (result as { _meta?: Record<string, unknown> })._meta;
  if (!meta || !Object.values(meta).some((v) => v instanceof ExactId)) return result;
  const plain = Object.fromEntries(Object.entries(meta).map(([k, v]) => [k, v instanceof ExactId ? v.value : v]));
  return { ...result, _meta: plain };
}

/** The generated validators of a supported revision. */
export function requireValidators(version: string): ProtocolValidators {
  const validators = validatorsFor(version);
  if (!validators) throw new Error(`no generated validators for MCP protocol version ${version}`);
  return validators;
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
