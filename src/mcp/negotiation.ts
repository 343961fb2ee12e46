/**
 * Per-request protocol negotiation for a dual-era MCP server: the stateless ("modern") revisions,
 * 2026-07-28 and later, and the initialize-based ("legacy") ones, 2025-11-25 and earlier, served
 * from one stdio process. Pure functions over parsed JSON; the bridge (src/bridge/session.ts)
 * calls them for every inbound message and result. Nothing here keeps state or does I/O.
 *
 * Spec references (MCP 2026-07-28, https://modelcontextprotocol.io/specification/2026-07-28):
 * - Basic › Versioning and Compatibility: "Protocol Version Negotiation" (every request names its
 *   version; an unsupported one gets UnsupportedProtocolVersionError), "Backward Compatibility
 *   with Initialization-Based Versions" (terminology modern/legacy/dual-era; a dual-era server
 *   serves a request carrying per-request `_meta` statelessly, and an `initialize` request selects
 *   legacy semantics scoped to the stdio process; both eras may be served concurrently).
 * - Basic › Overview › `_meta` › "Per-request protocol fields" (protocolVersion and
 *   clientCapabilities are required on every request; a request missing one is malformed and MUST
 *   be rejected with -32602), "Per-response protocol fields" (serverInfo SHOULD be in every
 *   result's `_meta`), "Error Codes" (-32020 … -32022).
 * - Basic › Overview › "ResultType" (every result MUST carry `resultType`).
 * - Server › Discovery (`server/discover`, which servers MUST implement) and Server › Utilities ›
 *   Caching (`ttlMs`/`cacheScope`, required on the results of the cacheable methods).
 * - Server › Utilities › Logging (no `notifications/message` for a request without
 *   `io.modelcontextprotocol/logLevel`).
 * Legacy revisions: MCP 2025-06-18 Basic › Lifecycle › "Version Negotiation" and "Initialization"
 * (only pings before the initialize response).
 */
import type { ClientCapabilities, DiscoverResult, Implementation, LoggingLevel, ServerCapabilities } from "../gen/mcp/2026-07-28/types.js";
import { ErrorCode, McpErrorCode, type JsonRpcErrorObject } from "../jsonrpc/errors.js";
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  DEFAULT_VERSION_SUPPORT,
  isModernProtocolVersion,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  type ProtocolVersionSupport,
} from "./versions.js";

// Versions, eras and `_meta` keys are owned by ./versions.ts; re-exported for this module's callers.
export * from "./versions.js";

// ---------------------------------------------------------------------------------------------
// constants

// Error codes are owned by src/jsonrpc/errors.ts; McpErrorCode is re-exported for this module's callers.
export { McpErrorCode };

/** Cache scope of a cacheable result (Server › Utilities › Caching). */
export type CacheScope = "public" | "private";

/**
 * Methods whose 2026-07-28 results are cacheable and therefore MUST carry `ttlMs` and
 * `cacheScope` (changelog 2026-07-28, minor change 5, and Server › Discovery: "This operation
 * supports caching"). The test suite checks this list against the schema's `required` members.
 */
export const CACHEABLE_METHODS: ReadonlySet<string> = new Set(["prompts/list", "resources/list", "resources/read", "resources/templates/list", "server/discover", "tools/list"]);

/** Log severities in increasing order (RFC 5424 §6.2.1, as MCP's LoggingLevel). */
const LOG_SEVERITY: readonly LoggingLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

// ---------------------------------------------------------------------------------------------
// version negotiation

/**
 * The version a dual-era server answers in `InitializeResult.protocolVersion`. Legacy rule (MCP
 * 2025-06-18 Lifecycle › "Version Negotiation"): the client's version when the server supports
 * it, otherwise another supported one, which SHOULD be the latest. `initialize` selects legacy
 * semantics (2026-07-28 Versioning › "Backward Compatibility"), so only legacy versions qualify:
 * a client asking for a modern revision (or anything unknown) is offered the newest legacy one.
 *
 * Note: `negotiateProtocolVersion` in ./versions.ts answers with the newest version of any era,
 * which would put a modern revision in an InitializeResult once 2026-07-28 is generated.
 *
 * @param requested `initialize.params.protocolVersion` as received (any JSON value)
 * @param support versions on offer (default: the generated ones)
 * @returns a member of `support.legacy`
 * @throws RangeError when `support.legacy` is empty (a modern-only server must reject initialize)
 */
export function negotiateInitializeVersion(requested: unknown, support: ProtocolVersionSupport = DEFAULT_VERSION_SUPPORT): string {
  if (typeof requested === "string" && support.legacy.includes(requested)) return requested;
  const newest = support.legacy[0];
  if (newest === undefined) throw new RangeError("no initialize-based (legacy) protocol version is supported");
  return newest;
}

// ---------------------------------------------------------------------------------------------
// errors

/** The `error` member of a JSON-RPC error response, ready for `errorResponse(id, code, message, data)`. */
export type McpErrorObject = JsonRpcErrorObject;

/**
 * The error of an `UnsupportedProtocolVersionError` response (2026-07-28 Versioning › "Protocol
 * Version Negotiation"; schema `UnsupportedProtocolVersionError`): code -32022,
 * `data: { requested, supported }`. The client SHOULD retry with a version from `supported`.
 *
 * @param requested the version the request named
 * @param supported the versions a client may name per request (default: the modern ones we serve)
 */
export function unsupportedProtocolVersionError(requested: string, supported: readonly string[] = DEFAULT_VERSION_SUPPORT.modern): McpErrorObject {
  return {
    code: McpErrorCode.UnsupportedProtocolVersion,
    message: `Unsupported protocol version: ${JSON.stringify(requested)} (supported: ${supported.join(", ") || "none"})`,
    data: { requested, supported: [...supported] },
  };
}

/**
 * The error of a `MissingRequiredClientCapabilityError` response (2026-07-28 Basic › `_meta`:
 * a server MUST NOT rely on capabilities the request did not declare): code -32021,
 * `data.requiredCapabilities` listing what the client would have to declare.
 *
 * @param requiredCapabilities the missing capabilities, e.g. `{ elicitation: {} }`
 * @param message one sentence for `error.message` (a default names the capabilities)
 */
export function missingRequiredClientCapabilityError(requiredCapabilities: ClientCapabilities, message?: string): McpErrorObject {
  return {
    code: McpErrorCode.MissingRequiredClientCapability,
    message: message ?? `Missing required client capability: ${Object.keys(requiredCapabilities).join(", ") || "(none named)"}`,
    data: { requiredCapabilities },
  };
}

/**
 * The error of a `HeaderMismatchError` response (code -32020). Streamable HTTP only: the stdio
 * bridge has no headers, so it never sends this; provided for validators and HTTP front-ends.
 *
 * @param message which header disagreed with the body, in one sentence
 */
export function headerMismatchError(message: string): McpErrorObject {
  return { code: McpErrorCode.HeaderMismatch, message };
}

// ---------------------------------------------------------------------------------------------
// the version governing one inbound message

/** Where a legacy request's version comes from. */
export type LegacyVersionSource =
  /** negotiated by an earlier `initialize` on this process */
  | "session"
  /** the `initialize` request itself: the version it will negotiate */
  | "initialize"
  /** a `ping` before any `initialize` (legacy lifecycle allows it): the newest legacy version */
  | "pre-initialize";

/** What {@link requestProtocolVersion} decides for one request. */
export type RequestVersionDecision =
  { ok: true; era: "modern"; version: string } | { ok: true; era: "legacy"; version: string; source: LegacyVersionSource } | { ok: false; error: McpErrorObject };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `message.params._meta` when both are objects. */
function metaOf(message: unknown): Record<string, unknown> | undefined {
  if (!isRecord(message) || !isRecord(message["params"])) return undefined;
  const meta = message["params"]["_meta"];
  return isRecord(meta) ? meta : undefined;
}

/** JSON Pointer (RFC 6901) of `params._meta[key]` (`/` in the key escaped as `~1`). */
function metaPointer(key: string): string {
  return `/params/_meta/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

/**
 * The protocol version that governs one inbound request on a dual-era server, i.e. the version
 * whose validators, method table and result rules apply to it. Decided in this order:
 *
 * 1. `initialize` selects legacy semantics (2026-07-28 Versioning › "Backward Compatibility"):
 *    `{era: "legacy", source: "initialize", version: negotiateInitializeVersion(params.protocolVersion)}`,
 *    whatever its `_meta` says and whether or not a session exists. (When `support.legacy` is
 *    empty: `-32602` naming the modern versions; the spec leaves the code open and asks a
 *    modern-only server to name its versions in that error.)
 * 2. A request whose `params._meta` has `io.modelcontextprotocol/protocolVersion`:
 *    - not a string → `-32602` (malformed per-request field);
 *    - a supported modern version → `{era: "modern", version}`, even inside a legacy session
 *      (a dual-era server MAY serve both eras concurrently; a modern request relies on no prior
 *      state, Basic › "Statelessness");
 *    - equal to `sessionVersion` → that legacy session (a legacy client echoing its version);
 *    - anything else, including a legacy version outside a matching session (legacy versions are
 *      negotiated by `initialize`, never per request) → `-32022` UnsupportedProtocolVersionError
 *      listing `support.modern`.
 * 3. No per-request version, inside a legacy session → `{era: "legacy", source: "session"}`.
 * 4. No per-request version and no `initialize` yet:
 *    - `ping` → `{era: "legacy", source: "pre-initialize", version: newest legacy}`: the legacy
 *      lifecycle lets clients ping before initialization; modern revisions have no `ping`.
 *    - anything else → `-32602` Invalid params. The request is neither a well-formed modern
 *      request (it lacks the required `_meta` protocolVersion, and "a request missing any
 *      required field is malformed; the server MUST reject it with -32602", 2026-07-28 Basic ›
 *      `_meta`) nor part of a legacy session (legacy clients SHOULD NOT send requests other than
 *      ping before initialization; the stdio binding notes legacy servers answer such requests
 *      with implementation-defined errors, commonly -32601 or -32602). `data` carries the
 *      failing pointer and both version lists so either kind of client can recover.
 *
 * The other required per-request field (`io.modelcontextprotocol/clientCapabilities`) and the
 * rest of the message are checked by the governing version's schema validators (every
 * 2026-07-28 request definition requires `params._meta` with both fields), which answer -32602.
 * Methods that the governing version lacks (e.g. `ping`, `logging/setLevel` or `initialize` in
 * 2026-07-28) are left to its method table (-32601).
 *
 * @param message the parsed JSON-RPC request object (anything is tolerated)
 * @param sessionVersion the version negotiated by `initialize` on this process, if any
 * @param support versions on offer (default: the generated ones)
 * @returns the governing version and era, or the JSON-RPC error to answer with
 */
export function requestProtocolVersion(message: unknown, sessionVersion: string | undefined, support: ProtocolVersionSupport = DEFAULT_VERSION_SUPPORT): RequestVersionDecision {
  const method = isRecord(message) ? message["method"] : undefined;
  if (method === "initialize") {
    const params = isRecord(message) && isRecord(message["params"]) ? message["params"] : {};
    if (support.legacy.length === 0) {
      return {
        ok: false,
        error: {
          code: ErrorCode.InvalidParams,
          message: `initialize is not supported: this server speaks only per-request protocol versions (${support.modern.join(", ")})`,
          data: { supported: [...support.modern] },
        },
      };
    }
    return {
      ok: true,
      era: "legacy",
      source: "initialize",
      version: negotiateInitializeVersion(params["protocolVersion"], support),
    };
  }

  const meta = metaOf(message);
  if (meta !== undefined && Object.hasOwn(meta, PROTOCOL_VERSION_META_KEY)) {
    const requested = meta[PROTOCOL_VERSION_META_KEY];
    if (typeof requested !== "string") {
      const pointer = metaPointer(PROTOCOL_VERSION_META_KEY);
      return {
        ok: false,
        error: {
          code: ErrorCode.InvalidParams,
          message: `Invalid params: ${pointer}: must be a string naming a protocol version`,
          data: { pointer, reason: "must be a string", supported: [...support.modern] },
        },
      };
    }
    if (support.modern.includes(requested)) return { ok: true, era: "modern", version: requested };
    if (sessionVersion !== undefined && requested === sessionVersion) {
      return { ok: true, era: "legacy", source: "session", version: sessionVersion };
    }
    return { ok: false, error: unsupportedProtocolVersionError(requested, support.modern) };
  }

  if (sessionVersion !== undefined) return { ok: true, era: "legacy", source: "session", version: sessionVersion };

  const newestLegacy = support.legacy[0];
  if (method === "ping" && newestLegacy !== undefined) {
    return { ok: true, era: "legacy", source: "pre-initialize", version: newestLegacy };
  }
  const pointer = metaPointer(PROTOCOL_VERSION_META_KEY);
  const options: string[] = [];
  if (support.modern.length > 0) options.push(`name a protocol version there (${support.modern.join(", ")})`);
  if (support.legacy.length > 0) options.push(`send initialize first (${support.legacy.join(", ")})`);
  return {
    ok: false,
    error: {
      code: ErrorCode.InvalidParams,
      message: `Invalid params: no params._meta["${PROTOCOL_VERSION_META_KEY}"] and no initialize yet: ${options.join(", or ")}`,
      data: {
        pointer,
        reason: "missing per-request protocol version and no initialize-negotiated session",
        modernVersions: [...support.modern],
        legacyVersions: [...support.legacy],
      },
    },
  };
}

/**
 * The version whose validators apply to an inbound notification. Notifications carry no
 * protocol version (`NotificationMetaObject` defines none): inside a legacy session they follow
 * the session; otherwise they are read as the newest modern revision (the only notification a
 * modern client sends is `notifications/cancelled`).
 *
 * @param sessionVersion the version negotiated by `initialize` on this process, if any
 * @param support versions on offer (default: the generated ones)
 * @returns the version, or undefined when neither a session nor a modern version exists
 */
export function notificationProtocolVersion(sessionVersion: string | undefined, support: ProtocolVersionSupport = DEFAULT_VERSION_SUPPORT): string | undefined {
  return sessionVersion ?? support.modern[0];
}

// ---------------------------------------------------------------------------------------------
// per-request metadata of modern requests

/** The per-request protocol fields of a modern request, as sent (not validated here). */
export interface RequestMetaFields {
  protocolVersion?: unknown;
  clientCapabilities?: unknown;
  clientInfo?: unknown;
  logLevel?: unknown;
  progressToken?: unknown;
}

/**
 * The `io.modelcontextprotocol/*` fields and `progressToken` of `params._meta` (2026-07-28 Basic ›
 * `_meta` › "Per-request protocol fields"). Values are returned as found; the schema validators
 * check them. A server MUST NOT carry these over from earlier requests.
 *
 * @param message the parsed request
 * @returns the fields present (an empty object when there is no `_meta`)
 */
export function requestMetaFields(message: unknown): RequestMetaFields {
  const meta = metaOf(message);
  const out: RequestMetaFields = {};
  if (!meta) return out;
  if (Object.hasOwn(meta, PROTOCOL_VERSION_META_KEY)) out.protocolVersion = meta[PROTOCOL_VERSION_META_KEY];
  if (Object.hasOwn(meta, CLIENT_CAPABILITIES_META_KEY)) out.clientCapabilities = meta[CLIENT_CAPABILITIES_META_KEY];
  if (Object.hasOwn(meta, CLIENT_INFO_META_KEY)) out.clientInfo = meta[CLIENT_INFO_META_KEY];
  if (Object.hasOwn(meta, LOG_LEVEL_META_KEY)) out.logLevel = meta[LOG_LEVEL_META_KEY];
  if (Object.hasOwn(meta, "progressToken")) out.progressToken = meta["progressToken"];
  return out;
}

/**
 * Whether a `notifications/message` at `level` may be sent about a modern request (2026-07-28
 * Server › Utilities › Logging, and `RequestMetaObject.logLevel`): only when the request set
 * `io.modelcontextprotocol/logLevel`, and only at that severity or above. Legacy sessions use
 * `logging/setLevel` instead and are not governed by this.
 *
 * @param message the parsed request the log entry is about
 * @param level the severity of the entry
 * @returns false when the request did not opt in (or named an unknown level)
 */
export function requestAllowsLogLevel(message: unknown, level: LoggingLevel): boolean {
  const wanted = requestMetaFields(message).logLevel;
  const threshold = typeof wanted === "string" ? LOG_SEVERITY.indexOf(wanted as LoggingLevel) : -1;
  return threshold >= 0 && LOG_SEVERITY.indexOf(level) >= threshold;
}

// ---------------------------------------------------------------------------------------------
// results

/** Options for {@link buildDiscoverResult}. */
export interface DiscoverOptions {
  /** Put in `_meta["io.modelcontextprotocol/serverInfo"]`. */
  serverInfo: Implementation;
  /** The server's capabilities, as for this revision. */
  capabilities: ServerCapabilities;
  /** Guidance for the model on using this server. Omitted when undefined. */
  instructions?: string;
  /** Versions a client may name per request, newest first (default: the generated modern ones). */
  supportedVersions?: readonly string[];
  /** Freshness hint in ms, ≥ 0 (default 0: re-fetch whenever needed). */
  ttlMs?: number;
  /** Cache scope (default "private": never shared across authorization contexts). */
  cacheScope?: CacheScope;
}

/**
 * The result of `server/discover` (2026-07-28 Server › Discovery; schema `DiscoverResult`):
 * `resultType: "complete"`, `supportedVersions`, `capabilities`, `ttlMs`, `cacheScope`, the
 * server's identity under `_meta["io.modelcontextprotocol/serverInfo"]`, and `instructions`
 * when given.
 *
 * `supportedVersions` defaults to the modern versions only: a dual-era client that receives a
 * DiscoverResult stays modern (Versioning › "Compatibility Matrix"), so it can only use versions
 * it may name per request; initialize-based versions stay reachable through `initialize`.
 * Defaults for caching are conservative (ttlMs 0, "private"); pass others to allow caching.
 *
 * @param options see {@link DiscoverOptions}
 * @returns a new DiscoverResult
 * @throws RangeError when `ttlMs` is not a non-negative integer
 */
export function buildDiscoverResult(options: DiscoverOptions): DiscoverResult {
  const ttlMs = options.ttlMs ?? 0;
  if (!Number.isInteger(ttlMs) || ttlMs < 0) throw new RangeError(`ttlMs must be a non-negative integer (got ${ttlMs})`);
  const result: DiscoverResult = {
    resultType: "complete",
    supportedVersions: [...(options.supportedVersions ?? DEFAULT_VERSION_SUPPORT.modern)],
    capabilities: options.capabilities,
    ttlMs,
    cacheScope: options.cacheScope ?? "private",
    _meta: { [SERVER_INFO_META_KEY]: options.serverInfo },
  };
  if (options.instructions !== undefined) result.instructions = options.instructions;
  return result;
}

/** Options for {@link decorateResult}. */
export interface ResultDecoration {
  /** Added as `_meta["io.modelcontextprotocol/serverInfo"]` unless the result already has one. */
  serverInfo?: Implementation;
  /** `ttlMs` for cacheable methods whose result lacks one (default 0). */
  ttlMs?: number;
  /** `cacheScope` for cacheable methods whose result lacks one (default "private"). */
  cacheScope?: CacheScope;
}

/**
 * Shape a result for the protocol version that governs its request. For a modern version
 * (2026-07-28 and later) returns a copy with:
 * - `resultType: "complete"` when the result has none ("ResultType": every result MUST carry
 *   it; an `InputRequiredResult`'s `"input_required"` is kept);
 * - `_meta["io.modelcontextprotocol/serverInfo"]` when `serverInfo` is given and the result's
 *   `_meta` lacks it (per-response protocol fields, SHOULD), other `_meta` members kept;
 * - for {@link CACHEABLE_METHODS} with a complete result: `ttlMs` and `cacheScope` when missing
 *   (both required there; defaults 0 and "private", the conservative hints for data the bridge
 *   fetches from an orchestrator that announces no changes).
 * Members already present are never overwritten. For a legacy or unknown version the result is
 * returned unchanged (the same object): those revisions define none of these members.
 *
 * @param version the governing version ({@link requestProtocolVersion})
 * @param method the request's method, e.g. "tools/list"
 * @param result the result object as produced for the method
 * @param options see {@link ResultDecoration}
 * @returns the result to validate and send
 */
export function decorateResult<T extends object>(version: string, method: string, result: T, options: ResultDecoration = {}): T {
  if (!isModernProtocolVersion(version)) return result;
  const source = result as Record<string, unknown>;
  const out: Record<string, unknown> = { ...source };
  if (typeof out["resultType"] !== "string") out["resultType"] = "complete";
  if (options.serverInfo !== undefined) {
    const meta = isRecord(source["_meta"]) ? source["_meta"] : undefined;
    if (!meta || !Object.hasOwn(meta, SERVER_INFO_META_KEY)) out["_meta"] = { ...meta, [SERVER_INFO_META_KEY]: options.serverInfo };
  }
  if (CACHEABLE_METHODS.has(method) && out["resultType"] === "complete") {
    if (!Object.hasOwn(out, "ttlMs")) out["ttlMs"] = options.ttlMs ?? 0;
    if (!Object.hasOwn(out, "cacheScope")) out["cacheScope"] = options.cacheScope ?? "private";
  }
  return out as T;
}
