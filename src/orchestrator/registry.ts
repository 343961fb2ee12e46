/**
 * The reference orchestrator's tool registry: named tools with a JSON Schema for their input and
 * an async handler. Results and errors map onto `ToolResponse` (orchestra-protocol.md,
 * "Messages": `ToolResponse{success, result Struct, error_code, error_message}`).
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { isLoggingLevel, LOGGING_LEVELS, type LoggingLevel } from "../bridge/client-log.js";
import { LOG_CONTENT_TYPE, PROGRESS_CONTENT_TYPE, RESULT_CONTENT_TYPE } from "../translate/streams.js";
import { TOOL_NOT_FOUND_CODE } from "../translate/tools.js";
import { MAX_NESTING_DEPTH } from "../jsonrpc/line-scan.js";

/** What the server hands to {@link ToolRegistry.call} / {@link ToolRegistry.callStream} for one call. */
export interface CallContext {
  /** Aborted when the caller cancels the RPC stream or the server stops. */
  signal: AbortSignal;
  /** The serving orchestrator's counters, when it provides them (e.g. for the `stats` tool). */
  stats?: Readonly<Record<string, number>>;
}

/** What a handler receives besides its arguments. */
export interface ToolContext extends CallContext {
  /**
   * Sends one log message to the MCP client (`notifications/message` at `level`, an MCP logging
   * level; `data` any JSON value; `logger` defaults to the tool's name). Delivered only when the
   * call runs as `stream_start` (the bridge uses it when the client set a log level); a no-op in a
   * unary `tool_call`, which cannot carry it. Data that cannot be serialised as JSON (e.g. a
   * cyclic object) is sent as a string saying why, without failing the call.
   * @throws TypeError for a `level` that is not an MCP logging level or a `logger` that is not a string
   */
  log(level: LoggingLevel, data: unknown, logger?: string): void;
  /**
   * Reports progress (`notifications/progress`: `progress` so far, optional `total` and
   * `message`). Delivered only when the call runs as `stream_start`; a no-op otherwise.
   * @throws TypeError when `progress` (or a given `total`) is not a finite number, or `message` not a string
   */
  progress(progress: number, total?: number, message?: string): void;
}

/** One `StreamChunk` a streaming tool emits (`data` as text is sent as UTF-8). */
export interface ToolChunk {
  data: Uint8Array | string;
  /** `StreamChunk.content_type` (default `text/plain; charset=utf-8`). */
  contentType?: string;
}

/** A tool served by the orchestrator. */
export interface Tool {
  /** Unique name, as used in `ToolRequest.tool_name`. */
  name: string;
  /** One-line human description (`ToolDefinition.description`). */
  description: string;
  /** JSON Schema object for the arguments (`ToolDefinition.input_schema`). */
  inputSchema: JsonObject;
  /**
   * Runs the tool. Resolves with a plain JSON object placed in `ToolResponse.result`; throwing
   * yields `success: false` (see {@link ToolError} to choose the `error_code`).
   */
  handler(args: Record<string, unknown>, ctx: ToolContext): Promise<Record<string, unknown>>;
  /**
   * Optional streaming form (`stream_start`): emits data chunks, and through `ctx.log` /
   * `ctx.progress` log and progress chunks; resolves when done (→ `StreamEnd{success:true}`),
   * optionally with a result object, sent as the result chunk before `stream_end` and mapped
   * like {@link handler}'s result (e.g. a `CallToolResult`). Throwing yields
   * `StreamEnd{success:false}` like {@link handler}. Tools without it refuse `stream_start` with
   * `error_code: "stream_unsupported"`.
   */
  stream?(args: Record<string, unknown>, ctx: ToolContext, emit: (chunk: ToolChunk) => void): Promise<Record<string, unknown> | void>;
}

/** What changed in a {@link ToolRegistry}. */
export interface ToolSetChange {
  kind: "registered" | "unregistered";
  name: string;
}

/** Throw from a handler to pick the `error_code` of the failed `ToolResponse`. */
export class ToolError extends Error {
  override readonly name = "ToolError";
  /**
   * @param code machine-readable `error_code`, e.g. `invalid_arguments`
   * @param message human-readable `error_message`
   */
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The outcome of {@link ToolRegistry.call}, shaped like `ToolResponse`. */
export type ToolOutcome = { success: true; result: JsonObject } | { success: false; errorCode: string; errorMessage: string };

/** Error codes the registry itself produces. */
export const TOOL_ERROR_CODES = {
  notFound: TOOL_NOT_FOUND_CODE,
  invalidArguments: "invalid_arguments",
  invalidResult: "invalid_result",
  failed: "tool_error",
  cancelled: "cancelled",
  /** `stream_start` for a tool that has no streaming form (the bridge then calls it unary). */
  streamUnsupported: "stream_unsupported",
} as const;

/** Thrown by {@link ToolRegistry.register} / {@link validateTool} for an invalid definition. */
export class ToolDefinitionError extends Error {
  override readonly name = "ToolDefinitionError";
}

/**
 * Checks the shape of a tool object (from code or a loaded module).
 * @param where prefix for error messages (e.g. the module path and index)
 * @throws ToolDefinitionError naming the offending field
 */
export function validateTool(value: unknown, where = "tool"): asserts value is Tool {
  if (typeof value !== "object" || value === null) throw new ToolDefinitionError(`${where}: not an object`);
  const t = value as Record<string, unknown>;
  if (typeof t.name !== "string" || t.name.trim() === "") {
    throw new ToolDefinitionError(`${where}: "name" must be a non-empty string`);
  }
  const label = `${where} (${t.name})`;
  if (typeof t.description !== "string") throw new ToolDefinitionError(`${label}: "description" must be a string`);
  if (!isPlainObject(t.inputSchema)) throw new ToolDefinitionError(`${label}: "inputSchema" must be a JSON Schema object`);
  if (t.inputSchema.type !== undefined && t.inputSchema.type !== "object") {
    throw new ToolDefinitionError(`${label}: "inputSchema.type" must be "object"`);
  }
  try {
    JSON.stringify(t.inputSchema);
  } catch (e) {
    throw new ToolDefinitionError(`${label}: "inputSchema" is not JSON-serialisable: ${(e as Error).message}`);
  }
  if (typeof t.handler !== "function") throw new ToolDefinitionError(`${label}: "handler" must be a function`);
  if (t.stream !== undefined && typeof t.stream !== "function") throw new ToolDefinitionError(`${label}: "stream" must be a function when present`);
}

/** A set of tools keyed by name. Registering or unregistering notifies {@link onChange} listeners. */
export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();
  private readonly listeners = new Set<(change: ToolSetChange) => void>();

  /** @param tools initial tools (validated) */
  constructor(tools: Iterable<Tool> = []) {
    for (const t of tools) this.register(t);
  }

  /**
   * Adds a tool.
   * @throws ToolDefinitionError if invalid or the name is taken
   */
  register(tool: Tool): this {
    validateTool(tool);
    if (this.tools.has(tool.name)) throw new ToolDefinitionError(`tool ${JSON.stringify(tool.name)} is already registered`);
    this.tools.set(tool.name, tool);
    this.emit({ kind: "registered", name: tool.name });
    return this;
  }

  /** Removes the tool called `name`; returns whether it was registered. */
  unregister(name: string): boolean {
    const removed = this.tools.delete(name);
    if (removed) this.emit({ kind: "unregistered", name });
    return removed;
  }

  /**
   * Calls `listener` after every change of the tool set.
   * @returns a function that removes the listener
   */
  onChange(listener: (change: ToolSetChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(change: ToolSetChange): void {
    for (const l of [...this.listeners]) {
      try {
        l(change);
      } catch {
        /* a listener's failure must not break registration */
      }
    }
  }

  /** The tool called `name`, if any. */
  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  /** All tools in registration order. */
  list(): Tool[] {
    return [...this.tools.values()];
  }

  /** Number of tools. */
  get size(): number {
    return this.tools.size;
  }

  /**
   * Runs a tool; never throws.
   * - unknown name → `tool_not_found`;
   * - handler throws {@link ToolError} → its code; other throws → `tool_error` (or `cancelled`
   *   when `signal` was aborted);
   * - result not a plain JSON object → `invalid_result`.
   */
  async call(name: string, args: Record<string, unknown>, callCtx: CallContext): Promise<ToolOutcome> {
    const ctx = toolContext(callCtx);
    const tool = this.tools.get(name);
    if (!tool) {
      const known = [...this.tools.keys()].join(", ") || "none";
      return {
        success: false,
        errorCode: TOOL_ERROR_CODES.notFound,
        errorMessage: `unknown tool ${JSON.stringify(name)} (available: ${known})`,
      };
    }
    let result: unknown;
    try {
      result = await tool.handler(args, ctx);
    } catch (e) {
      return thrownOutcome(name, e, ctx.signal);
    }
    return invalidResult(name, result) ?? { success: true, result: result as JsonObject };
  }

  /**
   * Runs a tool's streaming form; never throws. `emit` receives each chunk as it is produced.
   * `ctx.log` / `ctx.progress` emit {@link LOG_CONTENT_TYPE} / {@link PROGRESS_CONTENT_TYPE} chunks;
   * a result object the tool resolves with is emitted last as the {@link RESULT_CONTENT_TYPE} chunk.
   * - unknown name → `tool_not_found`; a tool without `stream` → `stream_unsupported` (nothing runs);
   * - a throw → its {@link ToolError} code, else `tool_error` (or `cancelled` when aborted);
   * - a result that is not a plain JSON object → `invalid_result`.
   * @returns the outcome for `StreamEnd` (a success carries no result: everything went out as chunks)
   */
  async callStream(name: string, args: Record<string, unknown>, callCtx: CallContext, emit: (chunk: ToolChunk) => void): Promise<{ success: true } | ToolFailure> {
    const ctx = toolContext(callCtx, emit);
    const tool = this.tools.get(name);
    if (!tool) {
      return { success: false, errorCode: TOOL_ERROR_CODES.notFound, errorMessage: `unknown tool ${JSON.stringify(name)}` };
    }
    if (!tool.stream) {
      return { success: false, errorCode: TOOL_ERROR_CODES.streamUnsupported, errorMessage: `tool ${JSON.stringify(name)} does not stream` };
    }
    try {
      const result = await tool.stream(args, ctx, emit);
      if (result !== undefined) {
        const invalid = invalidResult(name, result);
        if (invalid !== undefined) return invalid;
        emit({ contentType: RESULT_CONTENT_TYPE, data: JSON.stringify(result) });
      }
      return { success: true };
    } catch (e) {
      return thrownOutcome(name, e, ctx.signal);
    }
  }
}

/**
 * The {@link ToolContext} of one call: `ctx.log` / `ctx.progress` check their arguments (the same
 * in both forms) and, with `emit` (a `stream_start`), send {@link LOG_CONTENT_TYPE} /
 * {@link PROGRESS_CONTENT_TYPE} chunks; without it they send nothing.
 */
function toolContext(callCtx: CallContext, emit?: (chunk: ToolChunk) => void): ToolContext {
  const finite = (v: unknown) => typeof v === "number" && Number.isFinite(v);
  return {
    ...callCtx,
    log(level, data, logger) {
      if (!isLoggingLevel(level)) throw new TypeError(`ctx.log: level ${JSON.stringify(level) ?? String(level)} is not one of ${LOGGING_LEVELS.join(", ")}`);
      if (logger !== undefined && typeof logger !== "string") throw new TypeError("ctx.log: logger must be a string when given");
      if (!emit) return;
      let text: string;
      try {
        text = JSON.stringify(logger === undefined ? { level, data } : { level, logger, data });
      } catch (e) {
        const why = `[log data not serialisable as JSON: ${(e as Error).message.split("\n")[0]}]`;
        text = JSON.stringify(logger === undefined ? { level, data: why } : { level, logger, data: why });
      }
      emit({ contentType: LOG_CONTENT_TYPE, data: text });
    },
    progress(progress, total, message) {
      if (!finite(progress))
        throw new TypeError(`ctx.progress: progress must be a finite number, not ${typeof progress === "number" ? progress : (JSON.stringify(progress) ?? String(progress))}`);
      if (total !== undefined && !finite(total)) throw new TypeError("ctx.progress: total must be a finite number when given");
      if (message !== undefined && typeof message !== "string") throw new TypeError("ctx.progress: message must be a string when given");
      emit?.({ contentType: PROGRESS_CONTENT_TYPE, data: JSON.stringify({ progress, total, message }) });
    },
  };
}

/** A failed {@link ToolOutcome}. */
type ToolFailure = Extract<ToolOutcome, { success: false }>;

/**
 * The outcome of a handler's throw `e`: a {@link ToolError}'s code and message, else `cancelled`
 * when `signal` was aborted, else `tool_error` with the tool's name before the message.
 */
function thrownOutcome(name: string, e: unknown, signal: AbortSignal): ToolFailure {
  if (e instanceof ToolError) return { success: false, errorCode: e.code, errorMessage: e.message };
  const message = e instanceof Error ? e.message : String(e);
  if (signal.aborted) return { success: false, errorCode: TOOL_ERROR_CODES.cancelled, errorMessage: message };
  return { success: false, errorCode: TOOL_ERROR_CODES.failed, errorMessage: `${name}: ${message}` };
}

/** `invalid_result` when `result` cannot be a `ToolResponse.result` Struct, else undefined. */
function invalidResult(name: string, result: unknown): ToolFailure | undefined {
  const problem = resultProblem(result);
  return problem === undefined ? undefined : { success: false, errorCode: TOOL_ERROR_CODES.invalidResult, errorMessage: `${name} returned an invalid result: ${problem}` };
}

/** Why a tool's result cannot be a `ToolResponse.result` Struct, or undefined when it can. */
function resultProblem(result: unknown): string | undefined {
  return jsonProblem(result, "result") ?? (isPlainObject(result) ? undefined : "not a plain object");
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Why `root` cannot travel as a google.protobuf.Value, or undefined when it can: a non-finite
 * number, a value that is not JSON, or arrays/objects nested deeper than
 * {@link MAX_NESTING_DEPTH} (`{}` is depth 1, the protocol's limit). Checked with an explicit
 * stack (no recursion); the first problem in document order is reported.
 */
function jsonProblem(root: unknown, rootPath: string): string | undefined {
  const stack: Array<[unknown, string, number]> = [[root, rootPath, 0]];
  while (stack.length > 0) {
    const [v, path, depth] = stack.pop()!;
    switch (typeof v) {
      case "string":
      case "boolean":
        continue;
      case "number":
        if (!Number.isFinite(v)) return `${path} is not a finite number`;
        continue;
      case "object": {
        if (v === null) continue;
        if (depth + 1 > MAX_NESTING_DEPTH) return `${path} nests deeper than the limit of ${MAX_NESTING_DEPTH}`;
        if (Array.isArray(v)) {
          for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`, depth + 1]);
          continue;
        }
        if (!isPlainObject(v)) return `${path} is not a plain object`;
        const entries = Object.entries(v);
        for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i]![1], `${path}.${entries[i]![0]}`, depth + 1]);
        continue;
      }
      default:
        return `${path} has type ${typeof v}`;
    }
  }
  return undefined;
}
