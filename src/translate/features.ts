/**
 * What each MCP protocol revision allows on the wire, as far as the bridge's output depends on
 * it. Revision strings are dates (`YYYY-MM-DD`), so "introduced in revision R" is a string
 * comparison `version >= R`.
 *
 * Facts (from each revision's specification and schema):
 * - 2024-11-05: tools, prompts, resources, logging; content blocks text/image/resource.
 * - 2025-03-26: JSON-RPC batches (removed again in 2025-06-18); audio content; tool annotations.
 * - 2025-06-18: `CallToolResult.structuredContent`, `resource_link` content blocks, `title`.
 * - 2025-11-25: input validation errors of `tools/call` are tool execution errors (an `isError`
 *   result), no longer JSON-RPC `-32602` (server/tools, "Error Handling").
 * - 2026-07-28: stateless. No `initialize`/`ping`/`logging/setLevel`; the version, client info
 *   and capabilities travel in each request's `_meta`; every result carries `resultType`;
 *   `server/discover` describes the server; the log level is per request
 *   (`_meta["io.modelcontextprotocol/logLevel"]`).
 */

/** Output-shaping switches for one protocol revision. */
export interface VersionFeatures {
  /** The revision these switches describe. */
  readonly version: string;
  /** JSON-RPC batches (arrays) are part of the protocol (2025-03-26 only). */
  readonly batches: boolean;
  /** `CallToolResult.structuredContent` exists (≥ 2025-06-18). */
  readonly structuredContent: boolean;
  /** `audio` content blocks exist (≥ 2025-03-26). */
  readonly audioContent: boolean;
  /** `resource_link` content blocks exist (≥ 2025-06-18). */
  readonly resourceLinks: boolean;
  /** Tool input validation failures are `isError` results instead of `-32602` (≥ 2025-11-25). */
  readonly inputErrorsAreToolErrors: boolean;
  /** Stateless revision: per-request `_meta` version, `server/discover`, `resultType` (≥ 2026-07-28). */
  readonly stateless: boolean;
  /** The log level is chosen per request in `_meta` instead of by `logging/setLevel` (≥ 2026-07-28). */
  readonly perRequestLogLevel: boolean;
}

/** The first stateless revision (no `initialize`). */
export const FIRST_STATELESS_VERSION = "2026-07-28";

const cache = new Map<string, VersionFeatures>();

/**
 * The switches for `version` (any `YYYY-MM-DD` string; unknown revisions get the switches of
 * the nearest older known one by date comparison). Never throws; results are cached and frozen.
 */
export function featuresOf(version: string): VersionFeatures {
  let f = cache.get(version);
  if (!f) {
    f = Object.freeze({
      version,
      batches: version === "2025-03-26",
      structuredContent: version >= "2025-06-18",
      audioContent: version >= "2025-03-26",
      resourceLinks: version >= "2025-06-18",
      inputErrorsAreToolErrors: version >= "2025-11-25",
      stateless: version >= FIRST_STATELESS_VERSION,
      perRequestLogLevel: version >= FIRST_STATELESS_VERSION,
    });
    cache.set(version, f);
  }
  return f;
}

/** True for revisions negotiated with `initialize` (everything before {@link FIRST_STATELESS_VERSION}). */
export function usesInitialize(version: string): boolean {
  return version < FIRST_STATELESS_VERSION;
}
