/**
 * The per-session checker: per-message schema checks dispatched by method, and the session rules
 * (lifecycle ordering, id bookkeeping, capabilities, cancellation, progress, batches).
 *
 * One {@link SessionChecker} follows one MCP session in capture order. Readers feed it parsed
 * JSON values with {@link SessionChecker.message} (or {@link SessionChecker.unparsable} for lines
 * that are not JSON) and call {@link SessionChecker.finish} at the end; findings go to the
 * `emit` callback of its {@link CheckerContext} as they are found.
 *
 * Version choice: the forced version (`--protocol-version`) if any; otherwise the version the
 * server's InitializeResult names, before it the version the client's InitializeRequest asks for
 * (when known here), before that the default (latest) version.
 *
 * Eras: an initialize-based ("legacy") session must start with the initialize handshake. A
 * stateless ("modern", 2026-07-28 and later) session has none: it is recognised when the forced
 * version's schema is stateless (it defines `server/discover` and no `initialize`), or when the
 * first client request of the session is `server/discover` or names its protocol version in
 * `params._meta["io.modelcontextprotocol/protocolVersion"]`. Its version is the one that first
 * request names (unless forced); the lifecycle rules (initialize-first, premature-request,
 * initialized-after-result) do not apply, and the server capabilities the request rules check
 * are those of the `server/discover` result, once one is seen. An `initialize` later in a stateless
 * session starts a new, initialize-based session (a dual-era server serves both; no reinitialize). A legacy session whose
 * initialize was not seen is checked against the newest initialize-based version when the default
 * (latest) version is stateless.
 *
 * Directions: a request sent `c2s` is answered by an `s2c` response and vice versa. In
 * unidirectional input (plain JSONL) only the rules that need one direction run: per-message
 * schema checks, request-id reuse, initialize-first (c2s), kind mismatch and batches; responses
 * get envelope checks only (their requests are not visible).
 */
import { hasCapability, requiredCapability } from "./capabilities.js";
import { defsFor, type Defs, type MethodInfo, type SchemaCheck } from "./defs.js";
import { IdRegistry, InflightTable, TokenTable, type InflightEntry } from "./ids.js";
import {
  factsOf,
  isId,
  isObject,
  newFacts,
  SHAPE_BAD_METHOD,
  SHAPE_BOTH,
  SHAPE_ERROR,
  SHAPE_NEITHER,
  SHAPE_NOT_OBJECT,
  SHAPE_NOTIFICATION,
  SHAPE_REQUEST,
  SHAPE_RESULT,
  type CheckTarget,
  type MessageFacts,
} from "./facts.js";
import { RULES, type RuleId } from "./rules.js";
import { ValidateUsageError, type Direction, type Finding, type ProtocolValidators, type TimelineMessage, type ValidatorResolver, type WireId } from "./types.js";
import type { SchemaIssue } from "../mcp/validation.js";
import { BATCH_PROTOCOL_VERSIONS, forbidsBatches, LEGACY_PROTOCOL_VERSIONS, PROTOCOL_VERSION_META_KEY } from "../mcp/versions.js";

/** Where a message came from in the input file. */
export interface Origin {
  line: number;
  /** HAR only: which part of the entry ("request", "response", "response event 3"). */
  location?: string;
  /** The time the input gives the message (capture `ts`, Claude log timestamp, HAR time), when asked for. */
  ts?: string;
}

/** Construction parameters of a {@link SessionChecker}. */
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

type Id = string | number;
type Json = Record<string, unknown>;

/** A request in flight (also the progress state of its token, in {@link SessionChecker.progress}). */
interface Pending extends InflightEntry {
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
}

type Phase = "pre" | "sent" | "answered" | "failed";
/** Which lifecycle the session follows; "unknown" until its first client request says. */
type Era = "unknown" | "legacy" | "stateless";


const other = (d: Direction): Direction => (d === "c2s" ? "s2c" : "c2s");
const showId = (id: unknown): string => JSON.stringify(id) ?? String(id);
const arrow = (d: Direction): string => (d === "c2s" ? "client→server" : "server→client");

/** Follows one MCP session; see the module comment. */
export class SessionChecker {
  /** JSON-RPC messages seen (batch elements count one each). */
  messages = 0;
  /** Of {@link messages}, those that parsed as JSON (checked against a version). */
  parsed = 0;
  /** Sessions started (1 + restarts). */
  sessions = 1;
  /** Version each finished session was checked against. */
  readonly versions: string[] = [];

  private v!: ProtocolValidators;
  private defs!: Defs;
  private version = "";
  /** The version the session speaks (forced, negotiated or requested), for version-dependent rules. */
  private spoken: string | undefined;
  private phase: Phase = "pre";
  private era: Era = "unknown";
  private initializedSent = false;
  private initializedMissingReported = false;
  private initializeFirstReported = { c2s: false, s2c: false };
  private serverCaps: Json | undefined;
  private clientCaps: Json | undefined;
  private inflight = { c2s: new InflightTable<Pending>(), s2c: new InflightTable<Pending>() };
  private used = { c2s: new IdRegistry(), s2c: new IdRegistry() };
  /** Progress tokens of requests in flight, per sender: the request that announced the token last. */
  private progress = { c2s: new TokenTable<Pending>(), s2c: new TokenTable<Pending>() };
  /** Invalid messages per sender that a null-id error response may legitimately answer. */
  private nullIdBudget = { c2s: 0, s2c: 0 };
  /**
   * Per sender, in order: the request ids of each batch reported `session/batch-not-allowed` that
   * a null-id error response may reject as a whole (its requests are then no longer in flight).
   */
  private rejectedBatches: { c2s: Id[][]; s2c: Id[][] } = { c2s: [], s2c: [] };
  /** Per sender: ids of invalid messages (`jsonrpc/invalid`) that an error response may echo. */
  private invalidIds = { c2s: new Map<Id, number>(), s2c: new Map<Id, number>() };
  private notified = { c2s: false, s2c: false };
  /** Lines of the input that were dropped (too long): responses to unseen requests may answer them. */
  private lostLines = 0;
  /** Reused for every message (no per-message allocation). */
  private readonly facts: MessageFacts = newFacts();
  /** The message count at the file's first initialize request (1: it came first), 0 before one. */
  private initializeAt = 0;
  /** With `ctx.onMessage`: the timeline entry of the message being checked. */
  private answering: TimelineMessage | undefined;
  /**
   * Per sender: requests that reused an id still in flight (`session/duplicate-request-id`), by id:
   * the earlier request keeps the id, and a second response with it answers the duplicate.
   */
  private duplicates = { c2s: new Map<Id, Pending>(), s2c: new Map<Id, Pending>() };
  /** A response to a request id the input never showed (a sign of an excerpt). */
  private answeredUnseen = false;

  /** @throws Error when `ctx.defaultVersion` (or the forced version) has no validators. */
  constructor(private readonly ctx: CheckerContext) {
    const start = ctx.forcedVersion ?? ctx.defaultVersion;
    if (!this.switchTo(start)) throw new Error(`no validators for protocol version ${start}`);
    this.era = this.initialEra();
  }

  /** Stateless from the start when the forced version's schema is (see the module comment). */
  private initialEra(): Era {
    return this.ctx.forcedVersion !== undefined && this.statelessSchema() ? "stateless" : "unknown";
  }

  /** The current validators describe a stateless version: `server/discover`, no `initialize`. */
  private statelessSchema(): boolean {
    return this.defs.method("c2s", "server/discover").def !== undefined && this.defs.method("c2s", "initialize").def === undefined;
  }

  /**
   * Signs that the input is an excerpt of a longer session (when `--partial` was not given): it
   * starts after the initialize request, or answers requests it does not hold.
   */
  get looksLikeExcerpt(): boolean {
    // A session whose initialize request came first (or came at all, after an early message) is complete.
    if (this.initializeAt === 1) return false;
    return ((this.initializeFirstReported.c2s || this.initializeFirstReported.s2c) && this.initializeAt === 0) || this.answeredUnseen;
  }

  /** The version currently used for checks. */
  get protocolVersion(): string {
    return this.version;
  }

  /** Checks one parsed JSON value (a message or a batch) sent in `dir`. */
  message(value: unknown, origin: Origin, dir: Direction): void {
    if (Array.isArray(value)) {
      this.batch(value, origin, dir);
      return;
    }
    this.one(factsOf(value, this.facts), origin, dir, "");
  }

  /** Records a line that was not JSON (`json/parse-error`). `error` is the parser's message. */
  unparsable(raw: string, error: string, origin: Origin, dir: Direction): void {
    this.messages++;
    this.nullIdBudget[dir]++;
    this.ctx.onMessage?.(this.timelineEntry(origin, dir, "invalid", undefined, undefined, raw));
    const excerpt = raw.length > 80 ? `${raw.slice(0, 77)}...` : raw;
    this.emit("json/parse-error", origin, dir, `not valid JSON (${error}): ${JSON.stringify(excerpt)}`);
  }

  /**
   * Records that a line of the input was dropped unread (`input/line-too-long`), so that a response
   * or progress notification referring to a request never seen, or a request left unanswered, is
   * not also reported: the dropped line may be that request or its response.
   */
  lost(): void {
    this.lostLines++;
  }

  /** Ends the session: reports requests still unanswered. Call once, at end of input. */
  finish(): void {
    this.versions.push(this.version);
    if (!this.ctx.bidirectional || this.ctx.partial === true) return; // (an excerpt may end mid-request)
    for (const dir of ["c2s", "s2c"] as const) {
      for (const p of this.inflight[dir].values()) {
        const id = p.id;
        // A dropped line may have answered it; a subscriptions/listen stream may stay open to the end.
        if (p.cancelled || p.notificationMethod || this.lostLines > 0 || p.method === "subscriptions/listen") continue;
        this.emit(
          "session/unanswered-request",
          p.location === undefined ? { line: p.line } : { line: p.line, location: p.location },
          dir,
          `${arrow(dir)} request ${p.method} id ${showId(id)} was never answered`,
          id,
          p.method,
        );
      }
    }
  }

  // ---------------------------------------------------------------------------------------------

  private batch(items: unknown[], origin: Origin, dir: Direction): void {
    if (items.length === 0) {
      this.messages++;
      this.nullIdBudget[dir]++;
      this.emit("jsonrpc/invalid", origin, dir, "empty JSON-RPC batch");
      return;
    }
    const hasInitialize = items.some((item) => isObject(item) && item.method === "initialize");
    // With initialize inside, the version is not negotiated yet; the initialize finding says it all.
    const speaks = this.speaks();
    // 2024-11-05 defines no batch but forbids none: its messages "MUST follow the JSON-RPC 2.0
    // specification" (Basic › Messages), which has batches; the revisions after 2025-03-26 removed them.
    if (forbidsBatches(speaks) && !hasInitialize) {
      // The peer may reject the whole batch with one null-id error (JSON-RPC 2.0 §5: Invalid Request).
      this.nullIdBudget[dir]++;
      const ids = items.flatMap((item) => (isObject(item) && typeof item.method === "string" && isId(item.id) ? [item.id] : []));
      if (this.rejectedBatches[dir].length < 1024) this.rejectedBatches[dir].push(ids);
      this.emit(
        "session/batch-not-allowed",
        origin,
        dir,
        `JSON-RPC batch of ${items.length} message${items.length === 1 ? "" : "s"}; batches are only allowed in protocol version ${BATCH_PROTOCOL_VERSIONS.join(", ")} (session: ${speaks})`,
      );
    }
    items.forEach((item, i) => {
      if (isObject(item) && item.method === "initialize") {
        this.emit(
          "session/batch-not-allowed",
          origin,
          dir,
          "the initialize request MUST NOT be part of a JSON-RPC batch",
          isId(item.id) ? item.id : undefined,
          "initialize",
          `/${i}`,
        );
      }
      this.one(factsOf(item, this.facts), origin, dir, `/${i}`);
    });
  }

  private one(f: MessageFacts, origin: Origin, dir: Direction, prefix: string): void {
    this.messages++;
    this.parsed++;
    if (this.ctx.onMessage === undefined) {
      this.dispatch(f, origin, dir, prefix);
      return;
    }
    // (reported once checked: a response's entry then names the request it was paired with)
    const entry = this.timeline(f, origin, dir, prefix);
    this.answering = entry;
    this.dispatch(f, origin, dir, prefix);
    this.answering = undefined;
    this.ctx.onMessage(entry);
  }

  private dispatch(f: MessageFacts, origin: Origin, dir: Direction, prefix: string): void {
    switch (f.shape) {
      case SHAPE_NOT_OBJECT:
        this.nullIdBudget[dir]++;
        this.emit("jsonrpc/invalid", origin, dir, `a JSON-RPC message must be an object, got ${f.kind}`, undefined, undefined, prefix === "" ? undefined : prefix);
        return;
      case SHAPE_BAD_METHOD:
        this.invalid(f, dir);
        this.emit("jsonrpc/invalid", origin, dir, `"method" must be a string, got ${f.kind}`, undefined, undefined, `${prefix}/method`);
        return;
      case SHAPE_REQUEST:
        if (!f.jsonrpcOk) this.badVersion(f, origin, dir, prefix, f.method);
        this.request(f, origin, dir, prefix);
        return;
      case SHAPE_NOTIFICATION:
        if (!f.jsonrpcOk) this.badVersion(f, origin, dir, prefix, f.method);
        this.notification(f, origin, dir, prefix);
        return;
      case SHAPE_BOTH:
        this.emit("jsonrpc/invalid", origin, dir, 'a response must not contain both "result" and "error"', idOnly(f.id), undefined, prefix);
        this.settle(f.id, dir); // still an answer to its request: one defect, one finding
        return;
      case SHAPE_NEITHER:
        this.invalid(f, dir);
        this.emit(
          "jsonrpc/invalid",
          origin,
          dir,
          'neither a request/notification ("method") nor a response ("result"/"error")',
          idOnly(f.id),
          undefined,
          prefix,
        );
        return;
      default:
        if (!f.jsonrpcOk) this.badVersion(f, origin, dir, prefix, undefined);
        this.response(f, origin, dir, prefix, f.shape === SHAPE_ERROR);
    }
  }

  /** An invalid response sent in `dir` with request id `rawId`: its request is no longer in flight. */
  private settle(rawId: unknown, dir: Direction): void {
    if (!isId(rawId) || !this.ctx.bidirectional) return;
    const from = other(dir);
    const p = this.inflight[from].get(rawId);
    if (p === undefined) return;
    this.inflight[from].delete(rawId);
    if (p.progressToken !== undefined) this.progress[from].delete(p.progressToken);
  }

  /** The timeline entry of message `f` for `ctx.onMessage`: its kind, method, id and text. */
  private timeline(f: MessageFacts, origin: Origin, dir: Direction, prefix: string): TimelineMessage {
    const s = f.shape;
    const kind = s === SHAPE_REQUEST ? "request" : s === SHAPE_NOTIFICATION ? "notification" : s === SHAPE_ERROR ? "error" : s === SHAPE_RESULT ? "result" : "invalid";
    const value = f.value;
    const method = s === SHAPE_REQUEST || s === SHAPE_NOTIFICATION ? f.method : undefined;
    const entry = this.timelineEntry(origin, dir, kind, method, wireId(f.id), JSON.stringify(value) ?? String(value));
    if (prefix !== "") entry.batch = prefix;
    return entry;
  }

  private timelineEntry(origin: Origin, dir: Direction, kind: TimelineMessage["kind"], method: string | undefined, id: WireId | undefined, text: string): TimelineMessage {
    const m: TimelineMessage = { file: this.ctx.file, line: origin.line, direction: dir, kind, text };
    const session = this.sessionLabel();
    if (session !== undefined) m.session = session;
    if (origin.location !== undefined) m.location = origin.location;
    if (origin.ts !== undefined) m.ts = origin.ts;
    if (method !== undefined) m.method = method;
    if (id !== undefined) m.id = id;
    return m;
  }

  /**
   * An invalid message (JSON-RPC Invalid Request): the peer may answer it with an error carrying
   * its id when the id is readable (remembered in {@link invalidIds}), else with id null.
   */
  private invalid(f: MessageFacts, dir: Direction): void {
    if (isId(f.id) && this.ctx.bidirectional) {
      if (this.invalidIds[dir].size < 4096) this.invalidIds[dir].set(f.id, 0);
    } else {
      this.nullIdBudget[dir]++;
    }
  }

  private badVersion(f: MessageFacts, origin: Origin, dir: Direction, prefix: string, method: string | undefined): void {
    this.emit("jsonrpc/invalid", origin, dir, `"jsonrpc" must be "2.0", got ${showId(f.jsonrpc)}`, idOnly(f.id), method, `${prefix}/jsonrpc`);
  }

  // --- requests --------------------------------------------------------------------------------

  private request(f: MessageFacts, origin: Origin, dir: Direction, prefix: string): void {
    const rawId = f.id;
    const method = f.method;
    const id = isId(rawId) ? rawId : undefined;
    const aboutId = wireId(rawId);
    // An Invalid Request whose id cannot be trusted may be rejected with id null (JSON-RPC 2.0 §5).
    if (id === undefined || !f.jsonrpcOk) this.nullIdBudget[dir]++;

    if (method === "initialize" && dir === "c2s") {
      if (this.initializeAt === 0) this.initializeAt = this.messages;
      // A retry after an initialize error is no restart: no session existed yet (ids start afresh).
      if (this.phase === "failed") this.used = { c2s: new IdRegistry(), s2c: new IdRegistry() };
      else if (this.phase !== "pre") this.restart(origin, true);
      // After stateless requests, an initialize starts an initialize-based session (a dual-era
      // server serves both): the stateless part is a session of its own, with its version.
      else if (this.era === "stateless" && this.parsed > 1) this.restart(origin, false);
      this.era = "legacy"; // also in a stateless session: initialize selects the legacy rules
      this.onInitializeRequest(f);
    } else if (this.defs.method(dir, method).def?.kind === "notification") {
      // A notification method sent with an id is a request (JSON-RPC 2.0 §4): the one finding is
      // its kind-mismatch below, not a lifecycle finding about it as a request.
      if (method === "notifications/initialized" && dir === "c2s") this.initializedNotification(origin, dir, method);
    } else {
      if (this.era === "unknown" && dir === "c2s") this.decideEra(f, origin, aboutId);
      // A server request the (stateless) default version does not define, as in server-side JSONL
      // that starts with sampling/createMessage: an initialize-based session.
      else if (this.era === "unknown" && this.defs.method(dir, method).def === undefined) this.becomeLegacy();
      if (this.era !== "stateless") this.lifecycleRequest(method, origin, dir, aboutId);
    }

    const envelope = f.jsonrpcOk ? this.check(this.defs.envelopeChecks.request, "message", f, "schema/envelope", origin, dir, prefix, aboutId, method) : undefined;
    const info = this.definition(dir, method, origin, aboutId);
    let notificationMethod = false;
    if (info !== undefined) {
      if (info.def!.kind === "notification") {
        notificationMethod = true;
        this.emit("jsonrpc/kind-mismatch", origin, dir, `${method} is a notification but was sent with id ${showId(rawId)}`, aboutId, method, `${prefix}/id`);
      } else {
        this.check(info.defCheck!, "message", f, "schema/request", origin, dir, prefix, aboutId, method, envelope);
      }
    }
    if (!notificationMethod) this.capability(dir, "request", method, origin, aboutId);

    if (id === undefined) return;
    const inflight = this.inflight[dir];
    const earlier = inflight.get(id);
    if (this.ctx.bidirectional && earlier !== undefined) {
      this.nullIdBudget[dir]++; // an invalid request the peer may reject with id null (the bridge does)
      this.emit(
        "session/duplicate-request-id",
        origin,
        dir,
        `request id ${showId(id)} reused while the ${earlier.method} request with that id (line ${earlier.line}) is still in flight`,
        aboutId,
        method,
      );
    } else {
      const used = this.used[dir];
      const firstLine = used.firstLine(id);
      if (firstLine !== undefined) {
        this.emit("session/reused-request-id", origin, dir, `request id ${showId(id)} was already used by the ${arrow(dir)} side at line ${firstLine}`, aboutId, method);
      } else {
        used.remember(id, origin.line);
      }
    }
    if (!this.ctx.bidirectional) return;
    const pending: Pending = {
      id,
      seq: 0,
      line: origin.line,
      location: origin.location,
      method,
      cancelled: false,
      notificationMethod,
      progressToken: f.token,
      last: undefined,
      at: this.answering === undefined ? undefined : timelinePlace(this.answering),
    };
    if (f.token !== undefined) this.progress[dir].set(f.token, pending);
    if (earlier === undefined) inflight.set(pending);
    else if (this.duplicates[dir].size < 1024) this.duplicates[dir].set(id, pending);
  }

  /**
   * Decides the era at the session's first client request (other than initialize): stateless for
   * `server/discover` or a request naming its version in `_meta` (unless that version's schema is
   * an initialize-based one), legacy otherwise. Adopts the named version when not forced.
   */
  private decideEra(f: MessageFacts, origin: Origin, aboutId: WireId | undefined): void {
    const named = this.metaVersion(f);
    if (f.method !== "server/discover" && named === undefined) {
      this.becomeLegacy();
      return;
    }
    if (named !== undefined) {
      const v = this.ctx.resolve(named);
      if (v !== undefined && v.messageDefinition("c2s", "initialize") !== undefined) {
        this.becomeLegacy(named); // an initialize-based version named per request: initialize-first says it
        return;
      }
    }
    this.era = "stateless";
    if (named === undefined) return;
    this.adoptVersion(named, "named", origin, "c2s", aboutId, f.method, `/params/_meta/${PROTOCOL_VERSION_META_KEY.replace("/", "~1")}`);
  }

  /**
   * Checks the session against `version` (named in a request's `_meta`, or negotiated by
   * initialize): with `--protocol-version` forced, a different version is `session/version-mismatch`;
   * otherwise the session switches to it, or reports `session/unsupported-version` when there are no
   * validators for it. `pointer` locates the version in the message.
   */
  private adoptVersion(
    version: string,
    how: "named" | "negotiated",
    origin: Origin,
    dir: Direction,
    aboutId: WireId | undefined,
    method: string | undefined,
    pointer: string,
  ): void {
    const forced = this.ctx.forcedVersion;
    const what = how === "named" ? "the session's requests name" : "the session negotiated";
    if (forced !== undefined) {
      if (version !== forced) {
        this.emit("session/version-mismatch", origin, dir, `${what} protocol version ${version}; checking against --protocol-version ${forced}`, aboutId, method, pointer);
      }
      return;
    }
    this.spoken = version;
    // An initialize exchange is never checked against a stateless schema (no initialize in it).
    const usable = how === "named" || this.initializeBased(version);
    if (version !== this.version && !(usable && this.switchTo(version))) {
      const where = how === "named" ? `protocol version ${version} named in the request's _meta` : `negotiated protocol version ${version}`;
      const why = usable || this.ctx.resolve(version) === undefined ? `no validators for ${where}` : `no initialize-based schema for ${where}`;
      const against = this.ctx.schemaName ?? this.version;
      this.emit("session/unsupported-version", origin, dir, `${why}; checking against ${against}`, aboutId, method, pointer);
    }
  }

  /**
   * An initialize-based session whose initialize was not seen (initialize-first reports it): when
   * the default version is a stateless one, its messages are checked against the newest
   * initialize-based version that has validators instead (`named`, the one the request named,
   * first), not when a version is forced.
   */
  private becomeLegacy(named?: string): void {
    this.era = "legacy";
    if (this.ctx.forcedVersion !== undefined || !this.statelessSchema()) return;
    this.switchToLegacy(named);
  }

  /** Switches to `named` or else the newest initialize-based version that has validators, if any. */
  private switchToLegacy(named?: string): void {
    for (const version of named === undefined ? LEGACY_PROTOCOL_VERSIONS : [named, ...LEGACY_PROTOCOL_VERSIONS]) {
      if (this.initializeBased(version)) {
        if (version !== this.version) this.switchTo(version);
        return;
      }
    }
  }

  /** A request's `params._meta` protocol version when it is a string. */
  private metaVersion(f: MessageFacts): string | undefined {
    const params = this.valueOf(f)?.params;
    const meta = isObject(params) ? params._meta : undefined;
    const named = isObject(meta) ? meta[PROTOCOL_VERSION_META_KEY] : undefined;
    return typeof named === "string" ? named : undefined;
  }

  /** The message of `f` as an object, else undefined. */
  private valueOf(f: MessageFacts): Json | undefined {
    return isObject(f.value) ? f.value : undefined;
  }

  private lifecycleRequest(method: string, origin: Origin, dir: Direction, aboutId: WireId | undefined): void {
    if (this.phase === "pre") {
      this.initializeFirst(origin, dir, `request ${method}`, method, aboutId);
      return;
    }
    if (!this.ctx.bidirectional || method === "ping") return;
    if (dir === "c2s") {
      if (this.phase === "sent") {
        this.emit("session/premature-request", origin, dir, `client sent ${method} before the server answered initialize`, aboutId, method);
      } else if (this.phase === "answered" && !this.initializedSent && !this.initializedMissingReported) {
        this.initializedMissingReported = true;
        this.emit(
          "session/initialized-after-result",
          origin,
          dir,
          `client sent ${method} after the initialize result without sending notifications/initialized first`,
          aboutId,
          method,
        );
      }
    } else if (!this.initializedSent && this.phase !== "failed") {
      this.emit("session/premature-request", origin, dir, `server sent ${method} before the client's notifications/initialized`, aboutId, method);
    }
  }

  private initializeFirst(origin: Origin, dir: Direction, what: string, method: string, aboutId: WireId | undefined): void {
    if ((!this.ctx.bidirectional && dir === "s2c") || this.ctx.partial === true) return;
    if (this.initializeFirstReported[dir]) return;
    this.initializeFirstReported[dir] = true;
    this.emit(
      "session/initialize-first",
      origin,
      dir,
      dir === "c2s"
        ? `client sent ${what} before the initialize request (later ones are not reported)`
        : `server sent ${what} before the client's initialize request (later ones are not reported)`,
      aboutId,
      method,
    );
  }

  private onInitializeRequest(f: MessageFacts): void {
    this.phase = "sent";
    this.clientCaps = f.clientCaps;
    const requested = f.requestedVersion;
    if (this.ctx.forcedVersion === undefined && requested !== undefined) {
      this.spoken = requested;
      // Only an initialize-based schema can check an initialize exchange: an unknown (or stateless)
      // requested version leaves the newest initialize-based one (becomeLegacy, below).
      if (!this.initializeBased(requested)) this.switchToLegacy();
      else if (requested !== this.version) this.switchTo(requested);
    }
    this.becomeLegacy();
  }

  /** `version` has validators whose schema defines `initialize` (an initialize-based version). */
  private initializeBased(version: string): boolean {
    return this.ctx.resolve(version)?.messageDefinition("c2s", "initialize") !== undefined;
  }

  // --- notifications ---------------------------------------------------------------------------

  private notification(f: MessageFacts, origin: Origin, dir: Direction, prefix: string): void {
    const method = f.method;
    // A session whose capture starts after its initialize request: `notifications/initialized`
    // belongs to the initialize-based lifecycle (checked as such, not against a stateless default).
    // So is `initialize` sent without an id (a request method as a notification: kind-mismatch).
    if (this.era === "unknown" && dir === "c2s" && (method === "notifications/initialized" || method === "initialize")) this.becomeLegacy();
    // (`initialize` without an id is an attempt at the initialize request: its kind-mismatch says it.)
    if (this.phase === "pre" && this.era !== "stateless" && !(method === "initialize" && dir === "c2s")) {
      this.initializeFirst(origin, dir, `notification ${method}`, method, undefined);
    }
    const envelope = f.jsonrpcOk ? this.check(this.defs.envelopeChecks.notification, "message", f, "schema/envelope", origin, dir, prefix, undefined, method) : undefined;
    const info = this.definition(dir, method, origin, undefined);
    if (info !== undefined) {
      if (info.def!.kind === "request") {
        this.nullIdBudget[dir]++; // an Invalid Request the peer may reject with id null (JSON-RPC 2.0 §5)
        this.emit("jsonrpc/kind-mismatch", origin, dir, `${method} is a request but was sent without an id`, undefined, method, prefix);
      } else {
        this.check(info.defCheck!, "message", f, "schema/notification", origin, dir, prefix, undefined, method, envelope);
      }
    }
    this.notified[dir] = true;

    if (method === "notifications/initialized" && dir === "c2s") {
      this.initializedNotification(origin, dir, method);
    } else if (method === "notifications/cancelled" && this.ctx.bidirectional) {
      const requestId = f.paramsObject ? f.requestId : undefined;
      const pending = isId(requestId) ? this.inflight[dir].get(requestId) : undefined;
      if (pending !== undefined) {
        if (pending.method === "initialize") {
          // Invalid cancellation: the receiver must ignore it, so answering stays correct.
          this.emit("session/cancel-initialize", origin, dir, "the initialize request MUST NOT be cancelled", requestId as Id, method);
        } else {
          pending.cancelled = true;
        }
      } else if (dir === "s2c" && isId(requestId)) {
        // 2026-07-28 stdio: the server ends a subscriptions/listen stream by "cancelling" it.
        const listen = this.inflight.c2s.get(requestId);
        if (listen?.method === "subscriptions/listen") listen.cancelled = true;
      }
    } else if (method === "notifications/progress" && this.ctx.bidirectional && f.paramsObject) {
      this.progressNotification(f, origin, dir, method);
    }
    this.capability(dir, "notification", method, origin, undefined);
  }

  /**
   * The client's notifications/initialized (also when sent with an id): too early before the
   * initialize result; one before the initialize request (initialize-first reports it) does not
   * count as sent.
   */
  private initializedNotification(origin: Origin, dir: Direction, method: string): void {
    if (this.ctx.bidirectional && this.phase === "sent") {
      this.emit("session/initialized-after-result", origin, dir, "notifications/initialized sent before the initialize result", undefined, method);
    }
    if (this.phase !== "pre" || !this.ctx.bidirectional) this.initializedSent = true;
    if (!this.ctx.bidirectional && this.phase === "sent") this.phase = "answered";
  }

  private progressNotification(f: MessageFacts, origin: Origin, dir: Direction, method: string): void {
    const token = f.token;
    if (token === undefined) return; // the schema check reports it
    const state = this.progress[other(dir)].get(token);
    if (state === undefined) {
      if (this.lostLines > 0 || this.ctx.partial === true) return; // may belong to a request on a dropped line, or before the excerpt
      this.emit(
        "session/unknown-progress-token",
        origin,
        dir,
        `progress token ${showId(token)} belongs to no in-flight ${arrow(other(dir))} request`,
        undefined,
        method,
        "/params/progressToken",
      );
      return;
    }
    const value = f.progress;
    if (typeof value !== "number") return;
    if (state.last !== undefined && !(value > state.last)) {
      this.emit(
        "session/progress-not-increasing",
        origin,
        dir,
        `progress ${value} for token ${showId(token)} does not increase (previous ${state.last})`,
        state.id,
        method,
        "/params/progress",
      );
    }
    state.last = value;
  }

  // --- responses -------------------------------------------------------------------------------

  private response(f: MessageFacts, origin: Origin, dir: Direction, prefix: string, isError: boolean): void {
    const rawId = f.id;
    const from = other(dir);
    const aboutId = wireId(rawId);
    if (!this.ctx.bidirectional && dir === "s2c" && !isError) this.serverSideResult(f, origin, dir);
    else if (this.era === "unknown" && dir === "s2c" && !isError && initializeEraResult(this.valueOf(f)?.result)) {
      // An InitializeResult, or a result without the `resultType` every 2026-07-28 result carries,
      // whose request the capture does not hold: an initialize-based session, and an
      // InitializeResult (its request cut or unparsable) names its version.
      const result = this.valueOf(f)?.result;
      this.becomeLegacy();
      if (this.phase === "pre" && looksLikeInitializeResult(result)) {
        this.adoptVersion((result as Json).protocolVersion as string, "negotiated", origin, dir, undefined, "initialize", "/result/protocolVersion");
      }
    }
    let envelope: ReadonlySet<string> | undefined;
    if (f.jsonrpcOk) {
      const env = this.defs.envelopeChecks;
      if (isError && rawId === null) this.nullIdError(env.error, f, origin, dir, prefix);
      else envelope = this.check(isError ? env.error : env.result, "message", f, isError ? "schema/error-response" : "schema/envelope", origin, dir, prefix, aboutId, undefined);
    }

    if (rawId === null || rawId === undefined) {
      if (isError && this.nullIdBudget[from] > 0) {
        this.nullIdBudget[from]--;
        // A batch rejected as a whole: its requests get no other answer. (Other invalid messages
        // are taken to be answered first: a batch counts as rejected once nothing else is left.)
        const batches = this.rejectedBatches[from];
        const batch = this.nullIdBudget[from] < batches.length ? batches.shift() : undefined;
        if (batch !== undefined && this.ctx.bidirectional) {
          for (const id of batch) {
            const p = this.inflight[from].get(id);
            if (p === undefined) continue;
            this.inflight[from].delete(id);
            if (p.progressToken !== undefined) this.progress[from].delete(p.progressToken);
          }
        }
        return;
      }
      // (a result without any id: the envelope check's finding is the one; with id null, both)
      if (!isError) {
        if (rawId === null || envelope === undefined) {
          this.emit(
            "session/response-to-notification",
            origin,
            dir,
            "a result without a request id can only answer a notification; notifications MUST NOT be answered",
            aboutId,
          );
        }
      } else if (this.ctx.bidirectional && this.lostLines === 0 && this.ctx.partial !== true) {
        // (with a dropped line, it may be the rejection of that line; in an excerpt, of one before it: not reported)
        if (this.notified[from]) {
          this.emit(
            "session/response-to-notification",
            origin,
            dir,
            `error response with a null id, but the ${arrow(from)} side sent no unparseable or invalid message to reject; notifications MUST NOT be answered`,
            aboutId,
          );
        } else {
          this.emit("session/unmatched-response", origin, dir, "error response with a null id answers no invalid message", aboutId);
        }
      }
      return;
    }
    if (!isId(rawId)) return; // the envelope check reports the bad id type

    if (!this.ctx.bidirectional) return; // (serverSideResult followed the handshake)

    const inflight = this.inflight[from];
    let pending = inflight.get(rawId);
    let duplicate = false;
    if (pending === undefined && this.duplicates[from].size > 0) {
      pending = this.duplicates[from].get(rawId); // the earlier request was answered: this answers the duplicate
      duplicate = pending !== undefined && this.duplicates[from].delete(rawId);
    }
    if (pending === undefined) {
      // JSON-RPC lets an error response echo the id it could read from an invalid request.
      if (isError && this.invalidIds[from].delete(rawId)) return;
      const firstLine = this.used[from].firstLine(rawId);
      if (firstLine === undefined && (this.lostLines > 0 || this.ctx.partial === true)) return; // may answer a dropped line, or a request before the excerpt
      if (firstLine === undefined) this.answeredUnseen = true;
      this.emit(
        "session/unmatched-response",
        origin,
        dir,
        firstLine !== undefined
          ? `response id ${showId(rawId)}: the ${arrow(from)} request with this id (line ${firstLine}) was already answered`
          : `response id ${showId(rawId)} matches no ${arrow(from)} request`,
        aboutId,
      );
      return;
    }
    if (!duplicate) inflight.delete(rawId);
    if (pending.progressToken !== undefined) this.progress[from].delete(pending.progressToken);
    if (this.answering !== undefined && pending.at !== undefined) this.answering.answers = pending.at;
    // A notification method sent with an id is a request (JSON-RPC 2.0 §4), reported once as
    // jsonrpc/kind-mismatch: any answer to it (typically -32600) is fine, and has no result definition.
    if (pending.notificationMethod) return;
    if (pending.cancelled) {
      this.emit("session/answered-after-cancel", origin, dir, `response to ${pending.method} (line ${pending.line}) after its sender cancelled it`, aboutId, pending.method);
    }
    if (pending.method === "initialize" && from === "c2s") {
      const result = isError ? undefined : this.valueOf(f)?.result;
      if (isError) this.phase = "failed";
      else if (isObject(result)) this.onInitializeResult(result, origin, dir);
      else this.phase = "answered";
    } else if (pending.method === "server/discover" && from === "c2s" && !isError && this.era === "stateless") {
      this.onDiscoverResult(this.valueOf(f)?.result);
    }
    if (!isError) {
      const resultCheck = this.defs.method(from, pending.method).resultCheck;
      if (resultCheck !== undefined) this.check(resultCheck, "result", f, "schema/result", origin, dir, `${prefix}/result`, aboutId, pending.method, insideResult(envelope));
    }
  }

  /**
   * An error response with `id: null` (JSON-RPC 2.0 §5.1: the answer to a request that could not
   * be parsed or whose id could not be read). MCP schemas type the id as string | integer, so the
   * envelope check rejects it: when the message passes the envelope with any valid id in place of
   * the null, it is otherwise well-formed and gets the `jsonrpc/null-id-error` warning instead;
   * when it has other problems, all of the envelope issues are reported as usual.
   */
  private nullIdError(check: SchemaCheck, f: MessageFacts, origin: Origin, dir: Direction, prefix: string): void {
    const definition = check.definition;
    const issues = this.issues(check, "message", f);
    if (issues === null || issues.length === 0) return;
    const value = this.valueOf(f);
    const withId = value === undefined ? undefined : this.issuesOfValue(definition, { ...value, id: 0 });
    if (withId !== undefined && (withId === null || withId.length === 0)) {
      this.emit(
        "jsonrpc/null-id-error",
        origin,
        dir,
        "error response with id null: allowed by JSON-RPC 2.0 for unparseable or invalid requests, but the MCP schema's error response needs a string or integer id",
        null,
        undefined,
        `${prefix}/id`,
      );
      return;
    }
    this.report(issues, definition, "schema/error-response", origin, dir, prefix, null, undefined);
  }

  /**
   * A result in server-side JSONL (the requests are not visible), before it is checked: one shaped
   * as an InitializeResult sets the era and the negotiated version; otherwise the first result
   * decides the era: stateless for a DiscoverResult or a result with `resultType` (2026-07-28
   * results carry it), initialize-based else (checked like a session whose initialize is missing).
   */
  private serverSideResult(f: MessageFacts, origin: Origin, dir: Direction): void {
    if (this.phase !== "answered" && looksLikeInitializeResult(f.result)) {
      this.onInitializeResult(f.result as Json, origin, dir);
      return;
    }
    if (this.era === "unknown") {
      const result = this.valueOf(f)?.result;
      if (!looksLikeDiscoverResult(result) && !(isObject(result) && "resultType" in result)) {
        this.becomeLegacy();
        return;
      }
      this.era = "stateless";
    }
    // A DiscoverResult gives the capabilities.
    if (this.era === "stateless" && looksLikeDiscoverResult(f.result)) this.onDiscoverResult(f.result);
  }

  /** A stateless session's `server/discover` result: its capabilities govern the later requests. */
  private onDiscoverResult(result: unknown): void {
    if (isObject(result) && isObject(result.capabilities)) this.serverCaps = result.capabilities;
  }

  private onInitializeResult(result: Json, origin: Origin, dir: Direction): void {
    this.phase = "answered";
    this.becomeLegacy(); // (server-side JSONL: this result may be the first sign of the era)
    this.serverCaps = isObject(result.capabilities) ? result.capabilities : undefined;
    const negotiated = result.protocolVersion;
    if (typeof negotiated !== "string") return; // the result check reports it
    this.adoptVersion(negotiated, "negotiated", origin, dir, undefined, "initialize", "/result/protocolVersion");
  }

  // --- shared helpers --------------------------------------------------------------------------

  /** Starts a new session at an initialize request; `reinitialize`: a second one (reported unless restarts are expected). */
  private restart(origin: Origin, reinitialize: boolean): void {
    if (reinitialize && !this.ctx.restartsExpected) {
      this.emit("session/reinitialize", origin, "c2s", "second initialize request; checking continues as a new session", undefined, "initialize");
    }
    this.finish();
    this.sessions++;
    this.phase = "pre";
    this.initializedSent = false;
    this.initializedMissingReported = false;
    this.initializeFirstReported = { c2s: false, s2c: false };
    this.serverCaps = undefined;
    this.clientCaps = undefined;
    this.inflight = { c2s: new InflightTable(), s2c: new InflightTable() };
    this.used = { c2s: new IdRegistry(), s2c: new IdRegistry() };
    this.progress = { c2s: new TokenTable(), s2c: new TokenTable() };
    this.nullIdBudget = { c2s: 0, s2c: 0 };
    this.rejectedBatches = { c2s: [], s2c: [] };
    this.invalidIds = { c2s: new Map(), s2c: new Map() };
    this.duplicates = { c2s: new Map(), s2c: new Map() };
    this.notified = { c2s: false, s2c: false };
    this.spoken = undefined;
    this.switchTo(this.ctx.forcedVersion ?? this.ctx.defaultVersion);
    this.era = "legacy"; // restarted by an initialize request
  }

  /** The version for version-dependent rules: forced, else negotiated/requested, else the validators'. */
  private speaks(): string {
    return this.ctx.forcedVersion ?? this.spoken ?? this.version;
  }

  /** Uses the validators of `version`; false (and no change) when there are none. */
  private switchTo(version: string): boolean {
    const v = this.ctx.resolve(version);
    if (v === undefined) return false;
    this.v = v;
    this.defs = defsFor(v);
    this.version = version;
    return true;
  }

  /** What `method` means sent in `dir` (its `def` defined); undefined, reported, when the version has no definition for it. */
  private definition(dir: Direction, method: string, origin: Origin, aboutId: WireId | undefined): MethodInfo | undefined {
    const info = this.defs.method(dir, method);
    if (info.def !== undefined) return info;
    if (this.defs.method(other(dir), method).def !== undefined) {
      this.emit("session/wrong-direction", origin, dir, `${method} is only defined ${arrow(other(dir))}, but was sent ${arrow(dir)}`, aboutId, method);
    } else {
      this.emit("schema/unknown-method", origin, dir, `method ${method} is not defined by ${this.schemaLabel()}`, aboutId, method);
    }
    return undefined;
  }

  private capability(dir: Direction, kind: "request" | "notification", method: string, origin: Origin, aboutId: WireId | undefined): void {
    const req = requiredCapability(dir, kind, method, this.speaks());
    if (req === undefined) return;
    const caps = req.side === "server" ? this.serverCaps : this.clientCaps;
    if (caps === undefined || hasCapability(caps, req)) return;
    const what = `${req.side} capability ${req.path.join(".")}`;
    if (kind === "request") {
      const source = this.era === "stateless" ? "server/discover result" : "initialize exchange";
      this.emit("session/missing-capability", origin, dir, `${method} needs the ${what}, which the ${source} did not advertise`, aboutId, method);
    } else {
      this.emit("session/unadvertised-notification", origin, dir, `${method} sent without advertising the ${what}`, aboutId, method);
    }
  }

  /** Schema issues of `definition` on the message (or its result). */
  private verdict(check: SchemaCheck, target: CheckTarget, f: MessageFacts): SchemaIssue[] | null {
    return check.run(target === "result" ? (f.value as Json).result : f.value);
  }

  private check(
    check: SchemaCheck,
    target: CheckTarget,
    f: MessageFacts,
    rule: RuleId,
    origin: Origin,
    dir: Direction,
    prefix: string,
    id: WireId | undefined,
    method: string | undefined,
    reported?: ReadonlySet<string>,
  ): ReadonlySet<string> | undefined {
    if (check.definition === "") return undefined; // envelope definition absent from a custom schema
    return this.report(this.issues(check, target, f), check.definition, rule, origin, dir, prefix, id, method, reported);
  }

  /** Schema issues of `check` on `f` (null or empty: valid). @throws ValidateUsageError */
  private issues(check: SchemaCheck, target: CheckTarget, f: MessageFacts): SchemaIssue[] | null {
    if (check.definition === "") return null;
    try {
      return this.verdict(check, target, f);
    } catch (err) {
      throw this.unusable(check.definition, err);
    }
  }

  /** Schema issues of `definition` on a value built here. @throws ValidateUsageError */
  private issuesOfValue(definition: string, value: unknown): SchemaIssue[] | null {
    try {
      return this.v.validate(definition, value);
    } catch (err) {
      throw this.unusable(definition, err);
    }
  }

  /** "the schema for protocol version V", or with `--schema` "the schema FILE". */
  private schemaLabel(): string {
    return this.ctx.schemaName ?? `the schema for protocol version ${this.version}`;
  }

  private unusable(definition: string, err: unknown): ValidateUsageError {
    // Unknown definition or a runtime-compiled schema that does not compile: not the traffic's fault.
    return new ValidateUsageError(
      `schema definition ${definition} (${this.schemaLabel()}) is unusable: ${err instanceof Error ? err.message : String(err)}`,
    );
  }

  /**
   * Emits up to `maxIssues` schema issues as findings of `rule`, leaving out those at a pointer in
   * `reported` (already reported by the envelope check: one finding per defect). Returns the
   * pointers of the issues, or undefined when there are none.
   */
  private report(
    issues: SchemaIssue[] | null,
    definition: string,
    rule: RuleId,
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
  private emit(rule: RuleId, origin: Origin, dir: Direction, message: string, id?: WireId, method?: string, pointer?: string): void {
    // Built in the documented key order (file, line, direction, id, method, rule, ...): the JSON
    // reporter prints keys in insertion order.
    const finding = { file: this.ctx.file, line: origin.line, direction: dir } as Finding;
    if (id !== undefined) finding.id = id;
    if (method !== undefined) finding.method = method;
    finding.rule = rule;
    finding.severity = RULES[rule].severity;
    if (pointer !== undefined) finding.pointer = pointer;
    finding.message = message;
    const label = this.sessionLabel();
    if (label !== undefined) finding.session = label;
    if (origin.location !== undefined) finding.location = origin.location;
    this.ctx.emit(finding);
  }

  private sessionLabel(): string | undefined {
    if (this.sessions === 1) return this.ctx.session;
    return `${this.ctx.session ?? ""}#${this.sessions}`;
  }
}

/** Where `entry` sits in the timeline: what a response to it `answers`. */
function timelinePlace(entry: TimelineMessage): TimelineMessage["answers"] {
  const at: NonNullable<TimelineMessage["answers"]> = { line: entry.line };
  if (entry.location !== undefined) at.location = entry.location;
  if (entry.batch !== undefined) at.batch = entry.batch;
  return at;
}

/** Pointers of envelope issues inside `/result`, relative to the result (undefined when none). */
function insideResult(pointers: ReadonlySet<string> | undefined): ReadonlySet<string> | undefined {
  if (pointers === undefined) return undefined;
  const inside = new Set<string>();
  for (const p of pointers) if (p === "/result" || p.startsWith("/result/")) inside.add(p.slice("/result".length));
  return inside.size === 0 ? undefined : inside;
}

/** The id as findings carry it: string, number or null; undefined for absent or other values. */
function wireId(raw: unknown): WireId | undefined {
  return isId(raw) || raw === null ? raw : undefined;
}

/** The id when it is a string or number (findings about invalid messages leave out null). */
function idOnly(raw: unknown): WireId | undefined {
  return isId(raw) ? raw : undefined;
}

function looksLikeDiscoverResult(result: unknown): result is Json {
  return isObject(result) && Array.isArray(result.supportedVersions) && isObject(result.capabilities);
}

/** A result of an initialize-based session: an InitializeResult, or an object without `resultType`. */
function initializeEraResult(result: unknown): boolean {
  return looksLikeInitializeResult(result) || (isObject(result) && !("resultType" in result));
}

function looksLikeInitializeResult(result: unknown): boolean {
  return isObject(result) && typeof result.protocolVersion === "string" && isObject(result.capabilities) && isObject(result.serverInfo);
}
