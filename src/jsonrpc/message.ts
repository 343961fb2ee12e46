/**
 * JSON-RPC 2.0 message kinds (JSON-RPC 2.0 spec §4, §5; MCP "Base Protocol / Messages") and
 * response constructors. The message shapes are the generated MCP types; this module only
 * tells them apart and builds error responses.
 */
import type { JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse, RequestId } from "../gen/mcp/2025-06-18/types.js";
import type { ErrorCode } from "./errors.js";
import { ExactId } from "./request-id.js";

export type { JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse, RequestId };

/** Any single message the bridge writes to stdout. */
export type OutboundMessage = JSONRPCResponse | JSONRPCError | JSONRPCNotification;

/**
 * The answer to a JSON-RPC batch (JSON-RPC 2.0 §6; MCP 2025-03-26 "Batching"): the responses to
 * the batch's requests, in completion order, as one array. Never empty (a batch of only
 * notifications gets no answer).
 */
export type OutboundBatch = Array<JSONRPCResponse | JSONRPCError>;

/** What one output line carries: a message or a batch answer. */
export type OutboundLine = OutboundMessage | OutboundBatch;

/**
 * Structural kind of a parsed value, decided by member presence only (the schema check comes
 * after): `method` + `id` → request; `method` alone → notification; `result`/`error` →
 * response; an array → batch; anything else → invalid.
 */
export type MessageKind = "request" | "notification" | "response" | "batch" | "invalid";

export function classify(value: unknown): MessageKind {
  if (Array.isArray(value)) return "batch";
  if (value === null || typeof value !== "object") return "invalid";
  const v = value as Record<string, unknown>;
  if (typeof v.method === "string" || "method" in v) return "id" in v ? "request" : "notification";
  if ("result" in v || "error" in v) return "response";
  return "invalid";
}

/**
 * An id as written in a response: an {@link ExactId} (the request's token text), or a plain
 * value for ids built in code.
 */
export type MessageId = RequestId | ExactId;

/**
 * Best-effort id recovery from the first bytes of a line too long to parse: finds a top-level
 * looking `"id": <number|string>` member. Returns `null` when none is found or it is not an MCP id.
 */
export function recoverIdFromPrefix(head: string): ExactId | null {
  const m = /"id"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*")/.exec(head);
  return m ? (ExactId.parse(m[1]!) ?? null) : null;
}

/**
 * A JSON-RPC error response (JSON-RPC 2.0 §5.1). `id` is `null` when it could not be determined.
 * `code` is one of {@link ErrorCode} or an MCP-defined code (e.g. `-32002` resource not found,
 * `-32022` unsupported protocol version).
 */
export function errorResponse(id: MessageId | null, code: ErrorCode | number, message: string, data?: Record<string, unknown>): JSONRPCError {
  const error: JSONRPCError["error"] = { code, message };
  if (data !== undefined) error.data = data;
  // The MCP schema types `id` as RequestId, but JSON-RPC requires `null` when the id is unknown
  // (parse errors, unreadable requests); that is the one place a null id is written.
  return { jsonrpc: "2.0", id: id as RequestId, error };
}

/** A JSON-RPC result response. */
export function resultResponse(id: MessageId, result: JSONRPCResponse["result"]): JSONRPCResponse {
  return { jsonrpc: "2.0", id: id as RequestId, result };
}
