/**
 * The per-session checker: classifies each message (JSON-RPC 2.0 §4/§5), keeps the session state
 * (`session-state.ts`: lifecycle phase and era, version, requests in flight, ids, tokens) and
 * dispatches each event to the session rules (`rules/<id>.ts`) in the order `rules/index.ts`
 * gives, which report the findings.
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
import { factsOf, isId, isObject, SHAPE_BOTH, SHAPE_ERROR, SHAPE_NOT_OBJECT, SHAPE_NOTIFICATION, SHAPE_REQUEST, SHAPE_RESULT, type MessageFacts } from "./facts.js";
import { DEFINED, MethodDispatch, OTHER_DIRECTION, OTHER_KIND, PAIRING_INDEX, responseTable, UNKNOWN, type MethodHandler } from "./dispatch.js";
import { IdRegistry } from "./ids.js";
import { Lifecycle } from "./lifecycle.js";
import { EVENT_ORDER, SESSION_RULES } from "./rules/index.js";
import type { MethodEvent, RuleContext, RuleFilters, RuleHandlers, RuleEvent, Subject } from "./rules/rule.js";
import { other, SessionState, type CheckerContext, type Origin, type Pending } from "./session-state.js";
import type { Direction, TimelineMessage, WireId } from "./types.js";
import { allowsBatches, forbidsBatches } from "../mcp/versions.js";
import { requestProtocolVersion } from "../mcp/negotiation.js";

export type { CheckerContext, Origin } from "./session-state.js";

type Handlers = {
  [E in keyof RuleHandlers]-?: Array<NonNullable<RuleHandlers[E]>>;
};

/** Follows one MCP session; see the module comment. */
export class SessionChecker {
  /** Version each finished session was checked against. */
  readonly versions: string[] = [];
  private readonly s: SessionState;
  private on!: Handlers;
  /** The `request` and `notification` handlers by method ({@link MethodDispatch}). */
  private byMethod!: { readonly [E in MethodEvent]: MethodDispatch };
  /** The `response` handlers by pairing and kind ({@link responseTable}: index 2 × pairing + 1 for an error). */
  private byPairing!: MethodHandler[][];
  private readonly lifecycle: Lifecycle;
  private readonly current: Subject;
  /** The revision the message being checked is checked against when not the session's ({@link ownVersion}). */
  private ownRevision: string | undefined;

  /** @throws Error when `ctx.defaultVersion` (or the forced version) has no validators. */
  constructor(private readonly ctx: CheckerContext) {
    const s = (this.s = new SessionState(ctx));
    this.current = this.subject(s.facts, { line: 0 }, "c2s", "");
    this.lifecycle = new Lifecycle(s, (e) => {
      for (const h of this.on.version) h(e);
    });
    const start = ctx.forcedVersion ?? ctx.defaultVersion;
    if (!s.switchTo(start)) throw new Error(`no validators for protocol version ${start}`);
    // Stateless from the start when the forced version's schema is (see the module comment).
    s.era = ctx.forcedVersion !== undefined && s.statelessSchema() ? "stateless" : "unknown";
    this.createHandlers();
  }

  /** The rules' handlers for a new session, per event in {@link EVENT_ORDER}. */
  private createHandlers(): void {
    const s = this.s;
    const byId = new Map<string, RuleHandlers>();
    for (const rule of SESSION_RULES) {
      const meta = rule.meta;
      const context: RuleContext = {
        meta,
        session: s,
        report: (origin, dir, message, aboutId, method, pointer) => s.emit(meta, origin, dir, message, aboutId, method, pointer),
        check: (check, target, m, prefix, aboutId, method, reported) => {
          if (check.definition === "") return undefined; // envelope definition absent from a custom schema
          return s.reportIssues(s.issues(check, target, m.facts), check.definition, meta, m.origin, m.dir, prefix, aboutId, method, reported);
        },
      };
      byId.set(meta.id, rule.create(context));
    }
    const on = {} as Record<string, unknown[]>;
    for (const [event, ids] of Object.entries(EVENT_ORDER)) {
      on[event] = ids.map((id) => {
        const handler = (byId.get(id) as Record<string, unknown>)[event];
        if (typeof handler !== "function") throw new Error(`rule ${id} has no ${event} handler`);
        return handler;
      });
    }
    this.on = on as Handlers;
    const filtered = <E extends keyof RuleFilters<RuleEvent>>(event: E) => {
      const filters = new Map(SESSION_RULES.map((rule) => [rule.meta.id as string, (rule.only as RuleFilters<RuleEvent> | undefined)?.[event]]));
      return EVENT_ORDER[event].map((id, i) => ({ handler: this.on[event][i]! as MethodHandler, filter: filters.get(id) as RuleFilters<RuleEvent>[E] }));
    };
    this.byMethod = { request: new MethodDispatch(filtered("request")), notification: new MethodDispatch(filtered("notification")) };
    this.byPairing = responseTable(filtered("response"));
  }

  /**
   * The handlers of `event` for the message being checked (its method `method`), from the
   * standing of its method that {@link lookUp} found (`info`, `otherDirection` of the scratch).
   */
  private methodHandlers(event: MethodEvent, method: string): MethodHandler[] {
    const m = this.s.m;
    const info = m.info;
    const status = info !== undefined ? (info.def!.kind === event ? DEFINED : OTHER_KIND) : m.otherDirection ? OTHER_DIRECTION : UNKNOWN;
    return this.byMethod[event].handlers(status, method);
  }

  /** JSON-RPC messages seen (batch elements count one each). */
  get messages(): number {
    return this.s.messages;
  }

  /** Of {@link messages}, those that parsed as JSON (checked against a version). */
  get parsed(): number {
    return this.s.parsed;
  }

  /** Sessions started (1 + restarts). */
  get sessions(): number {
    return this.s.sessions;
  }

  /**
   * Signs that the input is an excerpt of a longer session (when `--partial` was not given): it
   * starts after the initialize request, or answers requests it does not hold.
   */
  get looksLikeExcerpt(): boolean {
    const s = this.s;
    // A session whose initialize request came first (or came at all, after an early message) is complete.
    if (s.initializeAt === 1) return false;
    return ((s.initializeFirstReported.c2s || s.initializeFirstReported.s2c) && s.initializeAt === 0) || s.answeredUnseen;
  }

  /** The version currently used for checks. */
  get protocolVersion(): string {
    return this.s.version;
  }

  /** Checks one parsed JSON value (a message or a batch) sent in `dir`. */
  message(value: unknown, origin: Origin, dir: Direction): void {
    if (Array.isArray(value)) {
      this.batch(value, origin, dir);
      return;
    }
    this.one(factsOf(value, this.s.facts), origin, dir, "");
  }

  /** Records a line that was not JSON (`json/parse-error`). `error` is the parser's message. */
  unparsable(raw: string, error: string, origin: Origin, dir: Direction): void {
    const s = this.s;
    s.messages++;
    s.s.nullIdBudget[dir]++;
    this.ctx.onMessage?.(this.timelineEntry(origin, dir, "invalid", undefined, undefined, raw));
    const m = this.subject(s.facts, origin, dir, "");
    for (const h of this.on.unparsable) h(m, raw, error);
  }

  /**
   * Records that a line of the input was dropped unread (`input/line-too-long`), so that a response
   * or progress notification referring to a request never seen, or a request left unanswered, is
   * not also reported: the dropped line may be that request or its response.
   */
  lost(): void {
    this.s.lostLines++;
  }

  /** Ends the session: reports requests still unanswered. Call once, at end of input. */
  finish(): void {
    this.versions.push(this.s.version);
    for (const h of this.on.end) h();
  }

  // ---------------------------------------------------------------------------------------------

  private subject(facts: MessageFacts, origin: Origin, dir: Direction, prefix: string, aboutId?: WireId): Subject {
    return { facts, origin, dir, prefix, aboutId };
  }

  private batch(items: unknown[], origin: Origin, dir: Direction): void {
    const s = this.s;
    s.clearScratch();
    const m = this.subject(s.facts, origin, dir, "");
    if (items.length === 0) {
      s.messages++;
      s.s.nullIdBudget[dir]++;
      for (const h of this.on.batch) h(m, items);
      return;
    }
    // With initialize inside, the version is not negotiated yet; the initialize finding says it all.
    const hasInitialize = items.some((item) => isObject(item) && item.method === "initialize");
    // 2024-11-05 defines no batch but forbids none: its messages "MUST follow the JSON-RPC 2.0
    // specification" (Basic › Messages), which has batches; the revisions after 2025-03-26 removed them.
    // In either, a peer that serves no batch may reject one as a whole (as `serve` does).
    if (!allowsBatches(s.speaks()) && !hasInitialize) {
      if (forbidsBatches(s.speaks())) s.m.batchRejected = true;
      // The peer may reject the whole batch with one null-id error (JSON-RPC 2.0 §5: Invalid Request).
      s.s.nullIdBudget[dir]++;
      const ids = items.flatMap((item) => (isObject(item) && typeof item.method === "string" && isId(item.id) ? [item.id] : []));
      if (s.s.rejectedBatches[dir].length < 1024) s.s.rejectedBatches[dir].push(ids);
    }
    for (const h of this.on.batch) h(m, items);
    items.forEach((item, i) => {
      for (const h of this.on.batchItem) h(m, item, i);
      this.one(factsOf(item, s.facts), origin, dir, `/${i}`);
    });
  }

  private one(f: MessageFacts, origin: Origin, dir: Direction, prefix: string): void {
    const s = this.s;
    s.messages++;
    s.parsed++;
    s.clearScratch();
    if (this.ctx.onMessage === undefined) {
      this.dispatch(f, origin, dir, prefix);
      return;
    }
    // (reported once checked: a response's entry then names the request it was paired with)
    const entry = this.timeline(f, origin, dir, prefix);
    s.answering = entry;
    this.dispatch(f, origin, dir, prefix);
    s.answering = undefined;
    this.ctx.onMessage(entry);
  }

  private dispatch(f: MessageFacts, origin: Origin, dir: Direction, prefix: string): void {
    // (one subject object for every message: handlers do not keep it)
    const m = this.current;
    m.facts = f;
    m.origin = origin;
    m.dir = dir;
    m.prefix = prefix;
    m.aboutId = wireId(f.id);
    const shape = f.shape;
    if (shape === SHAPE_REQUEST || shape === SHAPE_NOTIFICATION || shape === SHAPE_RESULT || shape === SHAPE_ERROR) {
      // A request another revision governs than the session's (and the response to it) is checked
      // against that revision's validators, then the session's are back.
      const own = shape === SHAPE_REQUEST ? this.ownVersion(f, dir) : shape !== SHAPE_NOTIFICATION && isId(f.id) ? this.s.s.inflight[other(dir)].get(f.id)?.version : undefined;
      const back = this.s.version;
      const switched = own !== undefined && own !== back && this.s.switchTo(own);
      this.ownRevision = switched ? own : undefined;
      try {
        for (const h of this.on.message) h(m);
        if (shape === SHAPE_REQUEST) this.request(m);
        else if (shape === SHAPE_NOTIFICATION) this.notification(m);
        else this.response(m, shape === SHAPE_ERROR);
      } finally {
        if (switched) this.s.switchTo(back);
        this.ownRevision = undefined;
      }
      return;
    }
    // Not a JSON-RPC message: the peer may answer it with an error carrying its id when the id is
    // readable (remembered in `invalidIds`), else with id null.
    const budget = this.s.s;
    if (shape === SHAPE_BOTH) {
      for (const h of this.on.invalid) h(m);
      this.settle(f.id, dir); // still an answer to its request: one defect, one finding
      return;
    }
    if (shape !== SHAPE_NOT_OBJECT && isId(f.id) && this.ctx.bidirectional) {
      if (budget.invalidIds[dir].size < 4096) budget.invalidIds[dir].set(f.id, 0);
    } else {
      budget.nullIdBudget[dir]++;
    }
    for (const h of this.on.invalid) h(m);
  }

  /**
   * The revision that governs request `f` when it is not the session's, as `serve` decides it
   * (src/mcp/negotiation.ts `requestProtocolVersion`): in a stateless session a client request
   * without a per-request version and no `initialize` yet, which `serve` answers only for `ping`,
   * under the newest initialize-based revision. Undefined otherwise (also with --protocol-version).
   */
  private ownVersion(f: MessageFacts, dir: Direction): string | undefined {
    const s = this.s;
    if (dir !== "c2s" || s.era !== "stateless" || this.ctx.forcedVersion !== undefined || s.metaVersion(f) !== undefined) return undefined;
    const decision = requestProtocolVersion(s.valueOf(f), undefined);
    return decision.ok && decision.era === "legacy" && decision.source === "pre-initialize" && s.initializeBased(decision.version) ? decision.version : undefined;
  }

  /** An invalid response sent in `dir` with request id `rawId`: its request is no longer in flight. */
  private settle(rawId: unknown, dir: Direction): void {
    if (!isId(rawId) || !this.ctx.bidirectional) return;
    const from = other(dir);
    const p = this.s.s.inflight[from].get(rawId);
    if (p === undefined) return;
    this.s.s.inflight[from].delete(rawId);
    if (p.progressToken !== undefined) this.s.s.progress[from].delete(p.progressToken);
  }

  /** The timeline entry of message `f` for `ctx.onMessage`: its kind, method, id and text. */
  private timeline(f: MessageFacts, origin: Origin, dir: Direction, prefix: string): TimelineMessage {
    const sh = f.shape;
    const kind = sh === SHAPE_REQUEST ? "request" : sh === SHAPE_NOTIFICATION ? "notification" : sh === SHAPE_ERROR ? "error" : sh === SHAPE_RESULT ? "result" : "invalid";
    const value = f.value;
    const method = sh === SHAPE_REQUEST || sh === SHAPE_NOTIFICATION ? f.method : undefined;
    const entry = this.timelineEntry(origin, dir, kind, method, wireId(f.id), JSON.stringify(value) ?? String(value));
    if (prefix !== "") entry.batch = prefix;
    return entry;
  }

  private timelineEntry(origin: Origin, dir: Direction, kind: TimelineMessage["kind"], method: string | undefined, id: WireId | undefined, text: string): TimelineMessage {
    const m: TimelineMessage = {
      file: this.ctx.file,
      line: origin.line,
      direction: dir,
      kind,
      text,
    };
    const session = this.s.sessionLabel();
    if (session !== undefined) m.session = session;
    if (origin.location !== undefined) m.location = origin.location;
    if (origin.ts !== undefined) m.ts = origin.ts;
    if (method !== undefined) m.method = method;
    if (id !== undefined) m.id = id;
    return m;
  }

  /** The method's definition in the version now checked against, for the rules. */
  private lookUp(dir: Direction, method: string): void {
    const s = this.s;
    const info = s.defs.method(dir, method);
    if (info.def !== undefined) s.m.info = info;
    else s.m.otherDirection = s.defs.method(other(dir), method).def !== undefined;
  }

  // --- requests --------------------------------------------------------------------------------

  private request(m: Subject): void {
    const s = this.s;
    const { facts: f, origin, dir } = m;
    const method = f.method;
    // A number that is not an integer (1.5, 1e400) is no MCP RequestId (the envelope check reports
    // it): the peer may reject the request with id null, as the bridge does, or with the id echoed,
    // so it is not taken in flight (no unanswered or duplicate finding about it).
    const fractional = typeof f.id === "number" && !Number.isInteger(f.id);
    const id = isId(f.id) && !fractional ? f.id : undefined;
    // An Invalid Request whose id cannot be trusted may be rejected with id null (JSON-RPC 2.0 §5).
    if (id === undefined || !f.jsonrpcOk) s.s.nullIdBudget[dir]++;
    if (fractional && this.ctx.bidirectional && s.s.invalidIds[dir].size < 4096) s.s.invalidIds[dir].set(f.id as number, 0);

    if (method === "initialize" && dir === "c2s") {
      if (s.initializeAt === 0) s.initializeAt = s.messages;
      // A retry after an initialize error is no restart: no session existed yet (ids start afresh).
      if (s.phase === "failed") s.s.used = { c2s: new IdRegistry(), s2c: new IdRegistry() };
      else if (s.phase !== "pre") this.restart(m, true);
      // After stateless requests, an initialize starts an initialize-based session (a dual-era
      // server serves both): the stateless part is a session of its own, with its version.
      else if (s.era === "stateless" && s.parsed > 1) this.restart(m, false);
      s.era = "legacy"; // also in a stateless session: initialize selects the legacy rules
      this.lifecycle.onInitializeRequest(f);
    } else if (s.defs.method(dir, method).def?.kind === "notification") {
      // A notification method sent with an id is a request (JSON-RPC 2.0 §4): the one finding is
      // its kind-mismatch, not a lifecycle finding about it as a request.
      s.m.initialized = method === "notifications/initialized" && dir === "c2s";
    } else {
      if (s.era === "unknown" && dir === "c2s") this.lifecycle.decideEra(m);
      // A server request the (stateless) default version does not define, as in server-side JSONL
      // that starts with sampling/createMessage: an initialize-based session.
      else if (s.era === "unknown" && s.defs.method(dir, method).def === undefined) s.becomeLegacy();
      s.m.lifecycle = s.era !== "stateless";
    }

    this.lookUp(dir, method);
    const notificationMethod = s.m.info?.def!.kind === "notification";
    s.m.notificationMethod = notificationMethod;
    const inflight = s.s.inflight[dir];
    const earlier = id === undefined ? undefined : inflight.get(id);
    s.m.earlier = earlier;
    const duplicate = this.ctx.bidirectional && earlier !== undefined;
    if (id !== undefined && !duplicate) s.m.firstLine = s.s.used[dir].firstLine(id);

    for (const h of this.methodHandlers("request", method)) h(m);

    if (s.m.initialized) this.initializedSent();
    if (id === undefined) return;
    if (duplicate)
      s.s.nullIdBudget[dir]++; // an invalid request the peer may reject with id null (the bridge does)
    else if (s.m.firstLine === undefined) s.s.used[dir].remember(id, origin.line);
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
      at: s.answering === undefined ? undefined : timelinePlace(s.answering),
      version: this.ownRevision,
    };
    if (f.token !== undefined) s.s.progress[dir].set(f.token, pending);
    if (earlier === undefined) inflight.set(pending);
    else if (s.s.duplicates[dir].size < 1024) s.s.duplicates[dir].set(id, pending);
  }

  /** Starts a new session at an initialize request; `reinitialize`: a second one (the rules may report it). */
  private restart(m: Subject, reinitialize: boolean): void {
    const s = this.s;
    if (reinitialize) for (const h of this.on.restart) h(m);
    // Calls in flight carry on into the new session: a server that negotiates again (`serve`)
    // answers each once. A restarted server (Claude logs, HAR) does not: they end unanswered.
    const carried = s.ctx.restartsExpected ? undefined : s.detachInflight();
    this.finish();
    s.sessions++;
    s.reset();
    if (carried) Object.assign(s.s, carried);
    s.switchTo(this.ctx.forcedVersion ?? this.ctx.defaultVersion);
    s.era = "legacy"; // restarted by an initialize request
    this.createHandlers();
  }

  /** The client's notifications/initialized (also sent with an id), once the rules have seen it. */
  private initializedSent(): void {
    const s = this.s;
    // One before the initialize request (initialize-first reports it) does not count as sent.
    if (s.phase !== "pre" || !this.ctx.bidirectional) s.initializedSent = true;
    if (!this.ctx.bidirectional && s.phase === "sent") s.phase = "answered";
  }

  // --- notifications ---------------------------------------------------------------------------

  private notification(m: Subject): void {
    const s = this.s;
    const { facts: f, dir } = m;
    const method = f.method;
    // A session whose capture starts after its initialize request: `notifications/initialized`
    // belongs to the initialize-based lifecycle (checked as such, not against a stateless default).
    // So is `initialize` sent without an id (a request method as a notification: kind-mismatch).
    if (s.era === "unknown" && dir === "c2s" && (method === "notifications/initialized" || method === "initialize")) s.becomeLegacy();
    this.lookUp(dir, method);
    s.m.initialized = method === "notifications/initialized" && dir === "c2s";
    const bidirectional = this.ctx.bidirectional;
    if (method === "notifications/cancelled" && bidirectional) {
      const requestId = f.paramsObject ? f.requestId : undefined;
      s.m.cancelled = isId(requestId) ? s.s.inflight[dir].get(requestId) : undefined;
    } else if (method === "notifications/progress" && bidirectional && f.paramsObject && f.token !== undefined) {
      s.m.progressToken = f.token;
      s.m.progressOf = s.s.progress[other(dir)].get(f.token);
    }

    for (const h of this.methodHandlers("notification", method)) h(m);

    if (s.m.info?.def!.kind === "request") s.s.nullIdBudget[dir]++; // an Invalid Request the peer may reject with id null (JSON-RPC 2.0 §5)
    s.s.notified[dir] = true;
    if (s.m.initialized) this.initializedSent();
    else if (method === "notifications/cancelled" && bidirectional) {
      const target = s.m.cancelled;
      const requestId = f.requestId;
      if (target !== undefined) {
        if (target.method !== "initialize") target.cancelled = true;
      } else if (dir === "s2c" && f.paramsObject && isId(requestId)) {
        // 2026-07-28 stdio: the server ends a subscriptions/listen stream by "cancelling" it.
        const listen = s.s.inflight.c2s.get(requestId);
        if (listen?.method === "subscriptions/listen") listen.cancelled = true;
      }
    } else if (s.m.progressOf !== undefined && typeof f.progress === "number") s.m.progressOf.last = f.progress;
  }

  // --- responses -------------------------------------------------------------------------------

  private response(m: Subject, isError: boolean): void {
    const s = this.s;
    const { facts: f, origin, dir } = m;
    const rawId = f.id;
    const from = other(dir);
    if (!this.ctx.bidirectional && dir === "s2c" && !isError) this.lifecycle.serverSideResult(m);
    else if (s.era === "unknown" && dir === "s2c" && !isError) this.lifecycle.unseenRequestResult(m);
    if (f.jsonrpcOk && isError && rawId === null) s.m.nullId = this.nullIdIssues(f);
    this.pair(rawId, from, isError);

    for (const h of this.byPairing[2 * PAIRING_INDEX.get(s.m.pairing)! + (isError ? 1 : 0)]!) h(m);

    const pending = s.m.pending;
    if (s.m.pairing !== "paired" || pending === undefined || pending.notificationMethod) return;
    // (a notification method sent with an id is a request, reported once as jsonrpc/kind-mismatch:
    // any answer to it, typically -32600, is fine, and has no result definition)
    if (pending.method === "initialize" && from === "c2s") {
      const result = isError ? undefined : s.valueOf(f)?.result;
      if (isError) s.phase = "failed";
      else if (isObject(result)) this.lifecycle.onInitializeResult(result, origin, dir);
      else s.phase = "answered";
    } else if (pending.method === "server/discover" && from === "c2s" && !isError && s.era === "stateless") {
      this.lifecycle.onDiscoverResult(s.valueOf(f)?.result);
    }
    if (!isError) for (const h of this.on.result) h(m);
  }

  /**
   * Pairs a response with what it answers (sets `pairing` and `pending` for the rules): a null-id
   * error takes one of the invalid messages of the other side it may answer (a rejected batch's
   * requests are then no longer in flight); an id takes the request in flight with it (or the
   * duplicate that reused it), or an invalid message that carried it.
   */
  private pair(rawId: unknown, from: Direction, isError: boolean): void {
    const s = this.s;
    const t = s.s;
    if (rawId === null || rawId === undefined) {
      if (isError && t.nullIdBudget[from] > 0) {
        s.m.pairing = "budget";
        t.nullIdBudget[from]--;
        // A batch rejected as a whole: its requests get no other answer. (Other invalid messages
        // are taken to be answered first: a batch counts as rejected once nothing else is left.)
        const batches = t.rejectedBatches[from];
        const batch = t.nullIdBudget[from] < batches.length ? batches.shift() : undefined;
        if (batch !== undefined && this.ctx.bidirectional) {
          for (const id of batch) {
            const p = t.inflight[from].get(id);
            if (p === undefined) continue;
            t.inflight[from].delete(id);
            if (p.progressToken !== undefined) t.progress[from].delete(p.progressToken);
          }
        }
      } else if (!isError) s.m.pairing = "null-result";
      // (with a dropped line, it may be the rejection of that line; in an excerpt, of one before it: not reported)
      else if (this.ctx.bidirectional && s.lostLines === 0 && this.ctx.partial !== true) s.m.pairing = "null-error";
      return;
    }
    // (a bad id type: the envelope check reports it; one direction: the requests are not visible)
    if (!isId(rawId) || !this.ctx.bidirectional) return;
    const inflight = t.inflight[from];
    let pending = inflight.get(rawId);
    let duplicate = false;
    if (pending === undefined && t.duplicates[from].size > 0) {
      pending = t.duplicates[from].get(rawId); // the earlier request was answered: this answers the duplicate
      duplicate = pending !== undefined && t.duplicates[from].delete(rawId);
    }
    if (pending === undefined) {
      // JSON-RPC lets an error response echo the id it could read from an invalid request.
      if (isError && t.invalidIds[from].delete(rawId)) return;
      const firstLine = t.used[from].firstLine(rawId);
      if (firstLine === undefined && (s.lostLines > 0 || this.ctx.partial === true)) return; // may answer a dropped line, or a request before the excerpt
      if (firstLine === undefined) s.answeredUnseen = true;
      s.m.firstLine = firstLine;
      s.m.pairing = firstLine === undefined ? "unseen" : "answered";
      return;
    }
    if (!duplicate) inflight.delete(rawId);
    if (pending.progressToken !== undefined) t.progress[from].delete(pending.progressToken);
    if (s.answering !== undefined && pending.at !== undefined) s.answering.answers = pending.at;
    s.m.pairing = "paired";
    s.m.pending = pending;
  }

  /**
   * An error response with `id: null` (JSON-RPC 2.0 §5.1: the answer to a request that could not
   * be parsed or whose id could not be read). MCP schemas type the id as string | integer, so the
   * envelope check rejects it: when the message passes the envelope with any valid id in place of
   * the null, it is otherwise well-formed ("null-only", `jsonrpc/null-id-error`); otherwise its
   * envelope issues (`schema/error-response`). Undefined when it passes.
   */
  private nullIdIssues(f: MessageFacts): SessionState["m"]["nullId"] {
    const s = this.s;
    const check = s.defs.envelopeChecks.error;
    const issues = s.issues(check, "message", f);
    if (issues === null || issues.length === 0) return undefined;
    const value = s.valueOf(f);
    const withId = value === undefined ? undefined : s.issuesOfValue(check.definition, { ...value, id: 0 });
    return withId !== undefined && (withId === null || withId.length === 0) ? "null-only" : issues;
  }
}

/** Where `entry` sits in the timeline: what a response to it `answers`. */
function timelinePlace(entry: TimelineMessage): TimelineMessage["answers"] {
  const at: NonNullable<TimelineMessage["answers"]> = { line: entry.line };
  if (entry.location !== undefined) at.location = entry.location;
  if (entry.batch !== undefined) at.batch = entry.batch;
  return at;
}

/** The id as findings carry it: string, number or null; undefined for absent or other values. */
function wireId(raw: unknown): WireId | undefined {
  return isId(raw) || raw === null ? raw : undefined;
}
