/**
 * Our schemas/mcp/2025-06-18/schema.json must give the same verdicts as the official MCP
 * 2025-06-18 schema on every message both cover. Checked with the generated (shipped) validators
 * against the official schema compiled directly with ajv, on:
 *  - hand-written valid samples for every definition,
 *  - every sample validated against every definition (cross-validation: mostly invalid pairs),
 *  - systematic mutations of every sample against its own definition and the unions around it.
 * Format checks are this project's (src/mcp/formats.ts) on both sides, so the comparison is
 * about the schemas themselves.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv } from "ajv";
import ajvFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { MCP_FORMATS } from "../../src/mcp/formats.js";
import { GENERATED_PROTOCOLS } from "../../src/gen/mcp/index.js";
import { validatorsFor } from "../../src/mcp/validation.js";
import { allSamples, mutations, SAMPLES } from "./mcp-samples.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const OFFICIAL = path.resolve(ROOT, "../shared/mcp-schema/2025-06-18/schema.json");
const OURS = path.join(ROOT, "schemas/mcp/2025-06-18/schema.json");
const haveShared = existsSync(OFFICIAL);

/** Unions whose official form has members we do not define: compare only on our members' methods. */
const RESTRICTED_UNIONS = new Set(["ClientRequest", "ClientNotification", "ServerRequest", "ServerNotification"]);

function officialValidators(): (definition: string, data: unknown) => boolean {
  const schema = JSON.parse(readFileSync(OFFICIAL, "utf8")) as object;
  const ajv = new Ajv({ strict: false, allErrors: false, allowUnionTypes: true, logger: false });
  ajvFormats.default(ajv); // CJS module: the plugin is its `default` under NodeNext typing
  for (const [name, check] of Object.entries(MCP_FORMATS)) ajv.addFormat(name, check);
  ajv.addSchema(schema, "official");
  return (definition, data) => {
    const v = ajv.getSchema(`official#/definitions/${definition}`);
    if (!v) throw new Error(`official schema lacks ${definition}`);
    return v(data) as boolean;
  };
}

describe.skipIf(!haveShared)("schema agreement with the official MCP 2025-06-18 schema (needs ../shared/mcp-schema; skipped without it)", () => {
  const ours = validatorsFor("2025-06-18");
  const generated = GENERATED_PROTOCOLS["2025-06-18"];
  if (!ours || !generated) throw new Error("no generated validators for 2025-06-18");
  // Verdicts straight from the generated validators (what validatorsFor uses), without building issues.
  const ourVerdict = (definition: string, data: unknown): boolean => {
    const v = generated.validators[definition];
    if (!v) throw new Error(`no generated validator for ${definition}`);
    return v(data);
  };
  const ourDefinitions = Object.keys(
    (JSON.parse(readFileSync(OURS, "utf8")) as { definitions: Record<string, unknown> }).definitions,
  ).sort();

  it("defines only names the specification defines, and has samples for each", () => {
    const official = JSON.parse(readFileSync(OFFICIAL, "utf8")) as { definitions: Record<string, unknown> };
    expect(ourDefinitions.filter((d) => !(d in official.definitions))).toEqual([]);
    expect(ourDefinitions.filter((d) => !SAMPLES[d]?.length)).toEqual([]);
  });

  it("agrees on valid samples, cross-validated samples and mutations", () => {
    const official = officialValidators();
    // Methods our restricted unions know; other official methods are out of scope for them.
    const ourMethods = new Set<string>();
    for (const dir of ["c2s", "s2c"] as const) {
      for (const s of allSamples()) {
        const m = (s as { method?: unknown }).method;
        if (typeof m === "string" && ours.messageDefinition(dir, m)) ourMethods.add(m);
      }
    }
    const disagreements: string[] = [];
    let checked = 0;
    let invalid = 0;
    const compare = (definition: string, data: unknown, origin: string): void => {
      if (RESTRICTED_UNIONS.has(definition)) {
        const m = (data as { method?: unknown } | null)?.method;
        if (typeof m === "string" && !ourMethods.has(m) && official(definition, data)) return;
      }
      const theirs = official(definition, data);
      const mine = ourVerdict(definition, data);
      checked++;
      if (!theirs) invalid++;
      if (mine !== theirs && disagreements.length < 20) {
        disagreements.push(`${definition} (${origin}): ours=${mine} official=${theirs} ${JSON.stringify(data).slice(0, 200)}`);
      }
    };

    // 1. every sample is valid for its definition, on both sides
    for (const [definition, samples] of Object.entries(SAMPLES)) {
      for (const s of samples) {
        expect(official(definition, s), `official rejects sample of ${definition}: ${JSON.stringify(s)}`).toBe(true);
        expect(ours.validate(definition, s), `facade rejects sample of ${definition}`).toBeNull();
        compare(definition, s, "sample");
      }
    }
    // 2. every sample against every definition
    const everything = allSamples();
    for (const definition of ourDefinitions) for (const s of everything) compare(definition, s, "cross");
    // 3. mutations of each sample against its definition and the message-level unions
    const messageUnions = ["JSONRPCMessage", "ClientRequest", "ClientNotification", "ServerRequest", "ServerNotification", "ServerResult"];
    for (const [definition, samples] of Object.entries(SAMPLES)) {
      for (const s of samples) {
        for (const m of mutations(s)) {
          compare(definition, m, "mutation");
          if (typeof s === "object" && s !== null && ("method" in s || "result" in s || "error" in s || definition.endsWith("Result"))) {
            for (const u of messageUnions) compare(u, m, "mutation");
          }
        }
      }
    }

    expect(disagreements).toEqual([]);
    // The corpus must exercise both verdicts heavily, or agreement would mean little.
    expect(checked).toBeGreaterThan(20_000);
    expect(invalid).toBeGreaterThan(checked / 3);
    expect(checked - invalid).toBeGreaterThan(1_000);
  });
});
