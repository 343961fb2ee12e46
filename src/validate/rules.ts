/**
 * The catalogue of validator rules: stable ids, default severities, one-line descriptions and the
 * spec section each rule enforces. Reporters (SARIF rule metadata, JUnit test cases) and the docs
 * read this table; the checker refers to rules only through {@link RuleId}.
 *
 * Spec sections refer to the MCP specification 2025-06-18 ("basic" = Base Protocol overview,
 * "lifecycle" = Base Protocol / Lifecycle, "cancellation"/"progress" = Base Protocol / Utilities)
 * and to JSON-RPC 2.0 (jsonrpc.org/specification), quoting the requirement's keyword: a rule for a
 * MUST / MUST NOT is an error, one for a SHOULD / SHOULD NOT a warning, and a rule with no
 * keyword behind it (a doubt, or a limit of this tool) a warning. `input/*` rules are about the
 * input file, not the traffic.
 */
import type { Severity } from "./types.js";

/** Metadata of one rule. */
export interface RuleInfo {
  readonly id: string;
  readonly severity: Severity;
  readonly description: string;
  readonly spec: string;
}

const rule = (id: string, severity: Severity, description: string, spec: string): RuleInfo => ({
  id,
  severity,
  description,
  spec,
});

/** All rules, keyed by id. The default severity is the one every finding of the rule carries. */
export const RULES = {
  "input/unreadable": rule("input/unreadable", "error", "The input file could not be opened or read.", "-"),
  "input/malformed-record": rule(
    "input/malformed-record",
    "error",
    "A capture line or HAR structure is not in the documented shape.",
    "orchestra-stdio capture format",
  ),
  "input/line-too-long": rule("input/line-too-long", "error", "A line exceeds the maximum line length and was skipped.", "-"),
  "input/dropped-message": rule(
    "input/dropped-message",
    "warning",
    "The recorder dropped a message here (a `serve --capture` dropped record: the bridge refused a line over its length limit); later findings that it could explain are not reported.",
    "orchestra-stdio capture format",
  ),
  "input/invalid-utf8": rule(
    "input/invalid-utf8",
    "error",
    "A line (message) is not valid UTF-8; it is checked with the invalid bytes replaced by U+FFFD.",
    "MCP basic: JSON-RPC messages MUST be UTF-8 encoded",
  ),
  "input/no-messages": rule(
    "input/no-messages",
    "error",
    "The input yields no message in its input format (empty, only blank lines, or nothing in the forced or detected format); exit code 2.",
    "-",
  ),
  "input/unsupported-format": rule(
    "input/unsupported-format",
    "error",
    "The input is in a format that carries no message bodies (the newer Claude Desktop log, which logs only method names and ids): nothing can be checked; the file's one finding (when it holds no message with a body), exit code 2.",
    "-",
  ),
  "input/cut-short": rule(
    "input/cut-short",
    "warning",
    "With --partial: the first or last line of the excerpt does not parse; taken as cut short where the excerpt begins or ends, and not checked.",
    "-",
  ),
  "input/direction-guessed": rule(
    "input/direction-guessed",
    "warning",
    "Plain JSONL without --direction whose first message is a response, or a request or notification only a server sends: the file is read as server→client.",
    "-",
  ),
  "json/parse-error": rule(
    "json/parse-error",
    "error",
    "A message is not valid JSON.",
    "MCP basic: messages MUST be JSON-RPC 2.0, UTF-8 encoded; JSON-RPC 2.0 §5.1 (-32700)",
  ),
  "jsonrpc/invalid": rule(
    "jsonrpc/invalid",
    "error",
    "A JSON value that is not a JSON-RPC 2.0 request, notification or response.",
    "MCP basic: all messages MUST follow the JSON-RPC 2.0 specification; JSON-RPC 2.0 §4, §5",
  ),
  "jsonrpc/null-id-error": rule(
    "jsonrpc/null-id-error",
    "warning",
    "An otherwise well-formed error response with id null (JSON-RPC's answer to an unparseable request), which the MCP schema's error response does not allow.",
    "MCP basic: the ID MUST NOT be null; JSON-RPC 2.0 §5 (id null MUST be used when the id could not be read): a warning, as the bridge's answer to such input is right by JSON-RPC",
  ),
  "jsonrpc/kind-mismatch": rule(
    "jsonrpc/kind-mismatch",
    "error",
    "A notification method sent with an id (which makes it a request), or a request method sent without one (which makes it a notification).",
    "MCP basic: requests MUST include an ID, notifications MUST NOT; JSON-RPC 2.0 §4",
  ),
  "schema/envelope": rule(
    "schema/envelope",
    "error",
    "The JSON-RPC envelope fails JSONRPCRequest / JSONRPCNotification / JSONRPCResponse / JSONRPCError.",
    "MCP basic: requests MUST include a string or integer ID; either a result or an error MUST be set (schema: JSONRPCRequest, JSONRPCNotification, JSONRPCResponse)",
  ),
  "schema/request": rule(
    "schema/request",
    "error",
    "A request fails the schema definition of its method.",
    "MCP schema: the method's request definition",
  ),
  "schema/notification": rule(
    "schema/notification",
    "error",
    "A notification fails the schema definition of its method.",
    "MCP schema: the method's notification definition",
  ),
  "schema/result": rule(
    "schema/result",
    "error",
    "A result fails the result definition of the request it answers.",
    "MCP schema: the result definition of the request answered (a union where the response definition declares one)",
  ),
  "schema/error-response": rule(
    "schema/error-response",
    "error",
    "An error response fails JSONRPCError (a null id alone is jsonrpc/null-id-error).",
    "MCP basic: error codes MUST be integers; JSONRPCError",
  ),
  "schema/unknown-method": rule(
    "schema/unknown-method",
    "warning",
    "The method is not defined by the protocol version's schema (custom or newer method).",
    "MCP schema (custom methods are allowed: a warning)",
  ),
  "session/wrong-direction": rule(
    "session/wrong-direction",
    "error",
    "A method defined only for the other direction (e.g. a client sending sampling/createMessage).",
    "MCP schema: ClientRequest / ServerRequest, ClientNotification / ServerNotification",
  ),
  "session/initialize-first": rule(
    "session/initialize-first",
    "error",
    "A message before the client's initialize request (initialize-based versions; not in a stateless 2026-07-28 session).",
    "MCP lifecycle: the initialization phase MUST be the first interaction between client and server",
  ),
  "session/premature-request": rule(
    "session/premature-request",
    "warning",
    "Client request other than ping before the initialize result, or server request other than ping before notifications/initialized.",
    "MCP lifecycle: the client SHOULD NOT send requests other than pings before the server has responded to initialize; the server SHOULD NOT send requests other than pings and logging before the initialized notification",
  ),
  "session/initialized-after-result": rule(
    "session/initialized-after-result",
    "error",
    "notifications/initialized sent before the initialize result, or missing before the client's first operation.",
    "MCP lifecycle: after successful initialization, the client MUST send an initialized notification",
  ),
  "session/reinitialize": rule(
    "session/reinitialize",
    "warning",
    "A second initialize request in one session (checking restarts with a fresh session).",
    "MCP lifecycle (one initialization per session: a warning)",
  ),
  "session/batch-not-allowed": rule(
    "session/batch-not-allowed",
    "error",
    "A JSON-RPC batch in a protocol version after 2025-03-26 (2024-11-05 follows JSON-RPC 2.0, batches included), or initialize inside a batch.",
    "MCP basic 2025-03-26: the initialize request MUST NOT be part of a JSON-RPC batch; later versions define no batch; 2024-11-05 basic: all messages MUST follow the JSON-RPC 2.0 specification (which defines batches, §6)",
  ),
  "session/duplicate-request-id": rule(
    "session/duplicate-request-id",
    "error",
    "A request id reused by the same sender while the earlier request is still in flight.",
    "MCP basic: the request ID MUST NOT have been previously used by the requestor within the same session",
  ),
  "session/reused-request-id": rule(
    "session/reused-request-id",
    "error",
    "A request id the same sender already used earlier in the session.",
    "MCP basic: the id MUST NOT have been previously used by the requestor within the same session",
  ),
  "session/unmatched-response": rule(
    "session/unmatched-response",
    "error",
    "A response whose id matches no in-flight request of the other side.",
    "MCP basic: responses MUST include the same ID as the request they correspond to; JSON-RPC 2.0 §5",
  ),
  "session/response-to-notification": rule(
    "session/response-to-notification",
    "error",
    "A response to a notification: a success response with a null/missing id, or an error response with a null id when the peer sent no unparseable/invalid message or forbidden batch. (A notification method sent with an id is a request: its kind-mismatch is the one finding, and an answer to it is fine.)",
    "JSON-RPC 2.0 §4.1: notifications MUST NOT be answered",
  ),
  "session/unanswered-request": rule(
    "session/unanswered-request",
    "error",
    "A request that was neither answered nor cancelled by the end of the session.",
    "JSON-RPC 2.0 §5: when a rpc call is made, the Server MUST reply with a Response (use --partial for an excerpt that ends mid-request)",
  ),
  "session/missing-capability": rule(
    "session/missing-capability",
    "warning",
    "A request that needs a capability the peer did not advertise in the initialize exchange (or the server/discover result).",
    "MCP lifecycle: both parties SHOULD only use capabilities that were successfully negotiated",
  ),
  "session/unadvertised-notification": rule(
    "session/unadvertised-notification",
    "warning",
    "A notification whose capability (listChanged, subscribe, logging) the sender did not advertise.",
    "MCP lifecycle: both parties SHOULD only use capabilities that were successfully negotiated",
  ),
  "session/answered-after-cancel": rule(
    "session/answered-after-cancel",
    "warning",
    "A response to a request its sender had cancelled.",
    "MCP cancellation: receivers of a cancellation SHOULD NOT send a response for the cancelled request",
  ),
  "session/cancel-initialize": rule(
    "session/cancel-initialize",
    "error",
    "notifications/cancelled for the initialize request.",
    "MCP cancellation: the initialize request MUST NOT be cancelled by clients",
  ),
  "session/unknown-progress-token": rule(
    "session/unknown-progress-token",
    "error",
    "A progress notification whose token belongs to no in-flight request of the other side.",
    "MCP progress: progress notifications MUST only reference tokens that were provided in an active request",
  ),
  "session/progress-not-increasing": rule(
    "session/progress-not-increasing",
    "error",
    "A progress value not greater than the previous one for the same token.",
    "MCP progress: the progress value MUST increase with each notification",
  ),
  "session/version-mismatch": rule(
    "session/version-mismatch",
    "warning",
    "The negotiated protocol version differs from --protocol-version (the forced version is used).",
    "MCP lifecycle: Version Negotiation (a check of --protocol-version: a warning)",
  ),
  "session/unsupported-version": rule(
    "session/unsupported-version",
    "warning",
    "The negotiated protocol version has no validators here; another version is used.",
    "MCP lifecycle: Version Negotiation (a limit of this tool: a warning)",
  ),
} as const satisfies Record<string, RuleInfo>;

/** A rule id known to the validator. */
export type RuleId = keyof typeof RULES;

/** Rules in catalogue order (stable: SARIF `ruleIndex` refers to this order). */
export const RULE_LIST: readonly RuleInfo[] = Object.values(RULES);
