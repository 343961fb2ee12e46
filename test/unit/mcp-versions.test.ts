/** Protocol version list and negotiation (MCP 2025-06-18 basic/lifecycle#version-negotiation). */
import { describe, expect, it } from "vitest";
import { validatorsFor } from "../../src/mcp/validation.js";
import {
  isSupportedProtocolVersion,
  LATEST_PROTOCOL_VERSION,
  negotiateProtocolVersion,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "../../src/mcp/versions.js";

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
