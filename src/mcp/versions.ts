/**
 * MCP protocol revisions this project speaks, and version negotiation.
 *
 * Spec: MCP 2025-06-18, Basic › Lifecycle › Initialization › "Version Negotiation"
 * (https://modelcontextprotocol.io/specification/2025-06-18/basic/lifecycle#version-negotiation):
 * the client sends the revision it wants in `initialize.params.protocolVersion`; a server that
 * supports it MUST answer with the same revision, otherwise it MUST answer with another revision
 * it supports, which SHOULD be its latest. A client that cannot use the answer disconnects.
 */
import { GENERATED_VERSIONS } from "../gen/mcp/catalog.js";

/**
 * Supported MCP protocol revisions, oldest first (revision strings are dates, so this is also
 * lexicographic order). Each one has generated validators in `src/gen/mcp/<revision>/`.
 */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = Object.freeze([...GENERATED_VERSIONS].sort());

/** The newest supported revision: what we offer when the client asks for one we lack. */
export const LATEST_PROTOCOL_VERSION: string = SUPPORTED_PROTOCOL_VERSIONS[SUPPORTED_PROTOCOL_VERSIONS.length - 1] as string;

/**
 * Whether `version` is one of {@link SUPPORTED_PROTOCOL_VERSIONS} (exact string match).
 */
export function isSupportedProtocolVersion(version: string): boolean {
  return SUPPORTED_PROTOCOL_VERSIONS.includes(version);
}

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
