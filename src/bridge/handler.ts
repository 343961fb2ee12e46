/**
 * The MCP server side of the bridge: one instance per stdio session.
 *
 * Input: one JSON-RPC line at a time ({@link McpHandler.handleLine}). Output: JSON-RPC messages
 * handed to a sink. Between them, in order: JSON parse → kind → generated envelope validator →
 * generated per-method validator → method table → translator → {@link Sender} → translator →
 * generated result validator → sink. Nothing here throws to the caller: every failure becomes a
 * JSON-RPC error response (or, for notifications, a log line).
 *
 * Implements MCP 2025-06-18 "Base Protocol" (messages, lifecycle, ping, cancellation) and
 * "Server Features / Tools".
 */
import { v4 as uuidv4 } from "uuid";
import type { Logger } from "../log.js";
import { childLogger } from "../log.js";
import type { CallToolRequest, Implementation, InitializeRequest, InitializeResult } from "../gen/mcp/2025-06-18/types.js";
import type { PluginRequest, PluginResponse } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { ErrorCode } from "../jsonrpc/errors.js";
import {
  classify,
  errorResponse,
  recoverId,
  recoverIdFromPrefix,
  resultResponse,
  type JSONRPCResponse,
  type OutboundMessage,
  type RequestId,
} from "../jsonrpc/message.js";
import { LATEST_PROTOCOL_VERSION, negotiateProtocolVersion } from "../mcp/versions.js";
import { validatorsFor, type ProtocolValidators, type SchemaIssue } from "../mcp/validation.js";
import { SenderError, type Sender } from "../quic/sender.js";
import {
  callToolParamsToPluginRequest,
  listToolsPluginRequest,
  listToolsResponseToResult,
  toolResponseToCallToolResult,
} from "../translate/tools.js";
import { StructConversionError } from "../translate/struct.js";

/** Where responses go (stdout's {@link MessageWriter} in `serve`, an array in tests). */
export type MessageSink = (message: OutboundMessage) => void;

export interface HandlerOptions {
  sender: Sender;
  sink: MessageSink;
  /** `serverInfo` in the initialize result. */
  serverInfo: Implementation;
  /** `ToolRequest.session_id` for this session; a fresh UUID by default. */
  sessionId?: string;
  /** Deadline for `tools/call` RPCs, ms (default 300 000). */
  toolCallTimeoutMs?: number;
  /** Deadline for list RPCs, ms (default 10 000). */
  listTimeoutMs?: number;
  logger?: Logger;
}

/** Any MCP result object (`InitializeResult`, `CallToolResult`, ...). */
type Result = object;
type MethodHandler = (params: Record<string, unknown>, ctx: CallContext) => Result | Promise<Result>;

interface CallContext {
  id: RequestId;
  signal: AbortSignal;
}

interface InFlight {
  controller: AbortController;
  /** Set when the client cancelled it: no response may follow (MCP cancellation). */
  cancelled: boolean;
}

/** Thrown inside method handlers to answer with a specific JSON-RPC error. */
export class JsonRpcError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export class McpHandler {
  /** Protocol version of this session: negotiated by `initialize`, our latest before that. */
  protocolVersion: string = LATEST_PROTOCOL_VERSION;
  /** True once the client sent `notifications/initialized`. */
  initialized = false;

  private validators: ProtocolValidators;
  private readonly inFlight = new Map<RequestId, InFlight>();
  private idleWaiters: Array<() => void> = [];
  private readonly sessionId: string;
  private readonly log: Logger;
  private readonly methods: Record<string, MethodHandler>;
  private readonly toolCallTimeoutMs: number;
  private readonly listTimeoutMs: number;

  constructor(private readonly options: HandlerOptions) {
    this.validators = requireValidators(this.protocolVersion);
    this.sessionId = options.sessionId ?? uuidv4();
    this.log = options.logger ?? childLogger("bridge");
    this.toolCallTimeoutMs = options.toolCallTimeoutMs ?? 300_000;
    this.listTimeoutMs = options.listTimeoutMs ?? 10_000;
    this.methods = {
      initialize: (p) => this.initialize(p as InitializeRequest["params"]),
      ping: () => ({}),
      "tools/list": (_p, ctx) => this.listTools(ctx),
      "tools/call": (p, ctx) => this.callTool(p as CallToolRequest["params"], ctx),
    };
  }

  /** Number of requests received and not yet answered. */
  get pending(): number {
    return this.inFlight.size;
  }

  /**
   * Handles one inbound line (without its terminator). Never throws.
   * @param line UTF-8 bytes or text of one JSON-RPC message.
   */
  handleLine(line: Buffer | string): void {
    let message: unknown;
    try {
      message = JSON.parse(typeof line === "string" ? line : line.toString("utf8"));
    } catch (err) {
      this.reply(errorResponse(null, ErrorCode.ParseError, `Parse error: ${(err as Error).message}`));
      return;
    }
    this.handleMessage(message);
  }

  /**
   * Handles a line that exceeded the size cap (its bytes were discarded). Answers with
   * `-32600` using the id recovered from the line's first bytes, or `null`.
   */
  handleOversizedLine(head: Buffer, bytes: number, maxBytes: number): void {
    const id = recoverIdFromPrefix(head.toString("utf8"));
    this.reply(
      errorResponse(id, ErrorCode.InvalidRequest, `Message of ${bytes} bytes exceeds the ${maxBytes}-byte limit`, {
        bytes,
        maxBytes,
      }),
    );
  }

  /** Handles one parsed JSON value. Never throws. */
  handleMessage(message: unknown): void {
    switch (classify(message)) {
      case "request":
        return this.onRequest(message as Record<string, unknown>);
      case "notification":
        return this.onNotification(message as Record<string, unknown>);
      case "response":
        // The bridge sends no server→client requests, so no response can be expected.
        this.log.warn({ id: recoverId(message) }, "ignoring a response to a request the bridge never sent");
        return;
      case "batch":
        this.reply(
          errorResponse(
            null,
            ErrorCode.InvalidRequest,
            `JSON-RPC batches are not supported in MCP protocol version ${this.protocolVersion}`,
          ),
        );
        return;
      case "invalid":
        this.reply(errorResponse(recoverId(message), ErrorCode.InvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message"));
        return;
    }
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
    for (const [id, entry] of this.inFlight) {
      if (entry.cancelled) continue;
      entry.cancelled = true; // the handler's own completion must not answer again
      entry.controller.abort();
      this.options.sink(errorResponse(id, ErrorCode.InternalError, reason));
    }
    this.inFlight.clear();
    this.notifyIdle();
  }

  // ---------------------------------------------------------------- requests

  private onRequest(message: Record<string, unknown>): void {
    const envelopeIssues = this.validators.validate("JSONRPCRequest", message);
    if (envelopeIssues) {
      this.reply(
        errorResponse(recoverId(message), ErrorCode.InvalidRequest, `Invalid Request: ${describe(envelopeIssues)}`, issueData(envelopeIssues)),
      );
      return;
    }
    const id = message.id as RequestId;
    const method = message.method as string;
    const definition = this.validators.messageDefinition("c2s", method);
    const handler = Object.hasOwn(this.methods, method) ? this.methods[method] : undefined;
    if (!definition || definition.kind !== "request" || !handler) {
      this.reply(errorResponse(id, ErrorCode.MethodNotFound, `Method not found: ${method}`));
      return;
    }
    const issues = this.validators.validate(definition.definition, message);
    if (issues) {
      this.reply(errorResponse(id, ErrorCode.InvalidParams, `Invalid params: ${describe(issues)}`, issueData(issues)));
      return;
    }
    if (this.inFlight.has(id)) {
      this.reply(errorResponse(id, ErrorCode.InvalidRequest, `Invalid Request: request id ${JSON.stringify(id)} is already in flight`));
      return;
    }
    const entry: InFlight = { controller: new AbortController(), cancelled: false };
    this.inFlight.set(id, entry);
    const params = (message.params ?? {}) as Record<string, unknown>;
    let outcome: Result | Promise<Result>;
    try {
      outcome = handler(params, { id, signal: entry.controller.signal });
    } catch (err) {
      this.finish(id, entry, undefined, err, definition.resultDefinition);
      return;
    }
    if (outcome instanceof Promise) {
      outcome.then(
        (result) => this.finish(id, entry, result, undefined, definition.resultDefinition),
        (err: unknown) => this.finish(id, entry, undefined, err, definition.resultDefinition),
      );
    } else {
      this.finish(id, entry, outcome, undefined, definition.resultDefinition);
    }
  }

  private finish(id: RequestId, entry: InFlight, result: Result | undefined, err: unknown, resultDefinition: string | undefined): void {
    if (this.inFlight.get(id) !== entry) return; // already answered (shutdown) or replaced
    this.inFlight.delete(id);
    if (!entry.cancelled) {
      if (err === undefined) {
        const issues = resultDefinition ? this.validators.validate(resultDefinition, result) : null;
        if (issues) {
          this.log.error({ id, issues }, "outbound result failed schema validation");
          this.reply(
            errorResponse(id, ErrorCode.InternalError, `Internal error: the result would not be valid MCP: ${describe(issues)}`, issueData(issues)),
          );
        } else {
          this.reply(resultResponse(id, result as JSONRPCResponse["result"]));
        }
      } else {
        this.reply(this.errorFor(id, err));
      }
    }
    this.notifyIdle();
  }

  private errorFor(id: RequestId, err: unknown) {
    if (err instanceof JsonRpcError) return errorResponse(id, err.code, err.message, err.data);
    if (err instanceof SenderError) {
      const address = this.options.sender.address;
      return errorResponse(id, ErrorCode.InternalError, `Orchestrator at ${address} failed: ${err.message}`, {
        kind: err.kind,
        address,
      });
    }
    if (err instanceof StructConversionError) {
      return errorResponse(id, ErrorCode.InvalidParams, `Invalid params: ${err.message}`, { pointer: err.pointer });
    }
    this.log.error({ err, id }, "request handler failed");
    return errorResponse(id, ErrorCode.InternalError, `Internal error: ${(err as Error)?.message ?? String(err)}`);
  }

  private notifyIdle(): void {
    if (this.inFlight.size > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  // ---------------------------------------------------------------- notifications

  private onNotification(message: Record<string, unknown>): void {
    const envelopeIssues = this.validators.validate("JSONRPCNotification", message);
    if (envelopeIssues) {
      this.log.warn({ issues: envelopeIssues }, "dropping an invalid notification");
      return;
    }
    const method = message.method as string;
    const definition = this.validators.messageDefinition("c2s", method);
    if (!definition || definition.kind !== "notification") {
      this.log.debug({ method }, "ignoring an unknown notification");
      return;
    }
    const issues = this.validators.validate(definition.definition, message);
    if (issues) {
      this.log.warn({ method, issues }, "dropping a notification with invalid params");
      return;
    }
    const params = (message.params ?? {}) as Record<string, unknown>;
    switch (method) {
      case "notifications/initialized":
        this.initialized = true;
        return;
      case "notifications/cancelled":
        this.cancel(params.requestId as RequestId, params.reason as string | undefined);
        return;
      default:
        this.log.debug({ method }, "notification has no effect on the bridge");
    }
  }

  /** MCP cancellation: abort the request's RPC; it gets no response afterwards. */
  private cancel(id: RequestId, reason: string | undefined): void {
    const entry = this.inFlight.get(id);
    if (!entry) return; // unknown or already answered: ignore, per the spec
    entry.cancelled = true;
    entry.controller.abort(new Error(reason ?? "cancelled by client"));
    this.log.debug({ id, reason }, "request cancelled by client");
  }

  // ---------------------------------------------------------------- methods

  private initialize(params: InitializeRequest["params"]): InitializeResult {
    this.protocolVersion = negotiateProtocolVersion(params.protocolVersion);
    this.validators = requireValidators(this.protocolVersion);
    return {
      protocolVersion: this.protocolVersion,
      capabilities: { tools: { listChanged: false } },
      serverInfo: this.options.serverInfo,
    };
  }

  private async listTools(ctx: CallContext): Promise<Result> {
    const response = await this.rpc(listToolsPluginRequest(), ctx, this.listTimeoutMs);
    if (response.response.case !== "listTools") throw unexpected(response, "list_tools");
    return listToolsResponseToResult(response.response.value);
  }

  private async callTool(params: CallToolRequest["params"], ctx: CallContext): Promise<Result> {
    const request = callToolParamsToPluginRequest(params, { sessionId: this.sessionId });
    const response = await this.rpc(request, ctx, this.toolCallTimeoutMs);
    if (response.response.case !== "toolCall") throw unexpected(response, "tool_call");
    return toolResponseToCallToolResult(response.response.value);
  }

  private rpc(request: PluginRequest, ctx: CallContext, timeoutMs: number): Promise<PluginResponse> {
    return this.options.sender.send(request, { signal: ctx.signal, timeoutMs });
  }

  private reply(message: OutboundMessage): void {
    this.options.sink(message);
  }
}

function requireValidators(version: string): ProtocolValidators {
  const validators = validatorsFor(version);
  if (!validators) throw new Error(`no generated validators for MCP protocol version ${version}`);
  return validators;
}

function unexpected(response: PluginResponse, expected: string): JsonRpcError {
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
