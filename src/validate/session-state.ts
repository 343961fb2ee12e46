/**
 * The state of one MCP session that the session checker (`checker.ts`) keeps and the rules
 * (`rules/<id>.ts`) read: the lifecycle phase and era, the version checked against and its
 * schema definitions, the capabilities of both sides, requests in flight, ids used, progress
 * tokens, and what a null-id error may answer; plus the helpers every rule shares (schema checks,
 * capability lookup, the finding builder).
 *
 * Version choice, eras and directions are described in `checker.ts`.
 */
import { hasCapability, requiredCapability, type CapabilityRequirement } from "./capabilities.js";
import { defsFor, type Defs, type MethodInfo, type SchemaCheck } from "./defs.js";
import { isObject, newFacts, type CheckTarget, type MessageFacts } from "./facts.js";
import { IdRegistry, InflightTable, TokenTable, type InflightEntry } from "./ids.js";
import type { RuleInfo } from "./rules/rule.js";
import { ValidateUsageError, type Direction, type Finding, type ProtocolValidators, type TimelineMessage, type ValidatorResolver, type WireId } from "./types.js";
import type { SchemaIssue } from "../mcp/validation.js";
import { LEGACY_PROTOCOL_VERSIONS, PROTOCOL_VERSION_META_KEY } from "../mcp/versions.js";

/** Where a message came from in the input file. */
export interface Origin {
  line: number;
  /** HAR only: which part of the entry ("request", "response", "response event 3"). */
  location?: string;
  /** The time the input gives the message (capture `ts`, Claude log timestamp, HAR time), when asked for. */
  ts?: string;
}

/** Construction parameters of a session checker. */
export interface CheckerContext {
  file: string;
  /** Session label (Claude log server name); restarts append `#2`, `#3`... */
  session?: string;
  /** False for plain JSONL of one direction. */
  bidirectional: boolean;
  /** True when a second initialize normally means a restarted server (Claude logs, HAR). */
  restartsExpected: boolean;
  /** `--protocol-version`: used whatever is negotiated. */
  forcedVersion?: string;
  /** Version used until the initialize exchange says otherwise. Must resolve. */
  defaultVersion: string;
  /** With `--schema`: how messages name the schema ("the schema FILE") instead of by protocol version. */
  schemaName?: string;
  resolve: ValidatorResolver;
  /** Schema issues reported per message before the rest are summarised. */
  maxIssues: number;
  /**
   * `--partial`: the input is an excerpt that may begin and end mid-session, so what lies outside
   * it is not held against it: no initialize-first, no unmatched-response or unknown progress token
   * for an id whose request is not in the input, no unanswered-request at the end.
   */
  partial?: boolean;
  emit: (finding: Finding) => void;
  /** Called for every message checked (batch elements one by one), e.g. for the HTML timeline. */
  onMessage?: (message: TimelineMessage) => void;
}

export type Id = string | number;
export type Json = Record<string, unknown>;

/** A request in flight (also the progress state of its token). */
export interface Pending extends InflightEntry {
  readonly id: Id;
  line: number;
  location: string | undefined;
  method: string;
  cancelled: boolean;
  /** A notification method sent with an id: any response to it answers a notification. */
  notificationMethod: boolean;
  progressToken: Id | undefined;
  /** The last progress value reported for `progressToken`, once there is one. */
  last: number | undefined;
  /** With `ctx.onMessage`: where the request sits in the timeline (what a response `answers`). */
  at: TimelineMessage["answers"];
  /** The revision the request was checked against when not the session's (its response is too). */
  version?: string;
}

export type Phase = "pre" | "sent" | "answered" | "failed";
/** Which lifecycle the session follows; "unknown" until its first client request says. */
export type Era = "unknown" | "legacy" | "stateless";

/**
 * How a response was paired (set by the checker before the response rules run): `budget` a null-id
 * error answering an invalid message; `null-result` a result without a usable id; `null-error` a
 * null-id error answering nothing; `quiet` nothing to say (an echoed invalid id, a dropped line or
 * an excerpt may explain it, or the input is one direction); `answered` / `unseen` an id whose
 * request was already answered / never seen; `paired` answers `pending`.
 */
export type Pairing = "budget" | "null-result" | "null-error" | "quiet" | "answered" | "unseen" | "paired";

/** What the checker worked out about the message being checked, for the rules. */
export interface MessageScratch {
  /** The method's definition in the version checked against, when it has one. */
  info: MethodInfo | undefined;
  /** The method is defined for the other direction only. */
  otherDirection: boolean;
  /** Pointers of the envelope check's issues (one finding per defect). */
  envelope: ReadonlySet<string> | undefined;
  /** A request that goes through the initialize-based lifecycle rules. */
  lifecycle: boolean;
  /** A request whose method is a notification's (JSON-RPC makes it a request). */
  notificationMethod: boolean;
  /** Requests: the request in flight with the same id from the same side. */
  earlier: Pending | undefined;
  /** Requests and unmatched responses: the line at which the id was first used. */
  firstLine: number | undefined;
  /** Responses: how the response was paired, and the request it answers. */
  pairing: Pairing;
  pending: Pending | undefined;
  /** Progress notifications (both directions seen, `params` an object): the token, and the request that announced it. */
  progressToken: Id | undefined;
  progressOf: Pending | undefined;
  /** Cancellation notifications: the request in flight they cancel. */
  cancelled: Pending | undefined;
  /** The client's notifications/initialized (also sent with an id). */
  initialized: boolean;
  /** A batch that the session's version forbids (reported, and a null-id error may reject it). */
  batchRejected: boolean;
  /** An error response with id null: its envelope issues, or "null-only" when the null id is its only one. */
  nullId: SchemaIssue[] | "null-only" | undefined;
}

/** The scratch of no message yet (a fresh object per message: cheaper than clearing one). */
const emptyScratch = (): MessageScratch => ({
  info: undefined,
  otherDirection: false,
  envelope: undefined,
  lifecycle: false,
  notificationMethod: false,
  earlier: undefined,
  firstLine: undefined,
  pairing: "quiet",
  pending: undefined,
  progressToken: undefined,
  progressOf: undefined,
  cancelled: undefined,
  initialized: false,
  batchRejected: false,
  nullId: undefined,
});

export const other = (d: Direction): Direction => (d === "c2s" ? "s2c" : "c2s");
export const showId = (id: unknown): string => JSON.stringify(id) ?? String(id);
export const arrow = (d: Direction): string => (d === "c2s" ? "client→server" : "server→client");

/** The per-sender state that a restart starts afresh. */
function perSender() {
  return {
    inflight: {
      c2s: new InflightTable<Pending>(),
      s2c: new InflightTable<Pending>(),
    },
    used: { c2s: new IdRegistry(), s2c: new IdRegistry() },
    /** Progress tokens of requests in flight, per sender: the request that announced the token last. */
    progress: {
      c2s: new TokenTable<Pending>(),
      s2c: new TokenTable<Pending>(),
    },
    /** Invalid messages per sender that a null-id error response may legitimately answer. */
    nullIdBudget: { c2s: 0, s2c: 0 },
    /**
     * Per sender, in order: the request ids of each batch reported `session/batch-not-allowed` that
     * a null-id error response may reject as a whole (its requests are then no longer in flight).
     */
    rejectedBatches: { c2s: [] as Id[][], s2c: [] as Id[][] },
    /** Per sender: ids of invalid messages (`jsonrpc/invalid`) that an error response may echo. */
    invalidIds: { c2s: new Map<Id, number>(), s2c: new Map<Id, number>() },
    /**
     * Per sender: requests that reused an id still in flight (`session/duplicate-request-id`), by id:
     * the earlier request keeps the id, and a second response with it answers the duplicate.
     */
    duplicates: { c2s: new Map<Id, Pending>(), s2c: new Map<Id, Pending>() },
    /** Per sender: a notification was sent. */
    notified: { c2s: false, s2c: false },
  };
}

/** The shared state of one session; see the module comment. */
export class SessionState {
  /** JSON-RPC messages seen (batch elements count one each). */
  messages = 0;
  /** Of {@link messages}, those that parsed as JSON (checked against a version). */
  parsed = 0;
  /** Sessions started (1 + restarts). */
  sessions = 1;
  v!: ProtocolValidators;
  defs!: Defs;
  version = "";
  /** The version the session speaks (forced, negotiated or requested), for version-dependent rules. */
  spoken: string | undefined;
  phase: Phase = "pre";
  era: Era = "unknown";
  initializedSent = false;
  initializeFirstReported = { c2s: false, s2c: false };
  serverCaps: Json | undefined;
  clientCaps: Json | undefined;
  s = perSender();
  /** Lines of the input that were dropped (too long): responses to unseen requests may answer them. */
  lostLines = 0;
  /** Reused for every message (no per-message allocation). */
  readonly facts: MessageFacts = newFacts();
  /** Reused for every message: see {@link MessageScratch}. */
  m: MessageScratch = emptyScratch();

  /** The message count at the file's first initialize request (1: it came first), 0 before one. */
  initializeAt = 0;
  /** With `ctx.onMessage`: the timeline entry of the message being checked. */
  answering: TimelineMessage | undefined;
  /** A response to a request id the input never showed (a sign of an excerpt). */
  answeredUnseen = false;

  constructor(readonly ctx: CheckerContext) {}

  /** Clears the scratch for the next message. */
  clearScratch(): void {
    this.m = emptyScratch();
  }

  /** Starts the state of a new session (a restart): the per-sender tables and the handshake. */
  reset(): void {
    this.phase = "pre";
    this.initializedSent = false;
    this.initializeFirstReported = { c2s: false, s2c: false };
    this.serverCaps = undefined;
    this.clientCaps = undefined;
    this.s = perSender();
    this.spoken = undefined;
  }

  /**
   * Takes the requests in flight and their progress tokens out of this session (leaving it none),
   * for the session that follows: put them back into `s` after {@link reset}.
   */
  detachInflight(): Pick<ReturnType<typeof perSender>, "inflight" | "progress"> {
    const { inflight, progress } = this.s;
    const none = perSender();
    this.s.inflight = none.inflight;
    this.s.progress = none.progress;
    return { inflight, progress };
  }

  /** The version for version-dependent rules: forced, else negotiated/requested, else the validators'. */
  speaks(): string {
    return this.ctx.forcedVersion ?? this.spoken ?? this.version;
  }

  /** Uses the validators of `version`; false (and no change) when there are none. */
  switchTo(version: string): boolean {
    const v = this.ctx.resolve(version);
    if (v === undefined) return false;
    this.v = v;
    this.defs = defsFor(v);
    this.version = version;
    return true;
  }

  /** The current validators describe a stateless version: `server/discover`, no `initialize`. */
  statelessSchema(): boolean {
    return this.defs.method("c2s", "server/discover").def !== undefined && this.defs.method("c2s", "initialize").def === undefined;
  }

  /** `version` has validators whose schema defines `initialize` (an initialize-based version). */
  initializeBased(version: string): boolean {
    return this.ctx.resolve(version)?.messageDefinition("c2s", "initialize") !== undefined;
  }

  /**
   * An initialize-based session whose initialize was not seen (initialize-first reports it): when
   * the default version is a stateless one, its messages are checked against the newest
   * initialize-based version that has validators instead (`named`, the one the request named,
   * first), not when a version is forced.
   */
  becomeLegacy(named?: string): void {
    this.era = "legacy";
    if (this.ctx.forcedVersion !== undefined || !this.statelessSchema()) return;
    this.switchToLegacy(named);
  }

  /** Switches to `named` or else the newest initialize-based version that has validators, if any. */
  switchToLegacy(named?: string): void {
    for (const version of named === undefined ? LEGACY_PROTOCOL_VERSIONS : [named, ...LEGACY_PROTOCOL_VERSIONS]) {
      if (this.initializeBased(version)) {
        if (version !== this.version) this.switchTo(version);
        return;
      }
    }
  }

  /** A request's `params._meta` protocol version when it is a string. */
  metaVersion(f: MessageFacts): string | undefined {
    const params = this.valueOf(f)?.params;
    const meta = isObject(params) ? params._meta : undefined;
    const named = isObject(meta) ? meta[PROTOCOL_VERSION_META_KEY] : undefined;
    return typeof named === "string" ? named : undefined;
  }

  /** The message of `f` as an object, else undefined. */
  valueOf(f: MessageFacts): Json | undefined {
    return isObject(f.value) ? f.value : undefined;
  }

  /** The capability `method` sent in `dir` needs and the sender's peer did not advertise, if any. */
  missingCapability(dir: Direction, kind: "request" | "notification", method: string): CapabilityRequirement | undefined {
    const req = requiredCapability(dir, kind, method, this.speaks());
    if (req === undefined) return undefined;
    const caps = req.side === "server" ? this.serverCaps : this.clientCaps;
    if (caps === undefined || hasCapability(caps, req)) return undefined;
    return req;
  }

  /** Schema issues of `check` on `f` (or its result; null or empty: valid). @throws ValidateUsageError */
  issues(check: SchemaCheck, target: CheckTarget, f: MessageFacts): SchemaIssue[] | null {
    if (check.definition === "") return null;
    try {
      return check.run(target === "result" ? (f.value as Json).result : f.value);
    } catch (err) {
      throw this.unusable(check.definition, err);
    }
  }

  /** Schema issues of `definition` on a value built here. @throws ValidateUsageError */
  issuesOfValue(definition: string, value: unknown): SchemaIssue[] | null {
    try {
      return this.v.validate(definition, value);
    } catch (err) {
      throw this.unusable(definition, err);
    }
  }

  /** "the schema for protocol version V", or with `--schema` "the schema FILE". */
  schemaLabel(): string {
    return this.ctx.schemaName ?? `the schema for protocol version ${this.version}`;
  }

  private unusable(definition: string, err: unknown): ValidateUsageError {
    // Unknown definition or a runtime-compiled schema that does not compile: not the traffic's fault.
    return new ValidateUsageError(`schema definition ${definition} (${this.schemaLabel()}) is unusable: ${err instanceof Error ? err.message : String(err)}`);
  }

  /**
   * Emits up to `maxIssues` schema issues as findings of `rule`, leaving out those at a pointer in
   * `reported` (already reported by the envelope check: one finding per defect). Returns the
   * pointers of the issues, or undefined when there are none.
   */
  reportIssues(
    issues: SchemaIssue[] | null,
    definition: string,
    rule: RuleInfo,
    origin: Origin,
    dir: Direction,
    prefix: string,
    id: WireId | undefined,
    method: string | undefined,
    reported?: ReadonlySet<string>,
  ): ReadonlySet<string> | undefined {
    if (issues === null || issues.length === 0) return undefined;
    if (reported !== undefined) {
      issues = issues.filter((i) => !reported.has(i.pointer));
      if (issues.length === 0) return undefined;
    }
    const max = Math.max(1, this.ctx.maxIssues);
    const shown = Math.min(issues.length, max);
    for (let i = 0; i < shown; i++) {
      const issue = issues[i]!;
      let message = `${issue.definition || definition}: ${issue.pointer === "" ? "(root)" : issue.pointer} ${issue.reason}`;
      if (i === shown - 1 && issues.length > shown) message += ` (+${issues.length - shown} more issues)`;
      this.emit(rule, origin, dir, message, id, method, prefix + issue.pointer);
    }
    return new Set(issues.map((i) => i.pointer));
  }

  /** Builds and emits a finding; `id`, `method` and `pointer` are left out when undefined. */
  emit(rule: RuleInfo, origin: Origin, dir: Direction, message: string, id?: WireId, method?: string, pointer?: string): void {
    // Built in the documented key order (file, line, direction, id, method, rule, ...): the JSON
    // reporter prints keys in insertion order.
    const finding = {
      file: this.ctx.file,
      line: origin.line,
      direction: dir,
    } as Finding;
    if (id !== undefined) finding.id = id;
    if (method !== undefined) finding.method = method;
    finding.rule = rule.id;
    finding.severity = rule.severity;
    if (pointer !== undefined) finding.pointer = pointer;
    finding.message = message;
    const label = this.sessionLabel();
    if (label !== undefined) finding.session = label;
    if (origin.location !== undefined) finding.location = origin.location;
    this.ctx.emit(finding);
  }

  sessionLabel(): string | undefined {
    if (this.sessions === 1) return this.ctx.session;
    return `${this.ctx.session ?? ""}#${this.sessions}`;
  }
}
