/**
 * src/mcp/negotiation.ts: which protocol version governs each inbound message on a dual-era
 * server, the server/discover result, the MCP 2026-07-28 error objects, and result decoration.
 * Shapes are checked with the generated 2026-07-28 validators (our schema), so a builder that
 * drifts from the schema fails here.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { GENERATED_PROTOCOLS, GENERATED_VERSIONS } from "../../src/gen/mcp/index.js";
import {
  CACHEABLE_METHODS,
  DEFAULT_VERSION_SUPPORT,
  McpErrorCode,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  buildDiscoverResult,
  decorateResult,
  headerMismatchError,
  isModernProtocolVersion,
  missingRequiredClientCapabilityError,
  negotiateInitializeVersion,
  notificationProtocolVersion,
  protocolEra,
  requestAllowsLogLevel,
  requestMetaFields,
  requestProtocolVersion,
  unsupportedProtocolVersionError,
  type McpErrorObject,
  type ProtocolVersionSupport,
} from "../../src/mcp/negotiation.js";
import { validatorsFor, type ProtocolValidators } from "../../src/mcp/validation.js";
import { requireShared, sharedPath, skipTitle } from "../helpers/requires.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const MODERN = "2026-07-28";
const EXAMPLES = sharedPath(`mcp-schema/${MODERN}/examples`);
const examplesMissing = requireShared(`mcp-schema/${MODERN}/examples`);

/** A fixed offer, so decisions do not depend on which versions are generated today. */
const SUPPORT: ProtocolVersionSupport = { modern: ["2026-07-28"], legacy: ["2025-11-25", "2025-06-18", "2024-11-05"] };
const SERVER_INFO = { name: "orchestra-stdio", version: "9.9.9" };

function modernValidators(): ProtocolValidators {
  const v = validatorsFor(MODERN);
  if (!v) throw new Error(`no generated validators for ${MODERN}`);
  return v;
}

/** `validate` → "ok" or the first issue, so a failing assertion shows why. */
function check(definition: string, data: unknown): string {
  const issues = modernValidators().validate(definition, data);
  return issues ? `${issues[0]!.pointer || "/"}: ${issues[0]!.reason}` : "ok";
}

/** A 2026-07-28 request with the required per-request fields. */
function modernRequest(method: string, extra: Record<string, unknown> = {}, version: unknown = MODERN): Record<string, unknown> {
  return {
    jsonrpc: "2.0",
    id: 7,
    method,
    params: { _meta: { [PROTOCOL_VERSION_META_KEY]: version, "io.modelcontextprotocol/clientCapabilities": {} }, ...extra },
  };
}

function errorOf(decision: ReturnType<typeof requestProtocolVersion>): McpErrorObject {
  if (decision.ok) throw new Error(`expected an error, got ${JSON.stringify(decision)}`);
  return decision.error;
}

describe("eras of the generated versions", () => {
  it("classifies 2026-07-28 as modern and 2025-06-18 as legacy from their method tables", () => {
    expect(protocolEra(MODERN)).toBe("modern");
    expect(protocolEra("2025-06-18")).toBe("legacy");
    expect(protocolEra("1900-01-01")).toBeUndefined();
    expect(isModernProtocolVersion(MODERN)).toBe(true);
    expect(isModernProtocolVersion("2025-06-18")).toBe(false);
  });

  it("splits every generated version into exactly one era, each list newest first", () => {
    const { modern, legacy } = DEFAULT_VERSION_SUPPORT;
    expect([...modern, ...legacy].sort()).toEqual([...GENERATED_VERSIONS].sort());
    expect(modern).toContain(MODERN);
    expect(legacy).toContain("2025-06-18");
    expect([...modern]).toEqual([...modern].sort().reverse());
    expect([...legacy]).toEqual([...legacy].sort().reverse());
    for (const v of legacy) expect(GENERATED_PROTOCOLS[v]?.methods.c2s["initialize"], v).toBeDefined();
    for (const v of modern) expect(GENERATED_PROTOCOLS[v]?.methods.c2s["server/discover"], v).toBeDefined();
  });
});

describe("negotiateInitializeVersion", () => {
  it("echoes a supported legacy version", () => {
    expect(negotiateInitializeVersion("2025-06-18", SUPPORT)).toBe("2025-06-18");
    expect(negotiateInitializeVersion("2024-11-05", SUPPORT)).toBe("2024-11-05");
  });

  it("offers the newest legacy version for a modern, unknown or malformed request", () => {
    for (const requested of ["2026-07-28", "1900-01-01", "", 20250618, undefined, null]) {
      expect(negotiateInitializeVersion(requested, SUPPORT), String(requested)).toBe("2025-11-25");
    }
  });

  it("never answers initialize with a modern version by default", () => {
    expect(DEFAULT_VERSION_SUPPORT.modern).not.toContain(negotiateInitializeVersion(MODERN));
  });

  it("throws when no legacy version is offered", () => {
    expect(() => negotiateInitializeVersion("2025-06-18", { modern: [MODERN], legacy: [] })).toThrow(RangeError);
  });
});

describe("requestProtocolVersion", () => {
  it("takes a supported modern version from params._meta", () => {
    expect(requestProtocolVersion(modernRequest("tools/list"), undefined, SUPPORT)).toEqual({
      ok: true,
      era: "modern",
      version: MODERN,
    });
  });

  it("serves a modern request statelessly even inside a legacy session", () => {
    expect(requestProtocolVersion(modernRequest("tools/call", { name: "x" }), "2025-06-18", SUPPORT)).toEqual({
      ok: true,
      era: "modern",
      version: MODERN,
    });
  });

  it("answers an unknown per-request version with -32022 listing the modern versions", () => {
    const error = errorOf(requestProtocolVersion(modernRequest("tools/list", {}, "1900-01-01"), undefined, SUPPORT));
    expect(error.code).toBe(-32022);
    expect(error.data).toEqual({ requested: "1900-01-01", supported: ["2026-07-28"] });
    expect(check("UnsupportedProtocolVersionError", { jsonrpc: "2.0", id: 7, error })).toBe("ok");
  });

  it("rejects a legacy version named per request outside a session on that version with -32022", () => {
    const noSession = errorOf(requestProtocolVersion(modernRequest("tools/list", {}, "2025-06-18"), undefined, SUPPORT));
    expect(noSession.code).toBe(McpErrorCode.UnsupportedProtocolVersion);
    expect(noSession.data).toMatchObject({ requested: "2025-06-18" });
    const otherSession = errorOf(requestProtocolVersion(modernRequest("tools/list", {}, "2025-06-18"), "2025-11-25", SUPPORT));
    expect(otherSession.code).toBe(-32022);
  });

  it("keeps a legacy session when the request echoes the session's own version in _meta", () => {
    expect(requestProtocolVersion(modernRequest("tools/list", {}, "2025-06-18"), "2025-06-18", SUPPORT)).toEqual({
      ok: true,
      era: "legacy",
      source: "session",
      version: "2025-06-18",
    });
  });

  it("answers a per-request version that is not a string with -32602 and its pointer", () => {
    for (const bad of [20260728, null, { v: MODERN }, [MODERN]]) {
      const error = errorOf(requestProtocolVersion(modernRequest("tools/list", {}, bad), undefined, SUPPORT));
      expect(error.code).toBe(-32602);
      expect(error.data).toMatchObject({ pointer: "/params/_meta/io.modelcontextprotocol~1protocolVersion" });
    }
  });

  it("follows the initialize-negotiated session for requests without a per-request version", () => {
    const legacy = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };
    expect(requestProtocolVersion(legacy, "2025-06-18", SUPPORT)).toEqual({
      ok: true,
      era: "legacy",
      source: "session",
      version: "2025-06-18",
    });
    const noParams = { jsonrpc: "2.0", id: 2, method: "tools/call" };
    expect(requestProtocolVersion(noParams, "2024-11-05", SUPPORT)).toMatchObject({ ok: true, version: "2024-11-05" });
    const otherMeta = { jsonrpc: "2.0", id: 3, method: "tools/list", params: { _meta: { progressToken: 1 } } };
    expect(requestProtocolVersion(otherMeta, "2025-06-18", SUPPORT)).toMatchObject({
      ok: true,
      era: "legacy",
      version: "2025-06-18",
    });
  });

  it("rejects a request with neither a per-request version nor a prior initialize with -32602", () => {
    for (const method of ["tools/list", "tools/call", "server/discover", "resources/read"]) {
      const error = errorOf(requestProtocolVersion({ jsonrpc: "2.0", id: 1, method, params: {} }, undefined, SUPPORT));
      expect(error.code, method).toBe(-32602);
      expect(error.message).toContain("initialize");
      expect(error.message).toContain(PROTOCOL_VERSION_META_KEY);
      expect(error.data).toEqual({
        pointer: "/params/_meta/io.modelcontextprotocol~1protocolVersion",
        reason: "missing per-request protocol version and no initialize-negotiated session",
        modernVersions: ["2026-07-28"],
        legacyVersions: ["2025-11-25", "2025-06-18", "2024-11-05"],
      });
    }
  });

  it("tolerates messages that are not objects or have non-object params", () => {
    for (const message of [null, 42, "tools/list", [], { method: "tools/list", params: [] }, { method: "x", params: { _meta: "v" } }]) {
      expect(requestProtocolVersion(message, undefined, SUPPORT).ok, JSON.stringify(message)).toBe(false);
      expect(requestProtocolVersion(message, "2025-06-18", SUPPORT)).toMatchObject({ ok: true, version: "2025-06-18" });
    }
  });

  it("lets a ping before initialize through under the newest legacy version", () => {
    expect(requestProtocolVersion({ jsonrpc: "2.0", id: 1, method: "ping" }, undefined, SUPPORT)).toEqual({
      ok: true,
      era: "legacy",
      source: "pre-initialize",
      version: "2025-11-25",
    });
    const d = requestProtocolVersion({ jsonrpc: "2.0", id: 1, method: "ping" }, undefined);
    expect(d.ok && validatorsFor(d.version)?.messageDefinition("c2s", "ping")).toBeTruthy();
  });

  it("routes initialize to legacy negotiation, whatever its _meta and session", () => {
    const init = (protocolVersion: unknown, meta?: Record<string, unknown>) => ({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion, capabilities: {}, clientInfo: { name: "c", version: "1" }, ...(meta ? { _meta: meta } : {}) },
    });
    expect(requestProtocolVersion(init("2025-06-18"), undefined, SUPPORT)).toEqual({
      ok: true,
      era: "legacy",
      source: "initialize",
      version: "2025-06-18",
    });
    expect(requestProtocolVersion(init(MODERN), undefined, SUPPORT)).toMatchObject({
      version: "2025-11-25",
      source: "initialize",
    });
    expect(requestProtocolVersion(init("2024-11-05"), "2025-06-18", SUPPORT)).toMatchObject({
      version: "2024-11-05",
      source: "initialize",
    });
    expect(requestProtocolVersion(init("2025-06-18", { [PROTOCOL_VERSION_META_KEY]: MODERN }), undefined, SUPPORT)).toMatchObject({
      era: "legacy",
      version: "2025-06-18",
    });
  });

  it("rejects initialize on a modern-only offer, naming the versions it does support", () => {
    const error = errorOf(
      requestProtocolVersion({ jsonrpc: "2.0", id: 0, method: "initialize", params: {} }, undefined, {
        modern: [MODERN],
        legacy: [],
      }),
    );
    expect(error.code).toBe(-32602);
    expect(error.message).toContain(MODERN);
  });

  it.skipIf(examplesMissing !== undefined)(skipTitle("puts every official 2026-07-28 request example under 2026-07-28", examplesMissing), () => {
    const requestDirs = readdirSync(EXAMPLES).filter((d) => /Request$/.test(d));
    let seen = 0;
    for (const dir of requestDirs) {
      for (const file of readdirSync(path.join(EXAMPLES, dir))) {
        const message = JSON.parse(readFileSync(path.join(EXAMPLES, dir, file), "utf8")) as Record<string, unknown>;
        if (!("jsonrpc" in message)) continue; // input requests (sampling, roots, elicitation) are not JSON-RPC requests
        seen++;
        expect(requestProtocolVersion(message, undefined), `${dir}/${file}`).toEqual({
          ok: true,
          era: "modern",
          version: MODERN,
        });
      }
    }
    expect(seen).toBeGreaterThan(5);
  });
});

describe("notificationProtocolVersion", () => {
  it("follows the session, else reads notifications as the newest modern version", () => {
    expect(notificationProtocolVersion("2025-06-18", SUPPORT)).toBe("2025-06-18");
    expect(notificationProtocolVersion(undefined, { modern: ["2027-01-01", MODERN], legacy: [] })).toBe("2027-01-01");
    expect(notificationProtocolVersion(undefined, { modern: [], legacy: ["2025-06-18"] })).toBeUndefined();
  });
});

describe("per-request metadata", () => {
  it("extracts the per-request protocol fields as sent", () => {
    const message = modernRequest("tools/list");
    (message.params as { _meta: Record<string, unknown> })._meta["io.modelcontextprotocol/clientInfo"] = {
      name: "c",
      version: "1",
    };
    (message.params as { _meta: Record<string, unknown> })._meta["io.modelcontextprotocol/logLevel"] = "info";
    (message.params as { _meta: Record<string, unknown> })._meta["progressToken"] = "p1";
    expect(requestMetaFields(message)).toEqual({
      protocolVersion: MODERN,
      clientCapabilities: {},
      clientInfo: { name: "c", version: "1" },
      logLevel: "info",
      progressToken: "p1",
    });
    expect(requestMetaFields({ method: "tools/list" })).toEqual({});
  });

  it("allows log notifications only at or above the level the request opted in to", () => {
    const at = (level: unknown) => {
      const m = modernRequest("tools/call", { name: "t" });
      (m.params as { _meta: Record<string, unknown> })._meta["io.modelcontextprotocol/logLevel"] = level;
      return m;
    };
    expect(requestAllowsLogLevel(modernRequest("tools/call"), "emergency")).toBe(false);
    expect(requestAllowsLogLevel(at("warning"), "warning")).toBe(true);
    expect(requestAllowsLogLevel(at("warning"), "error")).toBe(true);
    expect(requestAllowsLogLevel(at("warning"), "notice")).toBe(false);
    expect(requestAllowsLogLevel(at("debug"), "debug")).toBe(true);
    expect(requestAllowsLogLevel(at("verbose"), "emergency")).toBe(false);
  });
});

describe("MCP 2026-07-28 error objects", () => {
  it("builds UnsupportedProtocolVersionError with code -32022 and data {requested, supported}", () => {
    const error = unsupportedProtocolVersionError("1900-01-01", ["2026-07-28", "2025-11-25"]);
    expect(error).toMatchObject({ code: -32022, data: { requested: "1900-01-01", supported: ["2026-07-28", "2025-11-25"] } });
    expect(error.message).toContain("1900-01-01");
    expect(check("UnsupportedProtocolVersionError", { jsonrpc: "2.0", id: "a", error })).toBe("ok");
    expect(check("JSONRPCErrorResponse", { jsonrpc: "2.0", id: "a", error })).toBe("ok");
    expect(unsupportedProtocolVersionError("x").data).toEqual({ requested: "x", supported: [...DEFAULT_VERSION_SUPPORT.modern] });
  });

  it("builds MissingRequiredClientCapabilityError with code -32021 and data.requiredCapabilities", () => {
    const error = missingRequiredClientCapabilityError({ elicitation: {} });
    expect(error).toMatchObject({ code: -32021, data: { requiredCapabilities: { elicitation: {} } } });
    expect(error.message).toContain("elicitation");
    expect(check("MissingRequiredClientCapabilityError", { jsonrpc: "2.0", id: 1, error })).toBe("ok");
  });

  it("builds HeaderMismatchError with code -32020", () => {
    const error = headerMismatchError("Mcp-Method header does not match the body");
    expect(check("HeaderMismatchError", { jsonrpc: "2.0", id: 1, error })).toBe("ok");
    expect(check("HeaderMismatchError", { jsonrpc: "2.0", id: 1, error: { ...error, code: -32022 } })).not.toBe("ok");
  });
});

describe("buildDiscoverResult", () => {
  it("builds a schema-valid DiscoverResult with conservative caching defaults", () => {
    const result = buildDiscoverResult({ serverInfo: SERVER_INFO, capabilities: { tools: { listChanged: false } } });
    expect(check("DiscoverResult", result)).toBe("ok");
    expect(check("DiscoverResultResponse", { jsonrpc: "2.0", id: "discover-1", result })).toBe("ok");
    expect(result).toEqual({
      resultType: "complete",
      supportedVersions: [...DEFAULT_VERSION_SUPPORT.modern],
      capabilities: { tools: { listChanged: false } },
      ttlMs: 0,
      cacheScope: "private",
      _meta: { [SERVER_INFO_META_KEY]: SERVER_INFO },
    });
    expect("instructions" in result).toBe(false);
  });

  it("passes instructions, versions and caching hints through", () => {
    const result = buildDiscoverResult({
      serverInfo: SERVER_INFO,
      capabilities: {},
      instructions: "Use the tools.",
      supportedVersions: ["2026-07-28", "2025-11-25"],
      ttlMs: 3_600_000,
      cacheScope: "public",
    });
    expect(check("DiscoverResult", result)).toBe("ok");
    expect(result).toMatchObject({
      instructions: "Use the tools.",
      supportedVersions: ["2026-07-28", "2025-11-25"],
      ttlMs: 3_600_000,
      cacheScope: "public",
    });
  });

  it("rejects a ttlMs that is negative or not an integer", () => {
    expect(() => buildDiscoverResult({ serverInfo: SERVER_INFO, capabilities: {}, ttlMs: -1 })).toThrow(RangeError);
    expect(() => buildDiscoverResult({ serverInfo: SERVER_INFO, capabilities: {}, ttlMs: 1.5 })).toThrow(RangeError);
  });
});

describe("decorateResult", () => {
  const tools = { tools: [{ name: "echo", inputSchema: { type: "object" } }] };

  it("adds resultType, serverInfo and the caching members a modern tools/list result requires", () => {
    expect(check("ListToolsResult", tools)).not.toBe("ok"); // undecorated: not valid 2026-07-28
    const out = decorateResult(MODERN, "tools/list", tools, { serverInfo: SERVER_INFO });
    expect(check("ListToolsResult", out)).toBe("ok");
    expect(out).toEqual({
      ...tools,
      resultType: "complete",
      ttlMs: 0,
      cacheScope: "private",
      _meta: { [SERVER_INFO_META_KEY]: SERVER_INFO },
    });
    expect(tools).toEqual({ tools: [{ name: "echo", inputSchema: { type: "object" } }] }); // input untouched
  });

  it("adds only resultType (and serverInfo) to a result of a method that is not cacheable", () => {
    const call = { content: [{ type: "text", text: "hi" }] };
    const out = decorateResult(MODERN, "tools/call", call);
    expect(out).toEqual({ ...call, resultType: "complete" });
    expect(check("CallToolResult", out)).toBe("ok");
  });

  it("never overwrites members already present, and keeps other _meta members", () => {
    const given = { tools: [], resultType: "complete", ttlMs: 60_000, cacheScope: "public", _meta: { "com.example/x": 1 } };
    const out = decorateResult(MODERN, "tools/list", given, { serverInfo: SERVER_INFO, ttlMs: 5, cacheScope: "private" });
    expect(out).toEqual({ ...given, _meta: { "com.example/x": 1, [SERVER_INFO_META_KEY]: SERVER_INFO } });
    const own = { content: [], _meta: { [SERVER_INFO_META_KEY]: { name: "other", version: "1" } } };
    expect(decorateResult(MODERN, "tools/call", own, { serverInfo: SERVER_INFO })._meta).toEqual(own._meta);
  });

  it("leaves an input_required result without caching members", () => {
    const pending = { resultType: "input_required", requestState: "abc" };
    const out = decorateResult(MODERN, "resources/read", pending, { serverInfo: SERVER_INFO });
    expect(out).toEqual({ ...pending, _meta: { [SERVER_INFO_META_KEY]: SERVER_INFO } });
    expect(check("InputRequiredResult", out)).toBe("ok");
  });

  it("applies caller caching hints to cacheable methods", () => {
    const out = decorateResult(MODERN, "prompts/list", { prompts: [] }, { ttlMs: 1000, cacheScope: "public" });
    expect(out).toMatchObject({ ttlMs: 1000, cacheScope: "public" });
    expect(check("ListPromptsResult", out)).toBe("ok");
  });

  it("returns legacy and unknown-version results unchanged", () => {
    expect(decorateResult("2025-06-18", "tools/list", tools, { serverInfo: SERVER_INFO })).toBe(tools);
    expect(decorateResult("1900-01-01", "tools/list", tools)).toBe(tools);
  });

  it("lists as cacheable exactly the methods whose 2026-07-28 result requires ttlMs and cacheScope", () => {
    const schema = JSON.parse(readFileSync(path.join(ROOT, "schemas/mcp", MODERN, "schema.json"), "utf8")) as {
      $defs: Record<string, { required?: string[] }>;
    };
    const table = GENERATED_PROTOCOLS[MODERN]!.methods.c2s;
    const requiring = Object.entries(table)
      .filter(([, entry]) => entry.kind === "request")
      .filter(([, entry]) => {
        const required = schema.$defs[entry.resultDefinition ?? ""]?.required ?? [];
        return required.includes("ttlMs") && required.includes("cacheScope");
      })
      .map(([method]) => method)
      .sort();
    expect(requiring).toEqual([...CACHEABLE_METHODS].sort());
  });
});
