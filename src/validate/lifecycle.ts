/**
 * The era and version decisions of one session (see `checker.ts` for the rules they follow): the
 * era at the first client request, the version a request names or the initialize exchange
 * negotiates, and what a result whose request is not in the input says about both. Each version
 * named or negotiated is handed to the rules as a {@link VersionEvent}.
 */
import { isObject, type MessageFacts } from "./facts.js";
import type { Subject, VersionEvent } from "./rules/rule.js";
import type { Json, Origin, SessionState } from "./session-state.js";
import type { Direction, WireId } from "./types.js";
import { PROTOCOL_VERSION_META_KEY } from "../mcp/versions.js";

/** The era and version decisions over a {@link SessionState}; `fire` hands version events to the rules. */
export class Lifecycle {
  constructor(
    private readonly s: SessionState,
    private readonly fire: (e: VersionEvent) => void,
  ) {}

  /**
   * Decides the era at the session's first client request (other than initialize): stateless for
   * `server/discover` or a request naming its version in `_meta` (unless that version's schema is
   * an initialize-based one), legacy otherwise. Adopts the named version when not forced.
   */
  decideEra(m: Subject): void {
    const s = this.s;
    const f = m.facts;
    const named = s.metaVersion(f);
    if (f.method !== "server/discover" && named === undefined) {
      s.becomeLegacy();
      return;
    }
    if (named !== undefined) {
      const v = this.s.ctx.resolve(named);
      if (v !== undefined && v.messageDefinition("c2s", "initialize") !== undefined) {
        s.becomeLegacy(named); // an initialize-based version named per request: initialize-first says it
        return;
      }
    }
    s.era = "stateless";
    if (named === undefined) return;
    this.adoptVersion(named, "named", m.origin, "c2s", m.aboutId, f.method, `/params/_meta/${PROTOCOL_VERSION_META_KEY.replace("/", "~1")}`);
  }

  /**
   * Checks the session against `version` (named in a request's `_meta`, or negotiated by
   * initialize): with `--protocol-version` forced, the session keeps it (the rules report a
   * mismatch); otherwise the session switches to it, or the rules report that there are no
   * validators for it. `pointer` locates the version in the message.
   */
  adoptVersion(version: string, how: "named" | "negotiated", origin: Origin, dir: Direction, aboutId: WireId | undefined, method: string | undefined, pointer: string): void {
    const s = this.s;
    const forced = this.s.ctx.forcedVersion;
    const e: VersionEvent = {
      origin,
      dir,
      aboutId,
      method,
      pointer,
      version,
      how,
      forced,
      unsupported: undefined,
    };
    if (forced === undefined) {
      s.spoken = version;
      // An initialize exchange is never checked against a stateless schema (no initialize in it).
      const usable = how === "named" || s.initializeBased(version);
      if (version !== s.version && !(usable && s.switchTo(version))) {
        const where = how === "named" ? `protocol version ${version} named in the request's _meta` : `negotiated protocol version ${version}`;
        const why = usable || this.s.ctx.resolve(version) === undefined ? `no validators for ${where}` : `no initialize-based schema for ${where}`;
        e.unsupported = `${why}; checking against ${this.s.ctx.schemaName ?? s.version}`;
      }
    }
    this.fire(e);
  }

  onInitializeRequest(f: MessageFacts): void {
    const s = this.s;
    s.phase = "sent";
    s.clientCaps = f.clientCaps;
    const requested = f.requestedVersion;
    if (this.s.ctx.forcedVersion === undefined && requested !== undefined) {
      s.spoken = requested;
      // Only an initialize-based schema can check an initialize exchange: an unknown (or stateless)
      // requested version leaves the newest initialize-based one (becomeLegacy, below).
      if (!s.initializeBased(requested)) s.switchToLegacy();
      else if (requested !== s.version) s.switchTo(requested);
    }
    s.becomeLegacy();
  }

  /**
   * A result whose request the capture does not hold, before the era is known: an InitializeResult,
   * or a result without the `resultType` every 2026-07-28 result carries, makes the session an
   * initialize-based one, and an InitializeResult (its request cut or unparsable) names its version.
   */
  unseenRequestResult(m: Subject): void {
    const s = this.s;
    const result = s.valueOf(m.facts)?.result;
    if (!initializeEraResult(result)) return;
    s.becomeLegacy();
    if (s.phase === "pre" && looksLikeInitializeResult(result)) {
      this.adoptVersion((result as Json).protocolVersion as string, "negotiated", m.origin, m.dir, undefined, "initialize", "/result/protocolVersion");
    }
  }

  /**
   * A result in server-side JSONL (the requests are not visible), before it is checked: one shaped
   * as an InitializeResult sets the era and the negotiated version; otherwise the first result
   * decides the era: stateless for a DiscoverResult or a result with `resultType` (2026-07-28
   * results carry it), initialize-based else (checked like a session whose initialize is missing).
   */
  serverSideResult(m: Subject): void {
    const s = this.s;
    const f = m.facts;
    if (s.phase !== "answered" && looksLikeInitializeResult(f.result)) {
      this.onInitializeResult(f.result as Json, m.origin, m.dir);
      return;
    }
    if (s.era === "unknown") {
      const result = s.valueOf(f)?.result;
      if (!looksLikeDiscoverResult(result) && !(isObject(result) && "resultType" in result)) {
        s.becomeLegacy();
        return;
      }
      s.era = "stateless";
    }
    // A DiscoverResult gives the capabilities.
    if (s.era === "stateless" && looksLikeDiscoverResult(f.result)) this.onDiscoverResult(f.result);
  }

  /** A stateless session's `server/discover` result: its capabilities govern the later requests. */
  onDiscoverResult(result: unknown): void {
    if (isObject(result) && isObject(result.capabilities)) this.s.serverCaps = result.capabilities;
  }

  onInitializeResult(result: Json, origin: Origin, dir: Direction): void {
    const s = this.s;
    s.phase = "answered";
    s.becomeLegacy(); // (server-side JSONL: this result may be the first sign of the era)
    s.serverCaps = isObject(result.capabilities) ? result.capabilities : undefined;
    const negotiated = result.protocolVersion;
    if (typeof negotiated !== "string") return; // the result check reports it
    this.adoptVersion(negotiated, "negotiated", origin, dir, undefined, "initialize", "/result/protocolVersion");
  }
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
