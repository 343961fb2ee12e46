/**
 * Streaming tool calls (`stream_start` → N × `stream_chunk` → `stream_end`, orchestra-protocol.md
 * "Framing and RPC shape") ⇄ MCP progress (MCP "Utilities / Progress": `notifications/progress`
 * with the request's `progressToken`) and the final `CallToolResult`. Pure functions.
 *
 * Conventions (docs/mcp-orchestra-mapping.md, "Progress"):
 * - a chunk whose `content_type` is {@link PROGRESS_CONTENT_TYPE} carries only progress:
 *   JSON `{"progress": number, "total"?: number, "message"?: string}`;
 * - every other chunk is result data: its bytes (UTF-8) are appended to the result text, and it
 *   is reported as progress `n` (the number of chunks so far) with the chunk's text as message
 *   (first {@link MAX_PROGRESS_MESSAGE} characters);
 * - `stream_end{success:true}` → one text block with the concatenated data;
 *   `stream_end{success:false}` → an `isError` result with `error_message` (or
 *   `tool error: <error_code>`), like a failed `ToolResponse`.
 */
import type { StreamChunk, StreamEnd } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import type { CallToolResult, ProgressNotification, ProgressToken } from "../gen/mcp/2025-06-18/types.js";
import type { JSONRPCNotification } from "../jsonrpc/message.js";
import type { ExactId } from "../jsonrpc/request-id.js";

/** `StreamChunk.content_type` of a progress-only chunk (this project's convention). */
export const PROGRESS_CONTENT_TYPE = "application/vnd.orchestra.progress+json";

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

/**
 * Accumulates the chunks of one stream: turns each into a progress update and keeps the result
 * data. `progress` never decreases (a chunk reporting less than before is clamped).
 */
export class StreamAccumulator {
  private readonly parts: string[] = [];
  private count = 0;
  private last = 0;

  /** Number of chunks seen. */
  get chunks(): number {
    return this.count;
  }

  /**
   * Takes one chunk.
   * @returns the progress it reports (always one update per chunk)
   */
  add(chunk: StreamChunk): ProgressUpdate {
    this.count++;
    let update: ProgressUpdate;
    if (chunk.contentType === PROGRESS_CONTENT_TYPE) {
      update = parseProgressChunk(chunk.data) ?? { progress: this.count };
    } else {
      const text = utf8.decode(chunk.data);
      this.parts.push(text);
      update = { progress: this.count };
      if (text !== "") update.message = text.length > MAX_PROGRESS_MESSAGE ? text.slice(0, MAX_PROGRESS_MESSAGE) : text;
    }
    if (update.progress < this.last) update.progress = this.last;
    this.last = update.progress;
    return update;
  }

  /** The MCP result for the stream's end frame. */
  result(end: StreamEnd): CallToolResult {
    if (!end.success) {
      const text = end.errorMessage || `tool error: ${end.errorCode || "unknown"}`;
      return { content: [{ type: "text", text }], isError: true };
    }
    return { content: [{ type: "text", text: this.parts.join("") }] };
  }
}

function parseProgressChunk(data: Uint8Array): ProgressUpdate | undefined {
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(data));
  } catch {
    return undefined;
  }
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
