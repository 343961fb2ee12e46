/**
 * What each MCP protocol revision allows on the wire, as far as the bridge's output depends on
 * it. Every switch is read from the revision's facts (src/mcp/versions.ts `versionFacts`): those
 * its generated schema shows (`src/gen/mcp/facts.ts`: a feature is present
 * when the schema defines it) and the one rule only the specification's prose states.
 */
import { governingVersion, versionFacts } from "../mcp/versions.js";

/** Output-shaping switches for one protocol revision. */
export interface VersionFeatures {
  /** The revision these switches describe. */
  readonly version: string;
  /** JSON-RPC batches (arrays) are part of the protocol (the schema defines `JSONRPCBatchRequest`: 2025-03-26 only). */
  readonly batches: boolean;
  /** `CallToolResult.structuredContent` exists (the schema's `CallToolResult` has it: ≥ 2025-06-18). */
  readonly structuredContent: boolean;
  /** `audio` content blocks exist (definition `AudioContent`: ≥ 2025-03-26). */
  readonly audioContent: boolean;
  /** `resource_link` content blocks exist (definition `ResourceLink`: ≥ 2025-06-18). */
  readonly resourceLinks: boolean;
  /** Tool input validation failures are `isError` results instead of `-32602` (a prose rule: ≥ 2025-11-25). */
  readonly inputErrorsAreToolErrors: boolean;
  /** Stateless revision (no `initialize` request): per-request `_meta` version, `server/discover`, `resultType` (≥ 2026-07-28). */
  readonly stateless: boolean;
  /** The log level is chosen per request in `_meta`: the schema has no `logging/setLevel` (≥ 2026-07-28). */
  readonly perRequestLogLevel: boolean;
}

const cache = new Map<string, VersionFeatures>();

/**
 * The switches for `version` (any string; an unsupported revision gets the switches of its
 * governing revision, the nearest older supported one: src/mcp/versions.ts `governingVersion`).
 * Never throws; results are cached and frozen.
 */
export function featuresOf(version: string): VersionFeatures {
  let f = cache.get(version);
  if (!f) {
    const facts = versionFacts(governingVersion(version))!;
    f = Object.freeze({
      version,
      batches: facts.batches,
      structuredContent: facts.structuredContent,
      audioContent: facts.audioContent,
      resourceLinks: facts.resourceLinks,
      inputErrorsAreToolErrors: facts.toolInputErrorsAsResults,
      stateless: facts.era === "stateless",
      perRequestLogLevel: !facts.setLevelRequest,
    });
    cache.set(version, f);
  }
  return f;
}

export { usesInitialize } from "../mcp/versions.js";
