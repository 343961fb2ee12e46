/**
 * Differential test: for every MCP protocol version that has both our schema
 * (schemas/mcp/<v>/schema.json, shipped as the generated validators behind `validatorsFor(v)`) and
 * the official one (../shared/mcp-schema/<v>/schema.json), both must give the same verdict on the
 * same messages:
 *  - instances of every definition we define, generated FROM THE OFFICIAL schema by
 *    test/helpers/schema-instances.ts (every union branch, enum member and optional field
 *    exercised), and single-field mutations of them (dropped / unknown / null / wrong-typed
 *    fields, bad const, enum, format, range, array items), each checked against its own
 *    definition and against the unions that list that definition;
 *  - for 2026-07-28, every official example file (examples/<Definition>/*.json) and structural
 *    mutations of it.
 * At least 10,000 comparisons per version. The official schema is compiled with ajv (draft-07 →
 * `Ajv`, 2020-12 → `Ajv2020`) with the same format checks as ours: this project's
 * (src/mcp/formats.ts: `byte`, `uri`) over ajv-formats' (`uri-template`, …), the precedence the
 * code generator and the run-time compiler use, so the comparison is about the schemas.
 * Deliberate differences are listed in DELIBERATE_DIFFERENCES with their reason; any other
 * disagreement fails. Official definitions we lack are listed per version ("not covered"), without
 * failing. A further test per version proves the corpus is sharp: seeded edits of the official
 * schema (a dropped `required`, a changed `const`, …) must each change some verdict. For
 * 2025-06-18, the hand-written samples of mcp-samples.ts must be valid on both sides.
 * Skips with a reason when ../shared is absent.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv } from "ajv";
import Ajv2020Module from "ajv/dist/2020.js";
import ajvFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { GENERATED_PROTOCOLS, GENERATED_VERSIONS } from "../../src/gen/mcp/index.js";
import { MCP_FORMATS } from "../../src/mcp/formats.js";
import { validatorsFor } from "../../src/mcp/validation.js";
import { SAMPLES } from "../helpers/mcp-samples.js";
import { SchemaInstanceGenerator, structuralMutations, type Json, type Mutation, type MutationKind } from "../helpers/schema-instances.js";
import { requireShared, sharedPath, skipTitle } from "../helpers/requires.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SHARED = sharedPath("mcp-schema");
const sharedMissing = requireShared("mcp-schema");

/** A place where our schema knowingly gives another verdict than the official one. */
interface DeliberateDifference {
  /** Protocol versions it applies to. */
  readonly versions: readonly string[];
  /** Definition owning the differing position (for mutations: the definition of the mutated field). */
  readonly definition: string;
  /** Pointer prefix inside that definition; absent: the whole definition. */
  readonly path?: string;
  /** Mutation kinds concerned; absent: all (and unmutated instances of the definition). */
  readonly kinds?: readonly MutationKind[];
  readonly reason: string;
}

/**
 * Every deliberate difference. Keep it short and give the reason; an entry that no longer
 * excuses anything fails the test (stale entries hide regressions).
 */
const DELIBERATE_DIFFERENCES: readonly DeliberateDifference[] = [];

/** Valid instances generated per definition (unions: at least two per branch). */
const INSTANCES_PER_DEFINITION = 6;
/** Mutations kept per generated instance (kind-balanced seeded sample). */
const MUTATIONS_PER_INSTANCE = 30;
/** Structural mutations kept per official example. */
const MUTATIONS_PER_EXAMPLE = 60;
const MIN_MESSAGES_PER_VERSION = 10_000;
/** Seeded schema edits per version that the corpus must notice. */
const EDITS_PER_VERSION = 14;
const SEED = 20_250_618;
/** The version the hand-written samples in mcp-samples.ts are written for. */
const SAMPLES_VERSION = "2025-06-18";

type Document = {
  $schema?: string;
  definitions?: Record<string, Record<string, unknown>>;
  $defs?: Record<string, Record<string, unknown>>;
};

/** How many instances to generate of a definition: {@link INSTANCES_PER_DEFINITION}, at least two per union branch. */
function instanceCount(def: Record<string, unknown> | undefined): number {
  const branches = def?.["anyOf"] ?? def?.["oneOf"];
  return Math.max(INSTANCES_PER_DEFINITION, 2 * (Array.isArray(branches) ? branches.length : 0));
}

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, "utf8")) as T;
}

function definitionsOf(doc: Document): { defs: Record<string, Record<string, unknown>>; prefix: string } {
  if (doc.$defs) return { defs: doc.$defs, prefix: "#/$defs/" };
  if (doc.definitions) return { defs: doc.definitions, prefix: "#/definitions/" };
  throw new Error("schema without definitions/$defs");
}

/** Format names used anywhere in a schema document. */
function formatsUsed(node: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const x of node) formatsUsed(x, out);
  else if (node && typeof node === "object") {
    for (const [k, v] of Object.entries(node)) {
      if (k === "format" && typeof v === "string") out.add(v);
      else if (k !== "const" && k !== "enum" && k !== "default" && k !== "examples") formatsUsed(v, out);
    }
  }
  return out;
}

/** Minimal view of an ajv instance (draft-07 and 2020-12 classes share it). */
interface AjvLike {
  addFormat(name: string, format: (value: string) => boolean): unknown;
  addSchema(schema: object, key: string): unknown;
  getSchema(ref: string): ((data: unknown) => boolean) | undefined;
}

/**
 * The official schema compiled by ajv; verdict per (definition, data). `borrowed`: formats it uses
 * that src/mcp/formats.ts lacks (checked by ajv-formats on both sides).
 */
function officialVerdicts(doc: Document): {
  verdict: (definition: string, data: unknown) => boolean;
  borrowed: string[];
} {
  const is2020 = doc.$defs !== undefined;
  // ajv/dist/2020.js is CommonJS: under NodeNext its class is the module's `default`.
  const Ajv2020 = (Ajv2020Module as unknown as { default: typeof Ajv }).default;
  const AjvClass = is2020 ? Ajv2020 : Ajv;
  const ajv = new AjvClass({
    strict: false,
    allErrors: false,
    allowUnionTypes: true,
    logger: false,
  }) as unknown as AjvLike;
  ajvFormats.default(ajv as never); // CJS plugin: its function is `default` under NodeNext typing
  for (const [name, check] of Object.entries(MCP_FORMATS)) ajv.addFormat(name, check);
  const borrowed = [...formatsUsed(doc)].filter((f) => !Object.hasOwn(MCP_FORMATS, f)).sort();
  ajv.addSchema(doc, "official");
  const prefix = is2020 ? "#/$defs/" : "#/definitions/";
  const cache = new Map<string, (data: unknown) => boolean>();
  return {
    borrowed,
    verdict: (definition, data) => {
      let v = cache.get(definition);
      if (!v) {
        v = ajv.getSchema(`official${prefix}${definition}`);
        if (!v) throw new Error(`official schema lacks ${definition}`);
        cache.set(definition, v);
      }
      return v(data);
    },
  };
}

/** Definition → the union definitions (top-level anyOf/oneOf) that list it directly. */
function parentUnions(doc: Document): Map<string, string[]> {
  const { defs, prefix } = definitionsOf(doc);
  const out = new Map<string, string[]>();
  for (const [name, def] of Object.entries(defs)) {
    const branches = (def["anyOf"] ?? def["oneOf"]) as unknown;
    if (!Array.isArray(branches)) continue;
    for (const b of branches) {
      const ref = (b as { $ref?: unknown }).$ref;
      if (typeof ref !== "string" || !ref.startsWith(prefix)) continue;
      const member = ref.slice(prefix.length);
      out.set(member, [...(out.get(member) ?? []), name]);
    }
  }
  return out;
}

/** Versions with both our schema and the official one. */
function versionsToCompare(): string[] {
  if (sharedMissing !== undefined) return [];
  return readdirSync(path.join(ROOT, "schemas/mcp"))
    .filter((v) => existsSync(path.join(ROOT, "schemas/mcp", v, "schema.json")) && existsSync(path.join(SHARED, v, "schema.json")))
    .sort();
}

/** A small change to one definition of a schema document, for checking that the corpus notices it. */
interface SchemaEdit {
  readonly definition: string;
  readonly label: string;
  /** Applies the edit to (a copy of) the definition's schema node. */
  readonly apply: (def: Record<string, unknown>) => void;
}

/**
 * Deterministic edits that change what a definition accepts: drop a required name, require an
 * optional property, change a property's const, drop an enum member, change a scalar property's
 * type, forbid unknown properties, drop a union branch. Only top-level nodes and their direct
 * properties of definitions without `allOf` (where an edit could be masked by another part), at
 * most `count`, spread over the definitions and cycling through the kinds.
 */
function seededEdits(doc: Document, count: number): SchemaEdit[] {
  const { defs } = definitionsOf(doc);
  const byKind = new Map<string, SchemaEdit[]>();
  const add = (kind: string, edit: SchemaEdit): void => {
    byKind.set(kind, [...(byKind.get(kind) ?? []), edit]);
  };
  type Node = Record<string, unknown>;
  const propsOf = (def: Node): Record<string, Node> => (def["properties"] ?? {}) as Record<string, Node>;
  const requiredOf = (def: Node): string[] => (Array.isArray(def["required"]) ? (def["required"] as string[]) : []);
  for (const [definition, def] of Object.entries(defs).sort(([a], [b]) => a.localeCompare(b))) {
    if (JSON.stringify(def).includes('"allOf"')) continue;
    const props = propsOf(def);
    for (const name of requiredOf(def)) {
      add("drop-required", {
        definition,
        label: `${definition}: ${name} no longer required`,
        apply: (d) => void (d["required"] = requiredOf(d).filter((r) => r !== name)),
      });
    }
    for (const name of Object.keys(props).filter((n) => !requiredOf(def).includes(n))) {
      add("add-required", {
        definition,
        label: `${definition}: ${name} required`,
        apply: (d) => void (d["required"] = [...requiredOf(d), name]),
      });
    }
    for (const [name, prop] of Object.entries(props)) {
      if (typeof prop["const"] === "string") {
        add("const", {
          definition,
          label: `${definition}: ${name} const changed`,
          apply: (d) => void ((propsOf(d)[name] as Node)["const"] = `${String(prop["const"])}-edited`),
        });
      }
      if (Array.isArray(prop["enum"]) && prop["enum"].length > 1) {
        add("enum", {
          definition,
          label: `${definition}: ${name} enum shortened`,
          apply: (d) => void ((propsOf(d)[name] as Node)["enum"] = (prop["enum"] as unknown[]).slice(1)),
        });
      }
      if (prop["type"] === "string" || prop["type"] === "boolean" || prop["type"] === "integer") {
        add("type", {
          definition,
          label: `${definition}: ${name} type changed`,
          apply: (d) => void ((propsOf(d)[name] as Node)["type"] = prop["type"] === "string" ? "number" : "string"),
        });
      }
    }
    if (Object.keys(props).length > 0 && def["additionalProperties"] === undefined) {
      add("closed", {
        definition,
        label: `${definition}: unknown properties forbidden`,
        apply: (d) => void (d["additionalProperties"] = false),
      });
    }
    // Only unions whose branches all carry a const discriminator: dropping a branch of a union with
    // a catch-all member (ServerResult's Result) changes nothing.
    const branches = Array.isArray(def["anyOf"]) ? (def["anyOf"] as Node[]) : [];
    const discriminated = (b: Node): boolean => {
      const target = typeof b["$ref"] === "string" ? defs[b["$ref"].split("/").pop() ?? ""] : b;
      return Object.values(propsOf(target ?? {})).some((p) => "const" in p);
    };
    if (branches.length > 1 && branches.every(discriminated)) {
      add("branch", {
        definition,
        label: `${definition}: last union branch dropped`,
        apply: (d) => void (d["anyOf"] = (d["anyOf"] as unknown[]).slice(0, -1)),
      });
    }
  }
  const queues = [...byKind.keys()].sort().map((k) => {
    const list = byKind.get(k) ?? [];
    const stride = Math.max(1, Math.floor(list.length / Math.ceil(count / byKind.size)));
    return list.filter((_e, i) => i % stride === 0);
  });
  const out: SchemaEdit[] = [];
  while (out.length < count && queues.some((q) => q.length > 0)) {
    for (const q of queues) {
      const e = q.shift();
      if (e && out.length < count) out.push(e);
    }
  }
  return out;
}

interface Origin {
  readonly source: "generated" | "mutation" | "example" | "example-mutation";
  /** Definition the data was made for. */
  readonly madeFor: string;
  readonly mutation?: Mutation;
  readonly pointer?: string;
}

function excuse(version: string, compared: string, origin: Origin): DeliberateDifference | undefined {
  return DELIBERATE_DIFFERENCES.find((d) => {
    if (!d.versions.includes(version)) return false;
    const m = origin.mutation;
    if (m) {
      if (d.kinds && !d.kinds.includes(m.kind)) return false;
      if (d.definition === m.definition && (d.path === undefined || m.path.startsWith(d.path))) return true;
    } else if (d.kinds) return false;
    return d.path === undefined && (d.definition === compared || d.definition === origin.madeFor);
  });
}

describe.skipIf(sharedMissing !== undefined)(skipTitle("MCP schema agreement with the official schemas", sharedMissing), () => {
  const versions = versionsToCompare();

  it("compares at least one version", () => {
    expect(versions.length).toBeGreaterThan(0);
  });

  for (const version of versions) {
    describe(`MCP ${version}`, () => {
      const official = readJson<Document>(path.join(SHARED, version, "schema.json"));
      const ours = readJson<Document>(path.join(ROOT, "schemas/mcp", version, "schema.json"));
      const officialDefs = definitionsOf(official).defs;
      const ourNames = Object.keys(definitionsOf(ours).defs).sort();
      const shared = ourNames.filter((d) => d in officialDefs);
      const examplesDir = path.join(SHARED, version, "examples");

      it("has generated validators (run `npm run generate` after editing the schema)", () => {
        expect(GENERATED_VERSIONS as readonly string[]).toContain(version);
        expect(validatorsFor(version)).toBeDefined();
      });

      it("uses only definition names the official schema defines", () => {
        expect(ourNames.filter((d) => !(d in officialDefs))).toEqual([]);
      });

      if (version === SAMPLES_VERSION) {
        it("accepts the hand-written samples (mcp-samples.ts) on both sides, with samples for every definition", () => {
          const mine = validatorsFor(version);
          if (!mine) throw new Error(`no generated validators for ${version}`);
          const { verdict: theirs } = officialVerdicts(official);
          expect(ourNames.filter((d) => !SAMPLES[d]?.length)).toEqual([]);
          const rejected: string[] = [];
          for (const [definition, samples] of Object.entries(SAMPLES)) {
            for (const sample of samples) {
              const ours = mine.validate(definition, sample) === null;
              const official = theirs(definition, sample);
              if (!ours || !official) rejected.push(`${definition} (ours=${ours} official=${official}): ${JSON.stringify(sample)}`);
            }
          }
          expect(rejected).toEqual([]);
        });
      }

      it(`coverage summary: official definitions we do not define (${version}; listed, not a failure)`, () => {
        const missing = Object.keys(officialDefs)
          .filter((d) => !ourNames.includes(d))
          .sort();
        const { borrowed } = officialVerdicts(official);
        console.info(
          `[schema-agreement ${version}] ours covers ${shared.length}/${Object.keys(officialDefs).length} official definitions` +
            (missing.length ? `; not covered: ${missing.join(", ")}` : "; full surface") +
            (borrowed.length ? `; formats checked by ajv-formats: ${borrowed.join(", ")}` : ""),
        );
        expect(shared.length).toBeGreaterThan(0);
      });

      it(`gives the official verdict on >= ${MIN_MESSAGES_PER_VERSION.toLocaleString("en")} generated messages and every official example`, () => {
        const mine = validatorsFor(version);
        const generated = GENERATED_PROTOCOLS[version];
        if (!mine || !generated) throw new Error(`no generated validators for ${version}`);
        // Verdicts: the facade (validatorsFor) on unmutated data; on mutations the generated validator
        // it wraps (same verdict: the facade returns null exactly when it passes), skipping the
        // issue building that only failures pay for.
        const raw = (definition: string): ((data: unknown) => boolean) => {
          const v = generated.validators[definition];
          if (!v) throw new Error(`no generated validator for ${definition}`);
          return v;
        };
        const { verdict: theirs } = officialVerdicts(official);
        const parents = parentUnions(official);
        const generator = new SchemaInstanceGenerator(official, { seed: SEED });

        const disagreements: string[] = [];
        const generatorBugs: string[] = [];
        const used = new Set<DeliberateDifference>();
        const stats = { compared: 0, invalid: 0, excused: 0, generated: 0, mutations: 0, examples: 0 };
        const compare = (definition: string, data: unknown, origin: Origin): void => {
          const a = origin.source === "mutation" || origin.source === "example-mutation" ? raw(definition)(data) : mine.validate(definition, data) === null;
          const b = theirs(definition, data);
          stats.compared++;
          if (!b) stats.invalid++;
          if (a === b) return;
          const excused = excuse(version, definition, origin);
          if (excused) {
            used.add(excused);
            stats.excused++;
            return;
          }
          if (disagreements.length < 25) {
            const where = origin.mutation
              ? ` ${origin.mutation.kind} at ${origin.mutation.definition}${origin.mutation.path || " (root)"}`
              : origin.pointer !== undefined
                ? ` at ${origin.pointer || "(root)"}`
                : "";
            disagreements.push(`${definition} [${origin.source} of ${origin.madeFor}${where}]: ours=${a} official=${b} ${JSON.stringify(data).slice(0, 240)}`);
          }
        };
        const targets = (definition: string): string[] => [definition, ...(parents.get(definition) ?? []).filter((p) => ourNames.includes(p))];

        for (const definition of shared) {
          for (const instance of generator.instances(definition, instanceCount(officialDefs[definition]))) {
            stats.generated++;
            if (!theirs(definition, instance.value) && generatorBugs.length < 10) {
              generatorBugs.push(`${definition}: ${JSON.stringify(instance.value).slice(0, 240)}`);
            }
            for (const t of targets(definition)) compare(t, instance.value, { source: "generated", madeFor: definition });
            for (const mutation of generator.mutations(instance, MUTATIONS_PER_INSTANCE)) {
              stats.mutations++;
              for (const t of targets(definition)) compare(t, mutation.value, { source: "mutation", madeFor: definition, mutation });
            }
          }
        }

        if (existsSync(examplesDir)) {
          for (const definition of readdirSync(examplesDir).sort()) {
            if (!ourNames.includes(definition)) continue; // listed as not covered above
            for (const file of readdirSync(path.join(examplesDir, definition))
              .filter((f) => f.endsWith(".json"))
              .sort()) {
              const example = readJson<Json>(path.join(examplesDir, definition, file));
              stats.examples++;
              const label = `${definition}/${file}`;
              expect(theirs(definition, example), `official schema rejects its own example ${label}`).toBe(true);
              compare(definition, example, { source: "example", madeFor: label });
              for (const m of structuralMutations(example, MUTATIONS_PER_EXAMPLE)) {
                compare(definition, m.value, {
                  source: "example-mutation",
                  madeFor: label,
                  pointer: m.pointer,
                });
              }
            }
          }
        }

        console.info(
          `[schema-agreement ${version}] ${stats.compared} comparisons (${stats.invalid} invalid, ${stats.compared - stats.invalid} valid) ` +
            `over ${shared.length} definitions: ${stats.generated} generated instances, ${stats.mutations} mutations, ` +
            `${stats.examples} official examples; ${stats.excused} excused by deliberate differences`,
        );
        expect(generatorBugs, "the generator must produce instances the official schema accepts").toEqual([]);
        expect(disagreements).toEqual([]);
        const stale = DELIBERATE_DIFFERENCES.filter((d) => d.versions.includes(version) && !used.has(d));
        expect(
          stale.map((d) => `${d.definition}${d.path ?? ""}: ${d.reason}`),
          "deliberate differences that no longer occur",
        ).toEqual([]);
        // The corpus must be large and exercise both verdicts, or agreement would mean little.
        expect(stats.compared).toBeGreaterThanOrEqual(MIN_MESSAGES_PER_VERSION);
        expect(stats.invalid).toBeGreaterThan(stats.compared / 5);
        expect(stats.compared - stats.invalid).toBeGreaterThan(stats.compared / 5);
      });

      it(`the corpus notices ${EDITS_PER_VERSION} seeded edits of the official schema (so agreement is meaningful)`, () => {
        const { verdict: original } = officialVerdicts(official);
        const edits = seededEdits(official, EDITS_PER_VERSION);
        expect(edits.length).toBe(EDITS_PER_VERSION);
        const unnoticed: string[] = [];
        for (const edit of edits) {
          const copy = structuredClone(official);
          edit.apply(definitionsOf(copy).defs[edit.definition] as Record<string, unknown>);
          const { verdict: edited } = officialVerdicts(copy);
          const generator = new SchemaInstanceGenerator(official, { seed: SEED });
          const corpus = generator
            .instances(edit.definition, instanceCount(officialDefs[edit.definition]))
            .flatMap((i) => [i.value, ...generator.mutations(i, MUTATIONS_PER_INSTANCE).map((m) => m.value)]);
          if (!corpus.some((data) => edited(edit.definition, data) !== original(edit.definition, data))) unnoticed.push(edit.label);
        }
        expect(unnoticed).toEqual([]);
      });
    });
  }
});
