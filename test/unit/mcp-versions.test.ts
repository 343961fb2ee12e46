/** Protocol version list and negotiation (MCP 2025-06-18 basic/lifecycle#version-negotiation). */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as negotiation from "../../src/mcp/negotiation.js";
import { validatorsFor } from "../../src/mcp/validation.js";
import {
  allowsBatches,
  BATCH_PROTOCOL_VERSIONS,
  DEFAULT_VERSION_SUPPORT,
  definesServerCapability,
  governingVersion,
  isSupportedProtocolVersion,
  LATEST_PROTOCOL_VERSION,
  LEGACY_PROTOCOL_VERSIONS,
  MODERN_PROTOCOL_VERSIONS,
  negotiateProtocolVersion,
  PROTOCOL_VERSION_META_KEY,
  protocolEra,
  SUPPORTED_PROTOCOL_VERSIONS,
  usesInitialize,
  versionFacts,
} from "../../src/mcp/versions.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

describe("protocol versions", () => {
  it("lists 2025-06-18, oldest first without duplicates, latest last", () => {
    expect(SUPPORTED_PROTOCOL_VERSIONS).toContain("2025-06-18");
    expect([...SUPPORTED_PROTOCOL_VERSIONS]).toEqual([...new Set(SUPPORTED_PROTOCOL_VERSIONS)].sort());
    expect(LATEST_PROTOCOL_VERSION).toBe(SUPPORTED_PROTOCOL_VERSIONS[SUPPORTED_PROTOCOL_VERSIONS.length - 1]);
    expect(Object.isFrozen(SUPPORTED_PROTOCOL_VERSIONS)).toBe(true);
  });

  it("has generated validators for every supported version", () => {
    for (const v of SUPPORTED_PROTOCOL_VERSIONS) expect(validatorsFor(v), v).toBeDefined();
  });

  it("answers with the client's version when supported", () => {
    for (const v of SUPPORTED_PROTOCOL_VERSIONS) expect(negotiateProtocolVersion(v)).toBe(v);
    expect(isSupportedProtocolVersion("2025-06-18")).toBe(true);
  });

  it("answers with our latest version otherwise", () => {
    for (const requested of ["2024-10-07", "2099-01-01", "", "2025-06-18 ", "latest"]) {
      expect(isSupportedProtocolVersion(requested)).toBe(false);
      expect(negotiateProtocolVersion(requested)).toBe(LATEST_PROTOCOL_VERSION);
    }
  });
});

describe("one owner of versions, eras and facts (src/mcp/versions.ts)", () => {
  const schemaOf = (v: string): { definitions?: Record<string, unknown>; $defs?: Record<string, unknown> } =>
    JSON.parse(readFileSync(path.join(ROOT, "schemas/mcp", v, "schema.json"), "utf8")) as never;

  it("supports exactly the revisions under schemas/mcp/", () => {
    const dirs = readdirSync(path.join(ROOT, "schemas/mcp"), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    expect([...SUPPORTED_PROTOCOL_VERSIONS]).toEqual(dirs);
  });

  it("reads each revision's era from its schema: legacy iff initialize is a client request", () => {
    for (const v of SUPPORTED_PROTOCOL_VERSIONS) {
      const hasInitialize = validatorsFor(v)!.messageDefinition("c2s", "initialize") !== undefined;
      expect(protocolEra(v), v).toBe(hasInitialize ? "legacy" : "modern");
      expect(usesInitialize(v), v).toBe(hasInitialize);
    }
    expect([...LEGACY_PROTOCOL_VERSIONS]).toEqual(SUPPORTED_PROTOCOL_VERSIONS.filter((v) => protocolEra(v) === "legacy").reverse());
    expect([...MODERN_PROTOCOL_VERSIONS]).toEqual(SUPPORTED_PROTOCOL_VERSIONS.filter((v) => protocolEra(v) === "modern").reverse());
    expect(protocolEra("1900-01-01")).toBeUndefined();
    // today's revisions: four initialize-based ones, newest 2025-11-25, then the stateless 2026-07-28
    expect(LEGACY_PROTOCOL_VERSIONS[0]).toBe("2025-11-25");
    expect(MODERN_PROTOCOL_VERSIONS).toContain("2026-07-28");
  });

  it("derives the facts from what each schema defines", () => {
    for (const v of SUPPORTED_PROTOCOL_VERSIONS) {
      const schema = schemaOf(v);
      const defs = (schema.$defs ?? schema.definitions) as Record<string, { properties?: Record<string, unknown> }>;
      const facts = versionFacts(v)!;
      expect(facts.batches, v).toBe("JSONRPCBatchRequest" in defs);
      expect(facts.audioContent, v).toBe("AudioContent" in defs);
      expect(facts.resourceLinks, v).toBe("ResourceLink" in defs);
      expect(facts.structuredContent, v).toBe("structuredContent" in (defs["CallToolResult"]?.properties ?? {}));
      expect(facts.serverCapabilities, v).toEqual(Object.keys(defs["ServerCapabilities"]?.properties ?? {}).sort());
    }
    expect([...BATCH_PROTOCOL_VERSIONS]).toEqual(["2025-03-26"]);
    expect(allowsBatches("2025-03-26")).toBe(true);
    expect(allowsBatches("2025-06-18")).toBe(false);
    expect(definesServerCapability("2024-11-05", "completions")).toBe(false);
    expect(definesServerCapability("2025-03-26", "completions")).toBe(true);
  });

  it("governs an unsupported revision by the nearest older supported one (the oldest before them all)", () => {
    expect(governingVersion("2025-06-18")).toBe("2025-06-18");
    expect(governingVersion("2025-12-01")).toBe("2025-11-25");
    expect(governingVersion("2099-01-01")).toBe(LATEST_PROTOCOL_VERSION);
    expect(governingVersion("1999-01-01")).toBe(SUPPORTED_PROTOCOL_VERSIONS[0]);
    expect(usesInitialize("2025-12-01")).toBe(true);
    expect(usesInitialize("2099-01-01")).toBe(false);
  });

  it("is what negotiation re-exports (one copy of each list and key)", () => {
    expect(negotiation.DEFAULT_VERSION_SUPPORT).toBe(DEFAULT_VERSION_SUPPORT);
    expect(negotiation.PROTOCOL_VERSION_META_KEY).toBe(PROTOCOL_VERSION_META_KEY);
    expect(negotiation.protocolEra).toBe(protocolEra);
  });
});
