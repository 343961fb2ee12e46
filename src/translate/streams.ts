/**
 * Streaming tool calls (`stream_start` → N × `stream_chunk` → `stream_end`, orchestra-protocol.md
 * "Framing and RPC shape") ⇄ MCP progress (MCP "Utilities / Progress": `notifications/progress`
 * with the request's `progressToken`) and the final `CallToolResult`. Pure functions.
 *
 * Conventions (docs/mcp-orchestra-mapping.md, "Progress"):
 * - a chunk whose `content_type` is {@link PROGRESS_CONTENT_TYPE} carries only progress:
 *   JSON `{"progress": number, "total"?: number, "message"?: string}`;
 * - a chunk whose `content_type` is {@link LOG_CONTENT_TYPE} carries one log message of the tool:
 *   JSON `{"level": MCP LoggingLevel, "logger"?: string, "data": any}` (→ `notifications/message`,
 *   filtered by the client's log level; docs/mcp-orchestra-mapping.md, "Tool log messages");
 * - a chunk whose `content_type` is {@link RESULT_CONTENT_TYPE} carries the tool's result object,
 *   exactly what a unary `ToolResponse.result` would hold (JSON; the last such chunk wins);
 * - every other chunk is result data, reported as progress `n` (the number of progress and data
 *   chunks so far): a textual one (no `content_type`, or a textual type: `isTextMimeType`) has
 *   its bytes (UTF-8) appended to the result text, and its text (first
 *   {@link MAX_PROGRESS_MESSAGE} characters) is the progress message; a binary one (any other
 *   type, e.g. `application/octet-stream`) is kept as bytes, one content block of its own;
 * - `stream_end{success:true}` → the result chunk's object mapped like a unary result
 *   (`toolResultToCallToolResult`), or without one, the data in order: each run of textual chunks
 *   one text block (their concatenation; one empty text block when there is no data), each binary
 *   chunk an `image` / `audio` block (types `image/*`, `audio/*`) or an embedded resource
 *   `{uri: "orchestra://content/<index>", mimeType, blob}` (base64), shaped for the revision;
 *   `stream_end{success:false}` → an `isError` result with `error_message` (or
 *   `tool error: <error_code>`), like a failed `ToolResponse`.
 */
import type { StreamChunk, StreamEnd } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import type { CallToolResult, LoggingLevel, ProgressNotification, ProgressToken } from "../gen/mcp/2025-06-18/types.js";
import type { JSONRPCNotification } from "../jsonrpc/message.js";
import { isLoggingLevel } from "../bridge/client-log.js";
import type { ExactId } from "../jsonrpc/request-id.js";
import type { VersionFeatures } from "./features.js";
import { isTextMimeType } from "./resources.js";
import { CONTENT_URI_PREFIX, toolErrorResult, toolResultToCallToolResult } from "./tools.js";

/** `StreamChunk.content_type` of a progress-only chunk (this project's convention). */
export const PROGRESS_CONTENT_TYPE = "application/vnd.orchestra.progress+json";

/** `StreamChunk.content_type` of a chunk carrying one tool log message (this project's convention). */
export const LOG_CONTENT_TYPE = "application/vnd.orchestra.log+json";

/** `StreamChunk.content_type` of the chunk carrying the tool's result object (this project's convention). */
export const RESULT_CONTENT_TYPE = "application/vnd.orchestra.tool-result+json";

/** Longest progress message taken from a data chunk, in UTF-16 code units. */
export const MAX_PROGRESS_MESSAGE = 200;

/** `error_code` with which an orchestrator refuses to stream a tool that only answers unary calls. */
export const STREAM_UNSUPPORTED_CODE = "stream_unsupported";

const utf8 = new TextDecoder("utf-8", { fatal: false });

/** Progress as reported in `notifications/progress` params (without the token). */
export interface ProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

/** One log message a tool sent in a {@link LOG_CONTENT_TYPE} chunk (`notifications/message` params). */
export interface ToolLogMessage {
  level: LoggingLevel;
  logger?: string;
  data: unknown;
}

/** What one chunk means: a progress update, a log message, or (the result chunk) nothing to send. */
export type StreamEvent = { kind: "progress"; update: ProgressUpdate } | { kind: "log"; message: ToolLogMessage } | { kind: "result" };

/**
 * Accumulates the chunks of one stream: turns each into a progress update or a log message and
 * keeps the result data. `progress` never decreases (a chunk reporting less than before is clamped).
 */
export class StreamAccumulator {
  /** The result data in order: text, or a binary chunk's bytes and type. */
  private readonly parts: Array<string | { mimeType: string; data: Uint8Array }> = [];
  private count = 0;
  private steps = 0;
  private last = 0;
  /** The result chunk's bytes, when one arrived. */
  private resultData: Uint8Array | undefined;

  /** Number of chunks seen. */
  get chunks(): number {
    return this.count;
  }

  /** Takes one chunk and says what it means. */
  add(chunk: StreamChunk): StreamEvent {
    this.count++;
    if (chunk.contentType === LOG_CONTENT_TYPE) return { kind: "log", message: parseLogChunk(chunk.data) };
    if (chunk.contentType === RESULT_CONTENT_TYPE) {
      this.resultData = chunk.data;
      return { kind: "result" };
    }
    this.steps++;
    let update: ProgressUpdate;
    if (chunk.contentType === PROGRESS_CONTENT_TYPE) {
      update = parseProgressChunk(chunk.data) ?? { progress: this.steps };
    } else if (chunk.contentType !== "" && !isTextMimeType(chunk.contentType)) {
      this.parts.push({ mimeType: chunk.contentType, data: chunk.data });
      update = { progress: this.steps };
    } else {
      const text = utf8.decode(chunk.data);
      this.parts.push(text);
      update = { progress: this.steps };
      if (text !== "") update.message = text.length > MAX_PROGRESS_MESSAGE ? text.slice(0, MAX_PROGRESS_MESSAGE) : text;
    }
    if (update.progress < this.last) update.progress = this.last;
    this.last = update.progress;
    return { kind: "progress", update };
  }

  /**
   * The MCP result for the stream's end frame, shaped for `features`' revision (absent: the
   * newest). A result chunk that is not a JSON object gives an `isError` result saying so.
   */
  result(end: StreamEnd, features?: VersionFeatures): CallToolResult {
    if (!end.success) return toolErrorResult(end.errorMessage, end.errorCode);
    if (this.resultData !== undefined) {
      const value = parseJson(this.resultData);
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        return toolErrorResult(`the tool's ${RESULT_CONTENT_TYPE} chunk is not a JSON object`, "invalid_result");
      }
      return toolResultToCallToolResult(value as Record<string, unknown>, features);
    }
    if (this.parts.every((p) => typeof p === "string")) return { content: [{ type: "text", text: this.parts.join("") }] };
    const content: Array<Record<string, unknown>> = [];
    let text: string[] = [];
    for (const part of this.parts) {
      if (typeof part === "string") {
        text.push(part);
        continue;
      }
      if (text.length > 0) content.push({ type: "text", text: text.join("") });
      text = [];
      const data = Buffer.from(part.data.buffer, part.data.byteOffset, part.data.byteLength).toString("base64");
      const kind = part.mimeType.split("/")[0]!.toLowerCase();
      if (kind === "image" || kind === "audio") content.push({ type: kind, data, mimeType: part.mimeType });
      else content.push({ type: "resource", resource: { uri: `${CONTENT_URI_PREFIX}${content.length}`, mimeType: part.mimeType, blob: data } });
    }
    if (text.length > 0) content.push({ type: "text", text: text.join("") });
    return toolResultToCallToolResult({ content }, features);
  }
}

function parseJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(utf8.decode(data));
  } catch {
    return undefined;
  }
}

/** A log chunk's message; a chunk that is not `{level, data}` JSON is logged as `info` with its text as data. */
function parseLogChunk(data: Uint8Array): ToolLogMessage {
  const value = parseJson(data);
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { level: "info", data: utf8.decode(data) };
  const v = value as Record<string, unknown>;
  const message: ToolLogMessage = {
    level: isLoggingLevel(v.level) ? v.level : "info",
    data: Object.hasOwn(v, "data") ? v.data : null,
  };
  if (typeof v.logger === "string") message.logger = v.logger;
  return message;
}

function parseProgressChunk(data: Uint8Array): ProgressUpdate | undefined {
  const value = parseJson(data);
  if (value === null || typeof value !== "object") return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.progress !== "number" || !Number.isFinite(v.progress)) return undefined;
  const update: ProgressUpdate = { progress: v.progress };
  if (typeof v.total === "number" && Number.isFinite(v.total)) update.total = v.total;
  if (typeof v.message === "string") update.message = v.message;
  return update;
}

/**
 * A `notifications/progress` message for `token` (an {@link ExactId} is written as the token
 * text the client sent).
 */
export function progressNotification(token: ProgressToken | ExactId, update: ProgressUpdate): JSONRPCNotification {
  const params: ProgressNotification["params"] = { progressToken: token as ProgressToken, ...update };
  return { jsonrpc: "2.0", method: "notifications/progress", params };
}

/**
 * Whether a `stream_end` that arrives before any chunk means "this tool does not stream"
 * (the bridge then repeats the call as a unary `tool_call`).
 */
export function isStreamRefusal(end: StreamEnd, chunksSeen: number): boolean {
  return !end.success && chunksSeen === 0 && end.errorCode === STREAM_UNSUPPORTED_CODE;
}
