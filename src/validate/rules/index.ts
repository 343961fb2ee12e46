/**
 * The session rules (one module each, `rules/<id>.ts`) in catalogue order, and the order in which
 * the session checker calls their handlers for each event: the order of a message's findings.
 *
 * Adding a rule: write `rules/<id>.ts` (`meta`, the handlers it needs and, when its `request`,
 * `notification` or `response` handler concerns only some messages, their `only` filter), add it to
 * {@link SESSION_RULES} and to the events it handles in {@link EVENT_ORDER} (tsc checks the events
 * against its handlers), add its valid/invalid table to test/unit/validate-rule-tables.test.ts and
 * its row to docs/validate.md's rules table (both checked by the tests).
 */
import jsonParseError from "./json/parse-error.js";
import jsonrpcInvalid from "./jsonrpc/invalid.js";
import jsonrpcNullIdError from "./jsonrpc/null-id-error.js";
import jsonrpcKindMismatch from "./jsonrpc/kind-mismatch.js";
import schemaEnvelope from "./schema/envelope.js";
import schemaRequest from "./schema/request.js";
import schemaNotification from "./schema/notification.js";
import schemaResult from "./schema/result.js";
import schemaErrorResponse from "./schema/error-response.js";
import schemaUnknownMethod from "./schema/unknown-method.js";
import sessionWrongDirection from "./session/wrong-direction.js";
import sessionInitializeFirst from "./session/initialize-first.js";
import sessionPrematureRequest from "./session/premature-request.js";
import sessionInitializedAfterResult from "./session/initialized-after-result.js";
import sessionReinitialize from "./session/reinitialize.js";
import sessionBatchNotAllowed from "./session/batch-not-allowed.js";
import sessionDuplicateRequestId from "./session/duplicate-request-id.js";
import sessionReusedRequestId from "./session/reused-request-id.js";
import sessionUnmatchedResponse from "./session/unmatched-response.js";
import sessionResponseToNotification from "./session/response-to-notification.js";
import sessionUnansweredRequest from "./session/unanswered-request.js";
import sessionMissingCapability from "./session/missing-capability.js";
import sessionUnadvertisedNotification from "./session/unadvertised-notification.js";
import sessionAnsweredAfterCancel from "./session/answered-after-cancel.js";
import sessionCancelInitialize from "./session/cancel-initialize.js";
import sessionUnknownProgressToken from "./session/unknown-progress-token.js";
import sessionProgressNotIncreasing from "./session/progress-not-increasing.js";
import sessionVersionMismatch from "./session/version-mismatch.js";
import sessionUnsupportedVersion from "./session/unsupported-version.js";
import type { RuleEvent, SessionRule } from "./rule.js";

/** Every session rule, in catalogue order (after the `input/*` rules; see `rules.ts`). */
export const SESSION_RULES = [
  jsonParseError,
  jsonrpcInvalid,
  jsonrpcNullIdError,
  jsonrpcKindMismatch,
  schemaEnvelope,
  schemaRequest,
  schemaNotification,
  schemaResult,
  schemaErrorResponse,
  schemaUnknownMethod,
  sessionWrongDirection,
  sessionInitializeFirst,
  sessionPrematureRequest,
  sessionInitializedAfterResult,
  sessionReinitialize,
  sessionBatchNotAllowed,
  sessionDuplicateRequestId,
  sessionReusedRequestId,
  sessionUnmatchedResponse,
  sessionResponseToNotification,
  sessionUnansweredRequest,
  sessionMissingCapability,
  sessionUnadvertisedNotification,
  sessionAnsweredAfterCancel,
  sessionCancelInitialize,
  sessionUnknownProgressToken,
  sessionProgressNotIncreasing,
  sessionVersionMismatch,
  sessionUnsupportedVersion,
] as const;

/** A session rule id. */
export type SessionRuleId = (typeof SESSION_RULES)[number]["meta"]["id"];

/** The ids of the rules of {@link SESSION_RULES} whose `create` returns a handler for event `E`. */
type HandlersOf<E extends RuleEvent> = (typeof SESSION_RULES)[number] extends infer R
  ? R extends SessionRule<infer Id, infer Events>
    ? E extends Events
      ? Id
      : never
    : never
  : never;

/**
 * Per event, the rules whose handlers the checker calls, in this order. tsc checks it against the
 * rules' handlers: a rule listed for an event it has no handler for fails the `satisfies` below
 * (naming the event and the rule), and a rule with a handler for an event not listing it fails
 * {@link everyHandlerListed}.
 */
export const EVENT_ORDER = {
  unparsable: ["json/parse-error"],
  message: ["jsonrpc/invalid"],
  invalid: ["jsonrpc/invalid"],
  batch: ["jsonrpc/invalid", "session/batch-not-allowed"],
  batchItem: ["session/batch-not-allowed"],
  request: [
    "session/initialize-first",
    "session/premature-request",
    "session/initialized-after-result",
    "schema/envelope",
    "session/wrong-direction",
    "schema/unknown-method",
    "jsonrpc/kind-mismatch",
    "schema/request",
    "session/missing-capability",
    "session/duplicate-request-id",
    "session/reused-request-id",
  ],
  notification: [
    "session/initialize-first",
    "schema/envelope",
    "session/wrong-direction",
    "schema/unknown-method",
    "jsonrpc/kind-mismatch",
    "schema/notification",
    "session/initialized-after-result",
    "session/cancel-initialize",
    "session/unknown-progress-token",
    "session/progress-not-increasing",
    "session/unadvertised-notification",
  ],
  response: [
    "schema/envelope",
    "schema/error-response",
    "jsonrpc/null-id-error",
    "session/response-to-notification",
    "session/unmatched-response",
    "session/answered-after-cancel",
  ],
  result: ["schema/result"],
  version: ["session/version-mismatch", "session/unsupported-version"],
  restart: ["session/reinitialize"],
  end: ["session/unanswered-request"],
} as const satisfies { readonly [E in RuleEvent]-?: readonly HandlersOf<E>[] };

/** Per event, the rules with a handler for it that {@link EVENT_ORDER} leaves out (never, for each). */
type UnlistedHandlers = { [E in RuleEvent]-?: Exclude<HandlersOf<E>, (typeof EVENT_ORDER)[E][number]> };
/** A tsc check: an error here names the event and the rule whose handler EVENT_ORDER does not list. */
export const everyHandlerListed: { [E in RuleEvent]-?: never } = {} as UnlistedHandlers;
