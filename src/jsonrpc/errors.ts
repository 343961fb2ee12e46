/**
 * JSON-RPC 2.0 error codes (JSON-RPC 2.0 spec §5.1) used by the bridge. The one place that
 * maps failures to codes.
 */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];
