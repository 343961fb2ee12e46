/**
 * The one owner of the MCP protocol revisions this project speaks: the list, the era of each
 * (initialize-based "legacy" or stateless "modern"), the newest revision per era, what each
 * revision allows ({@link versionFacts}, read from its generated schema tables), and the `_meta`
 * keys of the stateless era. Everything else (negotiation, translation features, the validator,
 * the docs table test) derives from here; adding `schemas/mcp/<revision>/schema.json` and running
 * `npm run generate` adds a revision (docs/adopting-a-protocol-version.md).
 *
 * Spec: MCP 2025-06-18, Basic › Lifecycle › Initialization › "Version Negotiation"
 * (https://modelcontextprotocol.io/specification/2025-06-18/basic/lifecycle#version-negotiation):
 * the client sends the revision it wants in `initialize.params.protocolVersion`; a server that
 * supports it MUST answer with the same revision, otherwise it MUST answer with another revision
 * it supports, which SHOULD be its latest. A client that cannot use the answer disconnects.
 * MCP 2026-07-28, Basic › Versioning › "Terminology" (modern / legacy eras) and Basic › `_meta`.
 *
 * Loads only the generated facts (`src/gen/mcp/facts.ts`, plain data), neither the method tables
 * nor the validators.
 */
import { GENERATED_FACTS, GENERATED_VERSIONS, type GeneratedVersion } from "../gen/mcp/facts.js";
import type { SchemaFacts } from "../gen-runtime/schema-meta.js";

export type { GeneratedVersion, SchemaFacts };

// ---------------------------------------------------------------------------------------------
// `_meta` keys (MCP 2026-07-28 Basic › Overview › `_meta`)

/** `_meta` key naming a request's protocol version (required on modern requests). */
export const PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion";
/** `_meta` key carrying a request's client capabilities (required on modern requests). */
export const CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities";
/** `_meta` key carrying the client's self-reported identity (optional, SHOULD be sent). */
export const CLIENT_INFO_META_KEY = "io.modelcontextprotocol/clientInfo";
/** `_meta` key opting a request in to log notifications at or above a level (optional). */
export const LOG_LEVEL_META_KEY = "io.modelcontextprotocol/logLevel";
/** `_meta` key of a result identifying the server (SHOULD be on every modern result). */
export const SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo";
/** `_meta` key tying a notification or result to a `subscriptions/listen` stream. */
export const SUBSCRIPTION_ID_META_KEY = "io.modelcontextprotocol/subscriptionId";
/**
 * `_meta` key of a request's W3C Trace Context `traceparent` (https://www.w3.org/TR/trace-context/
 * § 3.2), carried to Orchestra as `ToolRequest.trace_parent`. Not an `io.modelcontextprotocol/`
 * key: MCP leaves unprefixed `_meta` keys to implementations (Basic › `_meta`).
 */
export const TRACE_PARENT_META_KEY = "traceparent";

// ---------------------------------------------------------------------------------------------
// revisions

/**
 * Supported MCP protocol revisions, oldest first (revision strings are dates, so this is also
 * lexicographic order). Each one has generated validators in `src/gen/mcp/<revision>/`.
 */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly GeneratedVersion[] = Object.freeze([...GENERATED_VERSIONS].sort());

/** The newest supported revision of any era. */
export const LATEST_PROTOCOL_VERSION: GeneratedVersion = SUPPORTED_PROTOCOL_VERSIONS[SUPPORTED_PROTOCOL_VERSIONS.length - 1]!;

/**
 * Whether `version` is one of {@link SUPPORTED_PROTOCOL_VERSIONS} (exact string match).
 */
export function isSupportedProtocolVersion(version: string): version is GeneratedVersion {
  return (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(version);
}

/** Rules a revision states only in its specification's prose: no schema can show them. */
export interface ProseFacts {
  /**
   * Input validation errors of `tools/call` are tool execution errors (an `isError` result), not
   * JSON-RPC `-32602` (MCP 2025-11-25 Server › Tools › "Error Handling", kept since).
   */
  readonly toolInputErrorsAsResults: boolean;
}

/**
 * {@link ProseFacts} of every generated revision. Keyed by `GeneratedVersion`, so that once a new
 * `schemas/mcp/<revision>/` is generated this table fails to compile until the revision's entry
 * is written from its specification.
 */
const PROSE_FACTS: { readonly [V in GeneratedVersion]: ProseFacts } = {
  "2024-11-05": { toolInputErrorsAsResults: false },
  "2025-03-26": { toolInputErrorsAsResults: false },
  "2025-06-18": { toolInputErrorsAsResults: false },
  "2025-11-25": { toolInputErrorsAsResults: true },
  "2026-07-28": { toolInputErrorsAsResults: true },
};

/** What a revision allows: its schema's facts (`src/gen/mcp/facts.ts`) and its {@link ProseFacts}. */
export type VersionFacts = SchemaFacts & ProseFacts;

const factsCache = new Map<string, VersionFacts>();

/**
 * What a supported revision allows: the generated facts read from its schema (see `SchemaFacts`
 * in src/gen-runtime/schema-meta.d.ts) and its {@link ProseFacts}.
 *
 * @returns the facts (frozen), or undefined for a revision without a generated schema
 */
export function versionFacts(version: string): VersionFacts | undefined {
  let facts = factsCache.get(version);
  if (facts === undefined && isSupportedProtocolVersion(version)) {
    facts = Object.freeze({ ...GENERATED_FACTS[version], ...PROSE_FACTS[version] });
    factsCache.set(version, facts);
  }
  return facts;
}

/**
 * The supported revision whose rules govern `version`: itself when supported, otherwise the
 * newest supported revision older than it (revision strings are dates), or the oldest supported
 * one when `version` precedes them all (or is not a date). Never throws.
 */
export function governingVersion(version: string): GeneratedVersion {
  if (isSupportedProtocolVersion(version)) return version;
  let governing: GeneratedVersion = SUPPORTED_PROTOCOL_VERSIONS[0]!;
  for (const v of SUPPORTED_PROTOCOL_VERSIONS) if (v < version) governing = v;
  return governing;
}

/** The supported revisions whose schema defines JSON-RPC batches (`JSONRPCBatchRequest`), oldest first. */
export const BATCH_PROTOCOL_VERSIONS: readonly string[] = Object.freeze(SUPPORTED_PROTOCOL_VERSIONS.filter((v) => versionFacts(v)?.batches === true));

/** Whether `version` is a supported revision in which JSON-RPC batches are part of the protocol. */
export function allowsBatches(version: string): boolean {
  return versionFacts(version)?.batches === true;
}

/**
 * Whether a JSON-RPC batch breaks `version`'s rules: the revision has no batches although an older
 * supported one had them (the revisions after 2025-03-26 removed them). A revision older than every
 * batch revision (2024-11-05) neither defines nor forbids them: its messages follow JSON-RPC 2.0,
 * which has batches.
 */
export function forbidsBatches(version: string): boolean {
  if (allowsBatches(version)) return false;
  const governing = governingVersion(version);
  return BATCH_PROTOCOL_VERSIONS.some((v) => v < governing);
}

/**
 * Whether the `ServerCapabilities` of `version`'s governing revision ({@link governingVersion})
 * define `capability` (e.g. `completions`, which 2024-11-05 lacks).
 */
export function definesServerCapability(version: string, capability: string): boolean {
  return versionFacts(governingVersion(version))!.serverCapabilities.includes(capability);
}

// ---------------------------------------------------------------------------------------------
// eras

/** A protocol era (2026-07-28 Basic › Versioning › "Terminology"). */
export type ProtocolEra = "modern" | "legacy";

/**
 * The era of a supported revision, read from its generated facts: a schema whose client requests
 * include `initialize` is legacy (negotiated once per session); one without is modern (the
 * 2026-07-28 changelog: the handshake is gone, the version travels in each request's `_meta`).
 *
 * @param version a protocol revision string, e.g. "2026-07-28"
 * @returns the era, or undefined when the version has no generated schema
 */
export function protocolEra(version: string): ProtocolEra | undefined {
  const facts = versionFacts(version);
  return facts === undefined ? undefined : facts.era === "initialize" ? "legacy" : "modern";
}

/** Whether `version` is a modern (per-request `_meta`) revision with a generated schema. */
export function isModernProtocolVersion(version: string): boolean {
  return protocolEra(version) === "modern";
}

/**
 * The versions a server offers, per era, each list newest first. Legacy versions are negotiated
 * by `initialize`; modern versions are named per request in `_meta`.
 */
export interface ProtocolVersionSupport {
  readonly modern: readonly string[];
  readonly legacy: readonly string[];
}

const newestFirst = (versions: readonly string[]): readonly string[] => Object.freeze([...versions].sort().reverse());

/** Every supported version, split by era, newest first: what this binary serves. */
export const DEFAULT_VERSION_SUPPORT: ProtocolVersionSupport = Object.freeze({
  modern: newestFirst(SUPPORTED_PROTOCOL_VERSIONS.filter((v) => protocolEra(v) === "modern")),
  legacy: newestFirst(SUPPORTED_PROTOCOL_VERSIONS.filter((v) => protocolEra(v) === "legacy")),
});

/** The initialize-based (legacy) revisions, newest first. */
export const LEGACY_PROTOCOL_VERSIONS: readonly string[] = DEFAULT_VERSION_SUPPORT.legacy;
/** The stateless (modern) revisions, newest first. */
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = DEFAULT_VERSION_SUPPORT.modern;

/**
 * Whether `version` is negotiated with `initialize`: a legacy supported revision, or for an
 * unsupported one, the era of its {@link governingVersion}.
 */
export function usesInitialize(version: string): boolean {
  return protocolEra(governingVersion(version)) === "legacy";
}

// ---------------------------------------------------------------------------------------------
// negotiation (legacy rule)

/**
 * The revision a server answers in `InitializeResult.protocolVersion` (lifecycle spec, "Version
 * Negotiation"): the client's requested revision when we support it, otherwise our latest.
 * Never throws; any string (including empty or malformed) is accepted as input.
 *
 * @param requested `initialize.params.protocolVersion` as sent by the client
 * @returns a member of {@link SUPPORTED_PROTOCOL_VERSIONS}
 */
export function negotiateProtocolVersion(requested: string): string {
  return isSupportedProtocolVersion(requested) ? requested : LATEST_PROTOCOL_VERSION;
}
