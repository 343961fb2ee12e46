/**
 * Per-revision loading of the generated validators (`src/mcp/lazy-validators.ts`, used by the
 * `validate --jobs` workers): same tables and verdicts as the eager facade once loaded, a
 * recognisable error (and a request to load) before.
 */
import { describe, expect, it } from "vitest";
import { GENERATED_VERSIONS } from "../../src/gen/mcp/catalog.js";
import { lazyValidatorsFor, loadValidators, takeRequestedVersions, validatorsLoaded, ValidatorsNotLoadedError } from "../../src/mcp/lazy-validators.js";
import { validatorsFor } from "../../src/mcp/validation.js";

describe("lazy generated validators", () => {
  it("knows exactly the generated revisions", () => {
    for (const v of GENERATED_VERSIONS) expect(lazyValidatorsFor(v), v).toBeDefined();
    expect(lazyValidatorsFor("1999-01-01")).toBeUndefined();
    expect(lazyValidatorsFor("toString")).toBeUndefined();
  });

  it("answers method tables before loading, asks to be loaded on validate, then agrees with validatorsFor", async () => {
    const version = "2025-03-26";
    const lazy = lazyValidatorsFor(version)!;
    const eager = validatorsFor(version)!;
    expect(lazy.messageDefinition("c2s", "tools/call")).toEqual(eager.messageDefinition("c2s", "tools/call"));
    expect(lazy.has("CallToolRequest")).toBe(true);
    takeRequestedVersions();
    if (!validatorsLoaded(version)) {
      expect(() => lazy.validate("CallToolRequest", {})).toThrow(ValidatorsNotLoadedError);
      expect(takeRequestedVersions()).toEqual([version]);
      expect(takeRequestedVersions()).toEqual([]);
    }
    await loadValidators([version, "1999-01-01"]);
    expect(validatorsLoaded(version)).toBe(true);
    const good = { method: "tools/call", params: { name: "x", arguments: {} } };
    const bad = { method: "tools/call", params: { arguments: 3 } };
    expect(lazy.validate("CallToolRequest", good)).toBeNull();
    expect(lazy.validate("CallToolRequest", bad)).toEqual(eager.validate("CallToolRequest", bad));
    expect(() => lazy.validate("NoSuchDefinition", good)).toThrow(/no schema definition/);
  });
});
