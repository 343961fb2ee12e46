/**
 * The shape of a session rule (`rules/<id>.ts`): `meta` (id, severity, description, spec
 * reference) and `create(context)`, which returns the rule's handlers for one session; the
 * session checker (`checker.ts`) calls them, in the order `rules/index.ts` gives per event, over
 * the shared {@link SessionState}. `context.report` emits a finding of the rule (its id and
 * severity) about the message being checked.
 *
 * Handlers only read the session state and report; the checker keeps the state (lifecycle
 * phase, era, version, requests in flight, ids, tokens) up to date around them.
 */
import type { MessageFacts } from "../facts.js";
import type { SchemaCheck } from "../defs.js";
import type { SessionState } from "../session-state.js";
import type { CheckTarget } from "../facts.js";
import type { Direction, Severity, WireId } from "../types.js";
import type { Origin, Pairing } from "../session-state.js";

/** Metadata of one rule. */
export interface RuleInfo {
  readonly id: string;
  readonly severity: Severity;
  readonly description: string;
  readonly spec: string;
}

/** A version a session's messages name or negotiate (the `version` event), and where. */
export interface VersionEvent {
  origin: Origin;
  dir: Direction;
  aboutId: WireId | undefined;
  method: string | undefined;
  /** Where the version is in the message. */
  pointer: string;
  version: string;
  how: "named" | "negotiated";
  /** `--protocol-version`, when given (the session keeps it). */
  forced: string | undefined;
  /** Without a forced version, why the session could not switch to `version`; undefined when it did. */
  unsupported: string | undefined;
}

/** What a handler reports about: the message being checked and where. */
export interface Subject {
  facts: MessageFacts;
  origin: Origin;
  dir: Direction;
  /** The message's pointer in its batch ("/3"), "" outside a batch. */
  prefix: string;
  /** The message's id as findings carry it. */
  aboutId: WireId | undefined;
}

/** A rule's view of the session while it checks a message. */
export interface RuleContext {
  /** The rule's own metadata. */
  readonly meta: RuleInfo;
  readonly session: SessionState;
  /** Emits a finding of this rule; `id`, `method` and `pointer` are left out when undefined. */
  report(origin: Origin, dir: Direction, message: string, id?: WireId, method?: string, pointer?: string): void;
  /**
   * Runs a schema check on the subject (or its result) and reports its issues as findings of this
   * rule, leaving out those at pointers in `reported`. @returns the pointers of the issues.
   */
  check(
    check: SchemaCheck,
    target: CheckTarget,
    s: Subject,
    pointerPrefix: string,
    id: WireId | undefined,
    method: string | undefined,
    reported?: ReadonlySet<string>,
  ): ReadonlySet<string> | undefined;
}

/** The handlers of one rule for one session; each event is described at its call in `checker.ts`. */
export interface RuleHandlers {
  /** A request, notification or response, before anything else. */
  message?(s: Subject): void;
  /** A request (a message with a method and an id), once the lifecycle state is brought up to date. */
  request?(s: Subject): void;
  /** A notification (a method, no id). */
  notification?(s: Subject): void;
  /** A response (a result or an error), before its request's handshake effects. */
  response?(s: Subject): void;
  /** A success response, after the request it answers (its handshake effects applied). */
  result?(s: Subject): void;
  /** A JSON value that is no JSON-RPC message shape (not an object, bad method, both or neither). */
  invalid?(s: Subject): void;
  /** A line that is not JSON. */
  unparsable?(s: Subject, raw: string, error: string): void;
  /** A batch (an array), before its elements. */
  batch?(s: Subject, items: unknown[]): void;
  /** An element of a batch, before it is checked as a message. */
  batchItem?(s: Subject, item: unknown, index: number): void;
  /** A version named or negotiated. */
  version?(e: VersionEvent): void;
  /** A second initialize request restarts the session (before the end of the old one). */
  restart?(s: Subject): void;
  /** The end of the session (end of input, or a restart). */
  end?(): void;
}

/** An event of the session checker: a key of {@link RuleHandlers}. */
export type RuleEvent = keyof RuleHandlers;

/** The events about one method: a {@link MethodFilter} narrows which of them reach a handler. */
export type MethodEvent = "request" | "notification";

/**
 * How a request's or notification's method stands in the version checked against (the session's
 * current schema), in the direction it was sent: `defined` as this kind of message; `other-kind`
 * defined as the other kind (a notification method sent with an id, a request method without);
 * `other-direction` defined for the other direction only; `unknown` defined in neither direction.
 */
export type MethodStatus = "defined" | "other-kind" | "other-direction" | "unknown";

/**
 * Which requests (or notifications) a rule's handler can report on: the checker calls the handler
 * only for those (a dispatch table built from the rules' filters, `checker.ts`), so that a
 * message costs no call of the handlers that have nothing to say about its method. Both members
 * narrow; an absent member does not.
 */
export interface MethodFilter {
  /** Only these methods. */
  readonly methods?: readonly string[];
  /** Only methods in one of these standings. */
  readonly status?: readonly MethodStatus[];
}

/**
 * Which responses a rule's `response` handler can report on, by what the checker found before
 * the handlers run: the checker calls the handler only for those. Both members narrow; an absent
 * member does not.
 */
export interface ResponseFilter {
  /** Only success responses (`result`) or only error responses (`error`). */
  readonly kind?: readonly ("result" | "error")[];
  /** Only responses paired so (see {@link Pairing}). */
  readonly pairing?: readonly Pairing[];
}

/** The events whose handlers a rule may narrow with a filter (`SessionRule.only`), and the filter of each. */
export interface EventFilters {
  request: MethodFilter;
  notification: MethodFilter;
  response: ResponseFilter;
}

/** The filters of a rule with handlers for the events `E`. */
export type RuleFilters<E> = { readonly [K in keyof EventFilters & E]?: EventFilters[K] };

/**
 * A session rule: metadata, the factory of its handlers and, for its `request`, `notification`
 * and `response` handlers, the filter of the messages they are called for (`only`; none: every
 * one). `E`: the events its handlers cover (recorded by {@link defineRule}, so that
 * `rules/index.ts` can check `EVENT_ORDER` against them).
 */
export interface SessionRule<Id extends string = string, E extends RuleEvent = RuleEvent> {
  readonly meta: RuleInfo & { readonly id: Id };
  readonly only?: RuleFilters<E>;
  create(context: RuleContext): Pick<RuleHandlers, E>;
}

/**
 * Declares a rule: keeps its id's literal type and records the events `create` returns handlers
 * for; a handler key that is no {@link RuleEvent} is a type error, and so is a filter in `only`
 * for an event the rule has no handler for.
 */
export function defineRule<const Id extends string, H extends RuleHandlers>(rule: {
  readonly meta: RuleInfo & { readonly id: Id };
  readonly only?: RuleFilters<keyof H>;
  create(context: RuleContext): H & { [K in Exclude<keyof H, RuleEvent>]: never };
}): SessionRule<Id, keyof H & RuleEvent> {
  return rule;
}
