/**
 * Every JSON-RPC and MCP error code the project answers with, and {@link JsonRpcError}, the one
 * error class that carries its code to the response. Nothing else declares a code: translators and
 * method handlers throw a `JsonRpcError` (or a subclass naming the failure); the bridge's session
 * turns it into `{code, message, data}` as is.
 *
 * - JSON-RPC 2.0 §5.1: -32700 parse error, -32600 invalid request, -32601 method not found,
 *   -32602 invalid params, -32603 internal error.
 * - MCP: -32002 resource not found (Server › Resources › "Error Handling", every revision);
 *   -32020 … -32022 (2026-07-28 Basic › Overview › "Error Codes").
 */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Error codes the MCP specification defines (outside the JSON-RPC 2.0 set). */
export const McpErrorCode = {
  /** The resource does not exist (Server › Resources › "Error Handling"). */
  ResourceNotFound: -32002,
  /** HTTP headers disagree with the body (Streamable HTTP only; never arises on stdio). */
  HeaderMismatch: -32020,
  /** The request needs a client capability it did not declare. */
  MissingRequiredClientCapability: -32021,
  /** The request names a protocol version the server does not implement. */
  UnsupportedProtocolVersion: -32022,
} as const;
export type McpErrorCode = (typeof McpErrorCode)[keyof typeof McpErrorCode];

/** The `error` member of a JSON-RPC error response (JSON-RPC 2.0 §5.1). */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

/**
 * A failure that answers a JSON-RPC request with `{code, message, data}`: `message` is the
 * response's `error.message` as written, `data` its `error.data` (omitted when undefined).
 * Subclasses name a failure (e.g. `InvalidCursorError`) and fix its code.
 */
export class JsonRpcError extends Error {
  constructor(
    readonly code: ErrorCode | McpErrorCode | number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }
}
