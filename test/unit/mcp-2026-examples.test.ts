/**
 * The MCP 2026-07-28 specification ships valid instances of its definitions in
 * `../shared/mcp-schema/2026-07-28/examples/<Definition>/*.json`. This file checks our
 * `schemas/mcp/2026-07-28/schema.json`, through the generated validators (`validatorsFor`), on them:
 *
 *  1. every example validates against the definition its folder names, with ours and with the
 *     official schema (compiled with ajv's 2020-12 class);
 *  2. mutations that the official definition's own root facts make invalid (a required member
 *     dropped, a member replaced by a value of another JSON type or a different constant, the whole
 *     instance replaced by a non-object) are rejected by both;
 *  3. every example against every definition gives the same verdict on both sides.
 *
 * Format checks are this project's (src/mcp/formats.ts) on both sides, over ajv-formats on the
 * official side, as in mcp-schema-agreement.test.ts. Skips when ../shared is absent.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import ajvFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { GENERATED_PROTOCOLS } from "../../src/gen/mcp/index.js";
import { MCP_FORMATS } from "../../src/mcp/formats.js";
import { validatorsFor } from "../../src/mcp/validation.js";
import { firstReason, requireShared, sharedPath, skipTitle } from "../helpers/requires.js";

const VERSION = "2026-07-28";
const SHARED = sharedPath(`mcp-schema/${VERSION}`);
const OFFICIAL = path.join(SHARED, "schema.json");
const EXAMPLES = path.join(SHARED, "examples");
const sharedMissing = firstReason(requireShared(`mcp-schema/${VERSION}/schema.json`), requireShared(`mcp-schema/${VERSION}/examples`));

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type SchemaNode = { [key: string]: unknown };

interface Example {
  definition: string;
  file: string;
  data: Json;
}

function loadExamples(): Example[] {
  const out: Example[] = [];
  for (const definition of readdirSync(EXAMPLES).sort()) {
    const dir = path.join(EXAMPLES, definition);
    for (const file of readdirSync(dir)
      .filter((f) => f.endsWith(".json"))
      .sort()) {
      out.push({ definition, file, data: JSON.parse(readFileSync(path.join(dir, file), "utf8")) as Json });
    }
  }
  return out;
}

function officialSchema(): { $defs: Record<string, SchemaNode> } {
  return JSON.parse(readFileSync(OFFICIAL, "utf8")) as { $defs: Record<string, SchemaNode> };
}

/** Verdicts of the official schema, compiled once per definition with ajv's 2020-12 class. */
function officialValidator(): (definition: string, data: unknown) => boolean {
  const ajv = new Ajv2020({ strict: false, allErrors: false, allowUnionTypes: true, logger: false });
  ajvFormats.default(ajv); // CJS module: the plugin is its `default` under NodeNext typing
  for (const [name, check] of Object.entries(MCP_FORMATS)) ajv.addFormat(name, check);
  ajv.addSchema(officialSchema(), "official");
  return (definition, data) => {
    const v = ajv.getSchema(`official#/$defs/${definition}`);
    if (!v) throw new Error(`official schema lacks ${definition}`);
    return v(data) as boolean;
  };
}

/** Follow local `$ref`s (and single-member `allOf`s) to the node that states `type`/`const`. */
function resolve(defs: Record<string, SchemaNode>, node: SchemaNode): SchemaNode {
  let cur = node;
  for (let i = 0; i < 16 && typeof cur["$ref"] === "string"; i++) {
    const name = (cur["$ref"] as string).replace("#/$defs/", "");
    const next = defs[name];
    if (!next) throw new Error(`unresolvable ${String(cur["$ref"])}`);
    cur = next;
  }
  return cur;
}

/**
 * The JSON types a schema admits, from its `type` or, for an `anyOf`, the union over its branches;
 * undefined when the schema does not restrict the type (e.g. `{}`).
 */
function admittedTypes(defs: Record<string, SchemaNode>, node: SchemaNode): string[] | undefined {
  const target = resolve(defs, node);
  const declared = target["type"];
  if (declared !== undefined) return Array.isArray(declared) ? (declared as string[]) : [declared as string];
  if (Array.isArray(target["anyOf"])) {
    const all = new Set<string>();
    for (const branch of target["anyOf"] as SchemaNode[]) {
      const types = admittedTypes(defs, branch);
      if (!types) return undefined;
      for (const t of types) all.add(t);
    }
    return [...all];
  }
  return undefined;
}

/** JSON type of a value, as JSON Schema names them. */
function jsonType(value: Json): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** A value whose JSON type is none of `types` (integer counts as number too). */
function valueOutside(types: readonly string[]): Json | undefined {
  const candidates: Array<[string[], Json]> = [
    [["null"], null],
    [["boolean"], true],
    [["number", "integer"], 12.5],
    [["string"], "mutated"],
    [["array"], ["mutated"]],
    [["object"], { mutated: true }],
  ];
  for (const [covers, value] of candidates) {
    const excluded = covers.some((t) => types.includes(t)) || (covers.includes("number") && types.includes("integer"));
    if (!excluded) return value;
  }
  return undefined;
}

interface Mutation {
  label: string;
  data: Json;
}

/**
 * Mutations of an object example that the official definition's root facts make invalid:
 * - each `required` member dropped;
 * - each present member whose schema admits only some JSON types (`type`, or an `anyOf` of such
 *   schemas; `additionalProperties` for members not listed) replaced by a value of another type;
 * - each present member whose schema states a string/number `const` replaced by another constant;
 * - the whole instance replaced by a string (every example definition is an object type).
 */
function invalidMutations(defs: Record<string, SchemaNode>, definition: string, data: Json): Mutation[] {
  const def = resolve(defs, defs[definition] ?? {});
  const out: Mutation[] = [];
  if (def["type"] === "object") out.push({ label: "whole instance → string", data: "not an object" });
  if (data === null || typeof data !== "object" || Array.isArray(data)) return out;
  for (const key of (def["required"] as string[] | undefined) ?? []) {
    if (!(key in data)) continue;
    const copy = { ...data };
    delete copy[key];
    out.push({ label: `drop required ${key}`, data: copy });
  }
  const props = (def["properties"] ?? {}) as Record<string, SchemaNode>;
  const additional = def["additionalProperties"];
  for (const key of Object.keys(data)) {
    const propSchema = props[key] ?? (additional !== null && typeof additional === "object" ? (additional as SchemaNode) : undefined);
    if (!propSchema) continue;
    const target = resolve(defs, propSchema);
    if (target["const"] !== undefined) {
      const c = target["const"];
      const other: Json = typeof c === "number" ? c - 1 : `${String(c)}-mutated`;
      out.push({ label: `${key}: const ${JSON.stringify(c)} → ${JSON.stringify(other)}`, data: { ...data, [key]: other } });
    }
    const types = admittedTypes(defs, propSchema);
    if (types !== undefined) {
      const replacement = valueOutside(types);
      if (replacement !== undefined && !types.includes(jsonType(replacement))) {
        out.push({ label: `${key}: ${types.join("|")} → ${jsonType(replacement)}`, data: { ...data, [key]: replacement } });
      }
    }
  }
  return out;
}

describe.skipIf(sharedMissing !== undefined)(skipTitle(`MCP ${VERSION} official examples`, sharedMissing), () => {
  const examples = sharedMissing === undefined ? loadExamples() : [];
  const ours = validatorsFor(VERSION);
  const generated = GENERATED_PROTOCOLS[VERSION];
  // One official compilation for the whole file (definitions compile lazily, on first use).
  let officialCache: ((definition: string, data: unknown) => boolean) | undefined;
  const officialVerdicts = () => (officialCache ??= officialValidator());
  const ourVerdict = (definition: string, data: unknown): boolean => {
    const v = generated?.validators[definition];
    if (!v) throw new Error(`no generated validator for ${definition}`);
    return v(data);
  };

  it("has generated validators for this version and examples to check", () => {
    expect(ours, `validatorsFor("${VERSION}")`).toBeDefined();
    expect(generated).toBeDefined();
    expect(examples.length).toBeGreaterThan(100);
    const missing = [...new Set(examples.map((e) => e.definition))].filter((d) => !ours?.has(d));
    expect(missing, "example folders naming a definition our schema lacks").toEqual([]);
  });

  it("accepts every official example for its definition, as the official schema does", () => {
    const official = officialVerdicts();
    const failures: string[] = [];
    for (const ex of examples) {
      const where = `${ex.definition}/${ex.file}`;
      if (!official(ex.definition, ex.data)) failures.push(`official rejects ${where}`);
      const issues = ours?.validate(ex.definition, ex.data);
      if (issues) failures.push(`ours rejects ${where}: ${issues.map((i) => `${i.pointer || "/"} ${i.reason}`).join("; ")}`);
    }
    expect(failures).toEqual([]);
  });

  it("rejects, like the official schema, mutations the definition's root facts make invalid", () => {
    const official = officialVerdicts();
    const defs = officialSchema().$defs;
    const failures: string[] = [];
    let total = 0;
    for (const ex of examples) {
      const mutations = invalidMutations(defs, ex.definition, ex.data);
      // Every example yields at least the non-object replacement and one member mutation.
      if (mutations.length < 2) failures.push(`${ex.definition}/${ex.file}: only ${mutations.length} mutation(s)`);
      for (const m of mutations) {
        total++;
        const where = `${ex.definition}/${ex.file} [${m.label}]`;
        if (official(ex.definition, m.data)) failures.push(`official accepts ${where}`);
        if (ourVerdict(ex.definition, m.data)) failures.push(`ours accepts ${where}`);
      }
    }
    expect(failures).toEqual([]);
    expect(total).toBeGreaterThan(examples.length * 3);
  });

  it("gives the official verdict for every example against every definition", () => {
    const official = officialVerdicts();
    const definitions = [...(generated?.definitions ?? [])];
    const disagreements: string[] = [];
    let accepted = 0;
    for (const definition of definitions) {
      for (const ex of examples) {
        const theirs = official(definition, ex.data);
        if (theirs) accepted++;
        if (ourVerdict(definition, ex.data) !== theirs && disagreements.length < 20) {
          disagreements.push(`${ex.definition}/${ex.file} as ${definition}: official=${theirs}`);
        }
      }
    }
    expect(disagreements).toEqual([]);
    // Both verdicts must occur often, or agreement would mean little.
    expect(accepted).toBeGreaterThan(examples.length);
    expect(accepted).toBeLessThan((definitions.length * examples.length) / 2);
  });
});
