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
 * Directions: a request sent `c2s` is answered by an `s2c` response and vice versa. In
 * unidirectional input (plain JSONL) only the rules that need one direction run: per-message
 * schema checks, request-id reuse, initialize-first (c2s), kind mismatch and batches; responses
 * get envelope checks only (their requests are not visible).
 */
import { hasCapability, requiredCapability } from "./capabilities.js";
import { RULES, type RuleId } from "./rules.js";
import { ValidateUsageError, type Direction, type Finding, type ProtocolValidators, type ValidatorResolver, type WireId } from "./types.js";
import type { SchemaIssue } from "../mcp/validation.js";

/** Where a message came from in the input file. */
export interface Origin {
  line: number;
  /** HAR only: which part of the entry ("request", "response", "response event 3"). */
  location?: string;
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
  resolve: ValidatorResolver;
  /** Schema issues reported per message before the rest are summarised. */
  maxIssues: number;
  emit: (finding: Finding) => void;
}

type Id = string | number;
type Json = Record<string, unknown>;
type MessageDef = NonNullable<ReturnType<ProtocolValidators["messageDefinition"]>>;

interface Pending {
  line: number;
  location?: string;
  method: string;
  cancelled: boolean;
  /** A notification method sent with an id: any response to it answers a notification. */
  notificationMethod: boolean;
  progressToken?: Id;
}

interface ProgressState {
  requestId: Id;
  last?: number;
}

type Phase = "pre" | "sent" | "answered" | "failed";

/** Most ids remembered per direction for `session/reused-request-id` (bounds memory). */
const MAX_REMEMBERED_IDS = 1 << 20;

const other = (d: Direction): Direction => (d === "c2s" ? "s2c" : "c2s");
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is Id => typeof v === "string" || typeof v === "number";
const showId = (id: unknown): string => JSON.stringify(id) ?? String(id);
const arrow = (d: Direction): string => (d === "c2s" ? "client→server" : "server→client");

/** Follows one MCP session; see the module comment. */
export class SessionChecker {
  /** JSON-RPC messages seen (batch elements count one each). */
  messages = 0;
  /** Sessions started (1 + restarts). */
  sessions = 1;
  /** Version each finished session was checked against. */
  readonly versions: string[] = [];

  private v!: ProtocolValidators;
  private version = "";
  /** The version the session speaks (forced, negotiated or requested), for version-dependent rules. */
  private spoken: string | undefined;
  private phase: Phase = "pre";
  private initializedSent = false;
  private initializedMissingReported = false;
  private initializeFirstReported = { c2s: false, s2c: false };
  private serverCaps: Json | undefined;
  private clientCaps: Json | undefined;
  private inflight = { c2s: new Map<Id, Pending>(), s2c: new Map<Id, Pending>() };
  private used = { c2s: new Map<Id, number>(), s2c: new Map<Id, number>() };
  private progress = { c2s: new Map<Id, ProgressState>(), s2c: new Map<Id, ProgressState>() };
  /** Invalid messages per sender that a null-id error response may legitimately answer. */
  private nullIdBudget = { c2s: 0, s2c: 0 };
  private notified = { c2s: false, s2c: false };
  private envelope = { request: "", notification: "", result: "", error: "" };

  /** @throws Error when `ctx.defaultVersion` (or the forced version) has no validators. */
  constructor(private readonly ctx: CheckerContext) {
    const start = ctx.forcedVersion ?? ctx.defaultVersion;
    if (!this.switchTo(start)) throw new Error(`no validators for protocol version ${start}`);
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
    this.one(value, origin, dir, "");
  }

  /** Records a line that was not JSON (`json/parse-error`). `error` is the parser's message. */
  unparsable(raw: string, error: string, origin: Origin, dir: Direction): void {
    this.messages++;
    this.nullIdBudget[dir]++;
    const excerpt = raw.length > 80 ? `${raw.slice(0, 77)}...` : raw;
    this.emit("json/parse-error", origin, dir, `not valid JSON (${error}): ${JSON.stringify(excerpt)}`);
  }

  /** Ends the session: reports requests still unanswered. Call once, at end of input. */
  finish(): void {
    this.versions.push(this.version);
    if (!this.ctx.bidirectional) return;
    for (const dir of ["c2s", "s2c"] as const) {
      for (const [id, p] of this.inflight[dir]) {
        if (p.cancelled || p.notificationMethod) continue;
        this.emit(
          "session/unanswered-request",
          p.location === undefined ? { line: p.line } : { line: p.line, location: p.location },
          dir,
          `${arrow(dir)} request ${p.method} id ${showId(id)} was never answered`,
          { id, method: p.method },
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
    if (speaks !== "2025-03-26" && !hasInitialize) {
      this.emit(
        "session/batch-not-allowed",
        origin,
        dir,
        `JSON-RPC batch of ${items.length} messages; batches are only allowed in protocol version 2025-03-26 (session: ${speaks})`,
      );
    }
    items.forEach((item, i) => {
      if (isObject(item) && item.method === "initialize") {
        this.emit("session/batch-not-allowed", origin, dir, "the initialize request MUST NOT be part of a JSON-RPC batch", {
          pointer: `/${i}`,
          method: "initialize",
          ...(isId(item.id) ? { id: item.id } : {}),
        });
      }
      this.one(item, origin, dir, `/${i}`);
    });
  }

  private one(msg: unknown, origin: Origin, dir: Direction, prefix: string): void {
    this.messages++;
    if (!isObject(msg)) {
      this.nullIdBudget[dir]++;
      this.emit("jsonrpc/invalid", origin, dir, `a JSON-RPC message must be an object, got ${kindOf(msg)}`, ptr(prefix));
      return;
    }
    const jsonrpcOk = msg.jsonrpc === "2.0";
    if ("method" in msg) {
      if (typeof msg.method !== "string") {
        if (!isId(msg.id)) this.nullIdBudget[dir]++;
        this.emit("jsonrpc/invalid", origin, dir, `"method" must be a string, got ${kindOf(msg.method)}`, {
          pointer: `${prefix}/method`,
        });
        return;
      }
      if (!jsonrpcOk) this.badVersion(msg, origin, dir, prefix, msg.method);
      if ("id" in msg && msg.id !== undefined) this.request(msg, msg.method, origin, dir, prefix, jsonrpcOk);
      else this.notification(msg, msg.method, origin, dir, prefix, jsonrpcOk);
      return;
    }
    const hasResult = "result" in msg;
    const hasError = "error" in msg;
    if (hasResult && hasError) {
      this.emit("jsonrpc/invalid", origin, dir, 'a response must not contain both "result" and "error"', {
        pointer: prefix,
        ...(isId(msg.id) ? { id: msg.id } : {}),
      });
      return;
    }
    if (!hasResult && !hasError) {
      if (!isId(msg.id)) this.nullIdBudget[dir]++;
      this.emit("jsonrpc/invalid", origin, dir, 'neither a request/notification ("method") nor a response ("result"/"error")', {
        pointer: prefix,
        ...(isId(msg.id) ? { id: msg.id } : {}),
      });
      return;
    }
    if (!jsonrpcOk) this.badVersion(msg, origin, dir, prefix, undefined);
    this.response(msg, origin, dir, prefix, hasError, jsonrpcOk);
  }

  private badVersion(msg: Json, origin: Origin, dir: Direction, prefix: string, method: string | undefined): void {
    this.emit("jsonrpc/invalid", origin, dir, `"jsonrpc" must be "2.0", got ${showId(msg.jsonrpc)}`, {
      pointer: `${prefix}/jsonrpc`,
      ...(method === undefined ? {} : { method }),
      ...(isId(msg.id) ? { id: msg.id } : {}),
    });
  }

  // --- requests --------------------------------------------------------------------------------

  private request(msg: Json, method: string, origin: Origin, dir: Direction, prefix: string, jsonrpcOk: boolean): void {
    const rawId = msg.id as unknown;
    const id = isId(rawId) ? rawId : undefined;
    const about = { method, ...(isId(rawId) || rawId === null ? { id: rawId as WireId } : {}) };

    if (method === "initialize" && dir === "c2s") {
      if (this.phase !== "pre") this.restart(origin);
      this.onInitializeRequest(msg);
    } else {
      this.lifecycleRequest(method, origin, dir, about);
    }

    if (jsonrpcOk) this.check(this.envelope.request, msg, "schema/envelope", origin, dir, prefix, about);
    const def = this.definition(dir, method, origin, about);
    let notificationMethod = false;
    if (def !== undefined) {
      if (def.kind === "notification") {
        notificationMethod = true;
        this.emit("jsonrpc/kind-mismatch", origin, dir, `${method} is a notification but was sent with id ${showId(rawId)}`, {
          ...about,
          pointer: `${prefix}/id`,
        });
      } else {
        this.check(def.definition, msg, "schema/request", origin, dir, prefix, about);
      }
    }
    if (!notificationMethod) this.capability(dir, "request", method, origin, about);

    if (id === undefined) return;
    const inflight = this.inflight[dir];
    const earlier = inflight.get(id);
    if (this.ctx.bidirectional && earlier !== undefined) {
      this.emit(
        "session/duplicate-request-id",
        origin,
        dir,
        `request id ${showId(id)} reused while the ${earlier.method} request with that id (line ${earlier.line}) is still in flight`,
        about,
      );
    } else {
      const firstLine = this.used[dir].get(id);
      if (firstLine !== undefined) {
        this.emit(
          "session/reused-request-id",
          origin,
          dir,
          `request id ${showId(id)} was already used by the ${arrow(dir)} side at line ${firstLine}`,
          about,
        );
      } else if (this.used[dir].size < MAX_REMEMBERED_IDS) {
        this.used[dir].set(id, origin.line);
      }
    }
    if (!this.ctx.bidirectional) return;
    const pending: Pending = { line: origin.line, method, cancelled: false, notificationMethod };
    if (origin.location !== undefined) pending.location = origin.location;
    const params = msg.params;
    if (isObject(params) && isObject(params._meta) && isId(params._meta.progressToken)) {
      pending.progressToken = params._meta.progressToken;
      this.progress[dir].set(params._meta.progressToken, { requestId: id });
    }
    inflight.set(id, pending);
  }

  private lifecycleRequest(method: string, origin: Origin, dir: Direction, about: Partial<Finding>): void {
    if (this.phase === "pre") {
      this.initializeFirst(origin, dir, `request ${method}`, about);
      return;
    }
    if (!this.ctx.bidirectional || method === "ping") return;
    if (dir === "c2s") {
      if (this.phase === "sent") {
        this.emit("session/premature-request", origin, dir, `client sent ${method} before the server answered initialize`, about);
      } else if (this.phase === "answered" && !this.initializedSent && !this.initializedMissingReported) {
        this.initializedMissingReported = true;
        this.emit(
          "session/initialized-after-result",
          origin,
          dir,
          `client sent ${method} after the initialize result without sending notifications/initialized first`,
          about,
        );
      }
    } else if (!this.initializedSent && this.phase !== "failed") {
      this.emit("session/premature-request", origin, dir, `server sent ${method} before the client's notifications/initialized`, about);
    }
  }

  private initializeFirst(origin: Origin, dir: Direction, what: string, about: Partial<Finding>): void {
    if (!this.ctx.bidirectional && dir === "s2c") return;
    if (this.initializeFirstReported[dir]) return;
    this.initializeFirstReported[dir] = true;
    this.emit(
      "session/initialize-first",
      origin,
      dir,
      dir === "c2s"
        ? `client sent ${what} before the initialize request (later ones are not reported)`
        : `server sent ${what} before the client's initialize request (later ones are not reported)`,
      about,
    );
  }

  private onInitializeRequest(msg: Json): void {
    this.phase = "sent";
    const params = isObject(msg.params) ? msg.params : undefined;
    this.clientCaps = params !== undefined && isObject(params.capabilities) ? params.capabilities : undefined;
    const requested = params?.protocolVersion;
    if (this.ctx.forcedVersion === undefined && typeof requested === "string") {
      this.spoken = requested;
      if (requested !== this.version) this.switchTo(requested);
    }
  }

  // --- notifications ---------------------------------------------------------------------------

  private notification(msg: Json, method: string, origin: Origin, dir: Direction, prefix: string, jsonrpcOk: boolean): void {
    const about = { method };
    if (this.phase === "pre") this.initializeFirst(origin, dir, `notification ${method}`, about);
    if (jsonrpcOk) this.check(this.envelope.notification, msg, "schema/envelope", origin, dir, prefix, about);
    const def = this.definition(dir, method, origin, about);
    if (def !== undefined) {
      if (def.kind === "request") {
        this.emit("jsonrpc/kind-mismatch", origin, dir, `${method} is a request but was sent without an id`, {
          ...about,
          pointer: prefix,
        });
      } else {
        this.check(def.definition, msg, "schema/notification", origin, dir, prefix, about);
      }
    }
    this.notified[dir] = true;
    const params = isObject(msg.params) ? msg.params : undefined;

    if (method === "notifications/initialized" && dir === "c2s") {
      if (this.ctx.bidirectional && this.phase === "sent") {
        this.emit("session/initialized-after-result", origin, dir, "notifications/initialized sent before the initialize result", about);
      }
      this.initializedSent = true;
      if (!this.ctx.bidirectional && this.phase === "sent") this.phase = "answered";
    } else if (method === "notifications/cancelled" && this.ctx.bidirectional) {
      const requestId = params?.requestId;
      const pending = isId(requestId) ? this.inflight[dir].get(requestId) : undefined;
      if (pending !== undefined) {
        if (pending.method === "initialize") {
          // Invalid cancellation: the receiver must ignore it, so answering stays correct.
          this.emit("session/cancel-initialize", origin, dir, "the initialize request MUST NOT be cancelled", {
            ...about,
            id: requestId as Id,
          });
        } else {
          pending.cancelled = true;
        }
      }
    } else if (method === "notifications/progress" && this.ctx.bidirectional && params !== undefined) {
      this.progressNotification(params, origin, dir, about);
    }
    this.capability(dir, "notification", method, origin, about);
  }

  private progressNotification(params: Json, origin: Origin, dir: Direction, about: Partial<Finding>): void {
    const token = params.progressToken;
    if (!isId(token)) return; // the schema check reports it
    const state = this.progress[other(dir)].get(token);
    if (state === undefined) {
      this.emit(
        "session/unknown-progress-token",
        origin,
        dir,
        `progress token ${showId(token)} belongs to no in-flight ${arrow(other(dir))} request`,
        { ...about, pointer: "/params/progressToken" },
      );
      return;
    }
    const value = params.progress;
    if (typeof value !== "number") return;
    if (state.last !== undefined && !(value > state.last)) {
      this.emit(
        "session/progress-not-increasing",
        origin,
        dir,
        `progress ${value} for token ${showId(token)} does not increase (previous ${state.last})`,
        { ...about, pointer: "/params/progress", id: state.requestId },
      );
    }
    state.last = value;
  }

  // --- responses -------------------------------------------------------------------------------

  private response(msg: Json, origin: Origin, dir: Direction, prefix: string, isError: boolean, jsonrpcOk: boolean): void {
    const rawId = msg.id;
    const from = other(dir);
    const about: Partial<Finding> = isId(rawId) || rawId === null ? { id: rawId } : {};
    if (jsonrpcOk) {
      this.check(
        isError ? this.envelope.error : this.envelope.result,
        msg,
        isError ? "schema/error-response" : "schema/envelope",
        origin,
        dir,
        prefix,
        about,
      );
    }

    if (rawId === null || rawId === undefined) {
      if (isError && this.nullIdBudget[from] > 0) {
        this.nullIdBudget[from]--;
        return;
      }
      if (!isError) {
        this.emit(
          "session/response-to-notification",
          origin,
          dir,
          "a result without a request id can only answer a notification; notifications MUST NOT be answered",
          about,
        );
      } else if (this.ctx.bidirectional) {
        if (this.notified[from]) {
          this.emit(
            "session/response-to-notification",
            origin,
            dir,
            `error response with a null id, but the ${arrow(from)} side sent no unparseable or invalid message to reject; notifications MUST NOT be answered`,
            about,
          );
        } else {
          this.emit("session/unmatched-response", origin, dir, "error response with a null id answers no invalid message", about);
        }
      }
      return;
    }
    if (!isId(rawId)) return; // the envelope check reports the bad id type

    if (!this.ctx.bidirectional) {
      if (dir === "s2c" && !isError && this.phase !== "answered" && looksLikeInitializeResult(msg.result)) {
        this.onInitializeResult(msg.result as Json, origin, dir);
      }
      return;
    }

    const pending = this.inflight[from].get(rawId);
    if (pending === undefined) {
      const firstLine = this.used[from].get(rawId);
      this.emit(
        "session/unmatched-response",
        origin,
        dir,
        firstLine !== undefined
          ? `response id ${showId(rawId)}: the ${arrow(from)} request with this id (line ${firstLine}) was already answered`
          : `response id ${showId(rawId)} matches no ${arrow(from)} request`,
        about,
      );
      return;
    }
    this.inflight[from].delete(rawId);
    if (pending.progressToken !== undefined) this.progress[from].delete(pending.progressToken);
    const withMethod = { ...about, method: pending.method };
    if (pending.notificationMethod) {
      this.emit(
        "session/response-to-notification",
        origin,
        dir,
        `response to ${pending.method} (line ${pending.line}), a notification method sent with an id`,
        withMethod,
      );
      return;
    }
    if (pending.cancelled) {
      this.emit(
        "session/answered-after-cancel",
        origin,
        dir,
        `response to ${pending.method} (line ${pending.line}) after its sender cancelled it`,
        withMethod,
      );
    }
    if (pending.method === "initialize" && from === "c2s") {
      if (isError) this.phase = "failed";
      else if (isObject(msg.result)) this.onInitializeResult(msg.result, origin, dir);
      else this.phase = "answered";
    }
    if (!isError) {
      const def = this.v.messageDefinition(from, pending.method);
      if (def?.resultDefinition !== undefined && this.v.has(def.resultDefinition)) {
        this.check(def.resultDefinition, msg.result, "schema/result", origin, dir, `${prefix}/result`, withMethod);
      }
    }
  }

  private onInitializeResult(result: Json, origin: Origin, dir: Direction): void {
    this.phase = "answered";
    this.serverCaps = isObject(result.capabilities) ? result.capabilities : undefined;
    const negotiated = result.protocolVersion;
    if (typeof negotiated !== "string") return; // the result check reports it
    const about = { method: "initialize" };
    if (this.ctx.forcedVersion !== undefined) {
      if (negotiated !== this.ctx.forcedVersion) {
        this.emit(
          "session/version-mismatch",
          origin,
          dir,
          `the session negotiated protocol version ${negotiated}; checking against --protocol-version ${this.ctx.forcedVersion}`,
          { ...about, pointer: "/result/protocolVersion" },
        );
      }
      return;
    }
    this.spoken = negotiated;
    if (negotiated !== this.version && !this.switchTo(negotiated)) {
      this.emit(
        "session/unsupported-version",
        origin,
        dir,
        `no validators for negotiated protocol version ${negotiated}; checking against ${this.version}`,
        { ...about, pointer: "/result/protocolVersion" },
      );
    }
  }

  // --- shared helpers --------------------------------------------------------------------------

  private restart(origin: Origin): void {
    if (!this.ctx.restartsExpected) {
      this.emit(
        "session/reinitialize",
        origin,
        "c2s",
        "second initialize request; checking continues as a new session",
        { method: "initialize" },
      );
    }
    this.finish();
    this.sessions++;
    this.phase = "pre";
    this.initializedSent = false;
    this.initializedMissingReported = false;
    this.initializeFirstReported = { c2s: false, s2c: false };
    this.serverCaps = undefined;
    this.clientCaps = undefined;
    this.inflight = { c2s: new Map(), s2c: new Map() };
    this.used = { c2s: new Map(), s2c: new Map() };
    this.progress = { c2s: new Map(), s2c: new Map() };
    this.nullIdBudget = { c2s: 0, s2c: 0 };
    this.notified = { c2s: false, s2c: false };
    this.spoken = undefined;
    this.switchTo(this.ctx.forcedVersion ?? this.ctx.defaultVersion);
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
    this.version = version;
    const pick = (...names: string[]): string => names.find((n) => v.has(n)) ?? "";
    this.envelope = {
      request: pick("JSONRPCRequest"),
      notification: pick("JSONRPCNotification"),
      result: pick("JSONRPCResultResponse", "JSONRPCResponse"),
      error: pick("JSONRPCErrorResponse", "JSONRPCError"),
    };
    return true;
  }

  private definition(dir: Direction, method: string, origin: Origin, about: Partial<Finding>): MessageDef | undefined {
    const def = this.v.messageDefinition(dir, method);
    if (def !== undefined) return def;
    if (this.v.messageDefinition(other(dir), method) !== undefined) {
      this.emit("session/wrong-direction", origin, dir, `${method} is only defined ${arrow(other(dir))}, but was sent ${arrow(dir)}`, about);
    } else {
      this.emit("schema/unknown-method", origin, dir, `method ${method} is not defined by the schema for protocol version ${this.version}`, about);
    }
    return undefined;
  }

  private capability(dir: Direction, kind: "request" | "notification", method: string, origin: Origin, about: Partial<Finding>): void {
    const req = requiredCapability(dir, kind, method, this.speaks());
    if (req === undefined) return;
    const caps = req.side === "server" ? this.serverCaps : this.clientCaps;
    if (caps === undefined || hasCapability(caps, req)) return;
    const what = `${req.side} capability ${req.path.join(".")}`;
    if (kind === "request") {
      this.emit("session/missing-capability", origin, dir, `${method} needs the ${what}, which the initialize exchange did not advertise`, about);
    } else {
      this.emit("session/unadvertised-notification", origin, dir, `${method} sent without advertising the ${what}`, about);
    }
  }

  private check(
    definition: string,
    data: unknown,
    rule: RuleId,
    origin: Origin,
    dir: Direction,
    prefix: string,
    about: Partial<Finding>,
  ): void {
    if (definition === "") return; // envelope definition absent from a custom schema
    let issues: SchemaIssue[] | null;
    try {
      issues = this.v.validate(definition, data);
    } catch (err) {
      // Unknown definition or a runtime-compiled schema that does not compile: not the traffic's fault.
      throw new ValidateUsageError(
        `schema definition ${definition} (protocol ${this.version}) is unusable: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    if (issues === null || issues.length === 0) return;
    const max = Math.max(1, this.ctx.maxIssues);
    const shown = Math.min(issues.length, max);
    for (let i = 0; i < shown; i++) {
      const issue = issues[i]!;
      let message = `${issue.definition || definition}: ${issue.pointer === "" ? "(root)" : issue.pointer} ${issue.reason}`;
      if (i === shown - 1 && issues.length > shown) message += ` (+${issues.length - shown} more issues)`;
      this.emit(rule, origin, dir, message, { ...about, pointer: prefix + issue.pointer });
    }
  }

  private emit(rule: RuleId, origin: Origin, dir: Direction, message: string, extra: Partial<Finding> = {}): void {
    // Built in the documented key order (file, line, direction, id, method, rule, ...): the JSON
    // reporter prints keys in insertion order.
    const finding: Finding = {
      file: this.ctx.file,
      line: origin.line,
      direction: dir,
      ...(extra.id !== undefined ? { id: extra.id } : {}),
      ...(extra.method !== undefined ? { method: extra.method } : {}),
      rule,
      severity: RULES[rule].severity,
      ...(extra.pointer !== undefined ? { pointer: extra.pointer } : {}),
      message,
    };
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

function ptr(prefix: string): Partial<Finding> {
  return prefix === "" ? {} : { pointer: prefix };
}

function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v;
}

function looksLikeInitializeResult(result: unknown): boolean {
  return isObject(result) && typeof result.protocolVersion === "string" && isObject(result.capabilities) && isObject(result.serverInfo);
}
