/**
 * `error_code` strings of Orchestra answers that the transport reads without the translators
 * (src/transport/sender.ts, loaded before `initialize` is answered; ./tools.ts re-exports them).
 */

/**
 * `ToolResponse.error_code` with which an orchestrator refuses a request kind it does not
 * implement, in a `PluginResponse{tool_call}` (the protocol has no error response; the upstream
 * Go orchestrator: `error_message` "unrecognized request type").
 */
export const UNKNOWN_REQUEST_CODE = "unknown_request";
