/**
 * The code generator's JSON Schema 2020-12 support (codegen/generate.mjs):
 *  - `draft2020OnlyKeywords`: the build-time check for keywords and constructs that only
 *    2019-09/2020-12 have (or that mean something else there), with their JSON Pointers, and no
 *    false alarms on property names or instance data that merely look like keywords;
 *  - `toDraft07`: `$defs` → `definitions` with every local ref redirected, input untouched;
 *  - `planSchema`: draft-07 as is, portable 2020-12 → ajv's draft-07 class, anything else → Ajv2020;
 *  - the premise of the shortcut: on a portable schema the draft-07 class gives Ajv2020's
 *    verdicts — checked on our MCP 2025-11-25 schema (generated instances and mutations) and on a
 *    synthetic schema using the keywords both dialects share;
 *  - end to end: `generate()` on a temp project with a portable and a non-portable 2020-12
 *    schema, importing and running the generated validators and checking the generated types.
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Ajv } from "ajv";
import Ajv2020Module from "ajv/dist/2020.js";
import ajvFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MCP_FORMATS } from "../../src/mcp/formats.js";
import { SchemaInstanceGenerator, type Json } from "../helpers/schema-instances.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

interface Finding {
  pointer: string;
  keyword: string;
  reason: string;
}
interface Plan {
  dialect: "draft-07" | "2020-12";
  compileAs: "draft-07" | "2020-12";
  findings: Finding[];
  schema: Record<string, unknown>;
  key: string;
}
interface Codegen {
  draft2020OnlyKeywords(schema: object): Finding[];
  toDraft07(schema: object): Record<string, unknown>;
  planSchema(schema: object): Plan;
  generate(options: { root?: string; outRoot?: string; proto?: boolean }): Promise<string[]>;
}

const codegen = (await import(pathToFileURL(path.join(ROOT, "codegen/generate.mjs")).href)) as Codegen;
const Ajv2020 = (Ajv2020Module as unknown as { default: typeof Ajv }).default;
const S2020 = "https://json-schema.org/draft/2020-12/schema";

type Verdict = (definition: string, data: unknown) => boolean;

/** Runtime validators for a document's definitions, compiled by the given ajv class. */
function compileWith(AjvClass: typeof Ajv, doc: object, key: string): Verdict {
  const ajv = new AjvClass({ strict: false, allErrors: false, allowUnionTypes: true, logger: false });
  ajvFormats.default(ajv as never); // CJS plugin: its function is `default` under NodeNext typing
  for (const [name, check] of Object.entries(MCP_FORMATS)) ajv.addFormat(name, check);
  ajv.addSchema(doc, "doc");
  return (definition, data) => {
    const v = ajv.getSchema(`doc#/${key}/${definition}`);
    if (!v) throw new Error(`cannot compile ${definition}`);
    return v(data) as boolean;
  };
}

const keywordsOf = (findings: Finding[]): string[] => findings.map((f) => `${f.pointer} ${f.keyword}`);

describe("draft2020OnlyKeywords", () => {
  it("finds nothing in our MCP 2025-11-25 schema", async () => {
    const schema = JSON.parse(await readFile(path.join(ROOT, "schemas/mcp/2025-11-25/schema.json"), "utf8")) as object;
    expect(codegen.draft2020OnlyKeywords(schema)).toEqual([]);
  });

  it("reports each 2019-09/2020-12-only keyword with the pointer of the schema holding it", () => {
    const schema = {
      $schema: S2020,
      $defs: {
        Tuple: { type: "array", prefixItems: [{ type: "string" }], items: false },
        Dyn: { $dynamicAnchor: "node", type: "object", properties: { child: { $dynamicRef: "#node" } } },
        Rec: { $recursiveAnchor: true, anyOf: [{ $recursiveRef: "#" }] },
        Anchored: { $anchor: "here", type: "string" },
        Closed: { allOf: [{ unevaluatedProperties: false }, { type: "array", unevaluatedItems: false }] },
        Deps: { dependentRequired: { a: ["b"] }, dependentSchemas: { c: { required: ["d"] } } },
        Counted: { contains: { type: "integer" }, minContains: 2, maxContains: 3 },
        Content: { type: "string", contentMediaType: "application/json", contentSchema: { type: "object" } },
        Legacy: { items: [{ type: "string" }], additionalItems: false, dependencies: { x: ["y"] } },
      },
    };
    expect(keywordsOf(codegen.draft2020OnlyKeywords(schema))).toEqual([
      "/$defs/Tuple prefixItems",
      "/$defs/Dyn $dynamicAnchor",
      "/$defs/Dyn/properties/child $dynamicRef",
      "/$defs/Rec $recursiveAnchor",
      "/$defs/Rec/anyOf/0 $recursiveRef",
      "/$defs/Anchored $anchor",
      "/$defs/Closed/allOf/0 unevaluatedProperties",
      "/$defs/Closed/allOf/1 unevaluatedItems",
      "/$defs/Deps dependentRequired",
      "/$defs/Deps dependentSchemas",
      "/$defs/Counted minContains",
      "/$defs/Counted maxContains",
      "/$defs/Content contentSchema",
      "/$defs/Legacy items",
      "/$defs/Legacy additionalItems",
      "/$defs/Legacy dependencies",
    ]);
  });

  it("reports refs whose meaning differs: validating siblings, anchors, external documents", () => {
    const schema = {
      $defs: {
        A: { type: "string" },
        Sibling: { $ref: "#/$defs/A", maxLength: 3 },
        Annotated: { $ref: "#/$defs/A", description: "only an annotation", title: "t", default: "x", deprecated: true },
        Anchor: { $ref: "#node" },
        External: { $ref: "https://example.com/other.json#/$defs/B" },
        Whole: { $ref: "#" },
      },
    };
    const findings = codegen.draft2020OnlyKeywords(schema);
    expect(keywordsOf(findings)).toEqual(["/$defs/Sibling $ref", "/$defs/Anchor $ref", "/$defs/External $ref"]);
    expect(findings[0]?.reason).toMatch(/maxLength/);
  });

  it("reports $id, $schema and $defs below the root, and a root with both $defs and definitions", () => {
    const schema = {
      $schema: S2020,
      $id: "https://example.com/root.json",
      definitions: { Old: { type: "string" } },
      $defs: {
        Scoped: { $id: "https://example.com/scoped.json", type: "object" },
        Dialect: { $schema: "http://json-schema.org/draft-07/schema#", type: "string" },
        Nested: { type: "object", $defs: { Inner: { type: "null" } } },
      },
    };
    expect(keywordsOf(codegen.draft2020OnlyKeywords(schema))).toEqual([" $defs", "/$defs/Scoped $id", "/$defs/Dialect $schema", "/$defs/Nested $defs"]);
  });

  it("ignores keyword-like property names and instance data", () => {
    const schema = {
      $schema: S2020,
      $defs: {
        // property, pattern-property and definition names are names, not keywords
        prefixItems: { type: "object", properties: { unevaluatedProperties: { type: "boolean" }, $anchor: { type: "string" } } },
        Patterned: { type: "object", patternProperties: { "^x-": { type: "string" } }, propertyNames: { maxLength: 9 } },
        // const/enum/default/examples hold data, whatever its keys
        Data: {
          const: { prefixItems: [1], $dynamicRef: "#x", $ref: 5 },
          enum: [{ dependentRequired: {} }],
          default: { unevaluatedItems: true },
          examples: [{ $anchor: "a" }],
        },
        // keywords shared by draft-07 and 2020-12 are fine anywhere
        Shared: {
          if: { properties: { kind: { const: "a" } } },
          then: { required: ["a"] },
          else: { not: { required: ["a"] } },
          contains: { type: "string" },
          items: { $ref: "#/$defs/Patterned" },
          additionalProperties: { oneOf: [{ type: "string" }, { type: "null" }] },
        },
      },
    };
    expect(codegen.draft2020OnlyKeywords(schema)).toEqual([]);
  });
});

describe("toDraft07", () => {
  it("renames $defs, redirects every local ref (inside keyword-named properties too) and leaves data alone", () => {
    const schema = {
      $schema: S2020,
      $comment: "kept",
      $defs: {
        A: { type: "object", properties: { enum: { $ref: "#/$defs/B" }, const: { items: { $ref: "#/$defs/B" } } } },
        B: { anyOf: [{ $ref: "#/$defs/A" }, { const: { $ref: "#/$defs/A" } }] },
      },
    };
    const before = JSON.stringify(schema);
    const out = codegen.toDraft07(schema);
    expect(JSON.stringify(schema)).toBe(before);
    expect(out).toEqual({
      $schema: "http://json-schema.org/draft-07/schema#",
      $comment: "kept",
      definitions: {
        A: {
          type: "object",
          properties: { enum: { $ref: "#/definitions/B" }, const: { items: { $ref: "#/definitions/B" } } },
        },
        B: { anyOf: [{ $ref: "#/definitions/A" }, { const: { $ref: "#/$defs/A" } }] },
      },
    });
  });
});

describe("planSchema", () => {
  it("keeps draft-07, shortcuts a portable 2020-12 schema and falls back to Ajv2020 otherwise", () => {
    const d7 = { $schema: "http://json-schema.org/draft-07/schema#", definitions: { A: { type: "string" } } };
    expect(codegen.planSchema(d7)).toMatchObject({ dialect: "draft-07", compileAs: "draft-07", key: "definitions", schema: d7 });

    const portable = { $schema: S2020, $defs: { A: { type: "string" }, B: { $ref: "#/$defs/A" } } };
    const p = codegen.planSchema(portable);
    expect(p).toMatchObject({ dialect: "2020-12", compileAs: "draft-07", key: "definitions", findings: [] });
    expect(p.schema["definitions"]).toEqual({ A: { type: "string" }, B: { $ref: "#/definitions/A" } });

    const undeclared = { $defs: { A: { type: "string" } } };
    expect(codegen.planSchema(undeclared)).toMatchObject({ dialect: "2020-12", compileAs: "draft-07" });

    const tuple = { $schema: S2020, $defs: { T: { type: "array", prefixItems: [{ type: "string" }] } } };
    const t = codegen.planSchema(tuple);
    expect(t).toMatchObject({ dialect: "2020-12", compileAs: "2020-12", key: "$defs", schema: tuple });
    expect(keywordsOf(t.findings)).toEqual(["/$defs/T prefixItems"]);

    expect(() => codegen.planSchema({ $schema: "https://json-schema.org/draft/2019-09/schema", $defs: {} })).toThrow(/unsupported/);
  });
});

describe("draft-07 class on a portable 2020-12 schema gives Ajv2020's verdicts", () => {
  it("on our MCP 2025-11-25 schema: generated instances and their mutations, against every union around them", async () => {
    const schema = JSON.parse(await readFile(path.join(ROOT, "schemas/mcp/2025-11-25/schema.json"), "utf8")) as {
      $defs: Record<string, unknown>;
    };
    const plan = codegen.planSchema(schema);
    expect(plan.compileAs).toBe("draft-07");
    const as2020 = compileWith(Ajv2020, schema, "$defs");
    const as07 = compileWith(Ajv, plan.schema, "definitions");
    const unions = ["JSONRPCMessage", "ClientRequest", "ServerRequest", "ClientNotification", "ServerNotification", "ClientResult", "ServerResult"];
    const generator = new SchemaInstanceGenerator(schema, { seed: 2_025_11_25 });
    const differ: string[] = [];
    let checked = 0;
    let invalid = 0;
    const compare = (definition: string, data: Json): void => {
      const a = as2020(definition, data);
      const b = as07(definition, data);
      checked++;
      if (!a) invalid++;
      if (a !== b && differ.length < 10) differ.push(`${definition}: 2020=${a} draft-07=${b} ${JSON.stringify(data).slice(0, 160)}`);
    };
    for (const definition of Object.keys(schema.$defs).sort()) {
      for (const instance of generator.instances(definition, 2)) {
        compare(definition, instance.value);
        for (const m of generator.mutations(instance, 8)) {
          compare(definition, m.value);
          for (const u of unions) compare(u, m.value);
        }
      }
    }
    expect(differ).toEqual([]);
    expect(checked).toBeGreaterThan(10_000);
    expect(invalid).toBeGreaterThan(checked / 3);
    expect(checked - invalid).toBeGreaterThan(1_000);
  });

  it("on a synthetic schema using the keywords both dialects share", () => {
    const schema = {
      $schema: S2020,
      $defs: {
        Kind: { type: "string", enum: ["a", "b"] },
        Node: {
          description: "recursive, with a $ref beside annotations",
          type: "object",
          properties: {
            kind: { $ref: "#/$defs/Kind", description: "an annotation only" },
            children: { type: "array", items: { $ref: "#/$defs/Node" }, maxItems: 2, uniqueItems: true },
            label: { type: ["string", "null"], minLength: 1, pattern: "^[a-z]+$" },
            weight: { type: "number", exclusiveMinimum: 0, multipleOf: 0.5 },
          },
          patternProperties: { "^x-": { type: "integer" } },
          propertyNames: { maxLength: 8 },
          additionalProperties: false,
          required: ["kind"],
          if: { properties: { kind: { const: "b" } } },
          then: { required: ["weight"] },
          else: { not: { required: ["weight"] } },
        },
        Bag: { type: "array", contains: { const: 1 }, minItems: 1 },
        Either: { oneOf: [{ $ref: "#/$defs/Node" }, { $ref: "#/$defs/Bag" }], allOf: [{ minProperties: 0 }] },
        Link: { type: "string", format: "uri" },
      },
    };
    const plan = codegen.planSchema(schema);
    expect(plan.compileAs).toBe("draft-07");
    const as2020 = compileWith(Ajv2020, schema, "$defs");
    const as07 = compileWith(Ajv, plan.schema, "definitions");
    const samples: Json[] = [
      { kind: "a" },
      { kind: "b", weight: 1.5 },
      { kind: "b" },
      { kind: "a", weight: 1 },
      { kind: "c" },
      { kind: "a", label: null, "x-n": 3 },
      { kind: "a", "x-n": "3" },
      { kind: "a", label: "" },
      { kind: "a", label: "Up" },
      { kind: "a", weight: 0 },
      { kind: "b", weight: 0.3 },
      { kind: "a", longpropertyname: 1 },
      { kind: "a", other: 1 },
      { kind: "a", children: [{ kind: "a" }, { kind: "b", weight: 2 }] },
      { kind: "a", children: [{ kind: "a" }, { kind: "a" }] },
      { kind: "a", children: [{ kind: "a" }, { kind: "a", label: "x" }, { kind: "a", label: "y" }] },
      { kind: "a", children: [{ kind: "z" }] },
      [1],
      [2, 3],
      [],
      [1, 1],
      "https://example.com/x",
      "not a uri",
      null,
      7,
    ];
    let differences = 0;
    let accepted = 0;
    for (const definition of Object.keys(schema.$defs)) {
      for (const data of samples) {
        const a = as2020(definition, data);
        if (a) accepted++;
        if (a !== as07(definition, data)) differences++;
      }
    }
    expect(differences).toBe(0);
    expect(accepted).toBeGreaterThan(8);
  });
});

describe("generate() with 2020-12 schemas (temp project)", () => {
  let tmp = "";
  const PORTABLE = "9000-01-01";
  const TUPLES = "9000-02-02";

  beforeAll(async () => {
    // Under node_modules/ so that the generated modules resolve ajv and ajv-formats from the repo.
    await mkdir(path.join(ROOT, "node_modules/.cache"), { recursive: true });
    tmp = await mkdtemp(path.join(ROOT, "node_modules/.cache/codegen-2020-"));
    // the generated code's runtime: imported by the generator and by the generated validators
    await cp(path.join(ROOT, "src/gen-runtime"), path.join(tmp, "src/gen-runtime"), { recursive: true });
    const ref = (name: string) => ({ $ref: `#/$defs/${name}` });
    const portable = {
      $schema: S2020,
      $defs: {
        Id: { description: "A request id.", type: ["string", "integer"] },
        PingRequest: {
          description: "A ping.",
          type: "object",
          properties: { jsonrpc: { type: "string", const: "2.0" }, id: ref("Id"), method: { type: "string", const: "ping" } },
          required: ["id", "jsonrpc", "method"],
        },
        ClientRequest: { description: "Client requests.", anyOf: [ref("PingRequest")] },
        Template: { description: "A URI template.", type: "string", format: "uri-template" },
        Day: { description: "A calendar date.", type: "string", format: "date" },
        PingId: { $ref: "#/$defs/Id", description: "an alias" },
      },
    };
    const tuples = {
      $schema: S2020,
      $defs: {
        Pair: {
          description: "A tuple.",
          type: "array",
          prefixItems: [{ type: "string" }, { type: "integer" }],
          items: false,
          minItems: 2,
        },
        Strict: {
          description: "Closed object.",
          type: "object",
          allOf: [{ properties: { a: { type: "string" } } }],
          unevaluatedProperties: false,
        },
      },
    };
    for (const [version, schema] of [
      [PORTABLE, portable],
      [TUPLES, tuples],
    ] as const) {
      await mkdir(path.join(tmp, "schemas/mcp", version), { recursive: true });
      await writeFile(path.join(tmp, "schemas/mcp", version, "schema.json"), JSON.stringify(schema, null, 2));
    }
    expect(await codegen.generate({ root: tmp, outRoot: tmp, proto: false })).toEqual([PORTABLE, TUPLES]);
  }, 60_000);

  afterAll(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const load = async (version: string) => {
    const file = path.join(tmp, "src/gen/mcp", version, "validators.cjs");
    const factory = createRequire(import.meta.url)(file) as (formats: typeof MCP_FORMATS) => Record<string, (data: unknown) => boolean>;
    return { source: await readFile(file, "utf8"), validators: factory(MCP_FORMATS) };
  };

  it("compiles a portable schema with the draft-07 class; formats src/gen-runtime/formats.js lacks come from ajv-formats", async () => {
    const { source, validators } = await load(PORTABLE);
    expect(source).toMatch(/Source dialect: JSON Schema 2020-12 .*compiled with ajv's draft-07 class/);
    // a function format is imported from ajv-formats; a RegExp one (uri-template) is inlined by ajv
    expect(source).toContain(`const __formats = { ...MCP_FORMATS, "date": __ajvFormats["date"] };`);
    expect(source).not.toContain(`__ajvFormats["uri-template"]`);
    expect(validators["Day"]?.("2024-02-29")).toBe(true);
    expect(validators["Day"]?.("2023-02-29")).toBe(false);
    expect(validators["PingRequest"]?.({ jsonrpc: "2.0", id: 1, method: "ping" })).toBe(true);
    expect(validators["ClientRequest"]?.({ jsonrpc: "2.0", id: null, method: "ping" })).toBe(false);
    expect(validators["Template"]?.("file:///{path}")).toBe(true);
    expect(validators["Template"]?.("{unclosed")).toBe(false);
    const types = await readFile(path.join(tmp, "src/gen/mcp", PORTABLE, "types.ts"), "utf8");
    expect(types).toMatch(/export type Id = string \| number;/);
    expect(types).toMatch(/export type PingId = Id;/);
    expect(types).toMatch(/export interface PingRequest \{/);
    const methods = await readFile(path.join(tmp, "src/gen/mcp", PORTABLE, "methods.ts"), "utf8");
    expect(methods).toMatch(/c2s: \{ ping: \{ definition: "PingRequest", kind: "request"/);
  });

  it("compiles a schema using 2020-only keywords with Ajv2020, and its validators apply them", async () => {
    const { source, validators } = await load(TUPLES);
    expect(source).toMatch(/compiled with ajv's 2020-12 class \(it uses prefixItems, unevaluatedProperties\)/);
    const pair = validators["Pair"];
    const strict = validators["Strict"];
    if (!pair || !strict) throw new Error("missing generated validators");
    expect(pair(["a", 1])).toBe(true);
    expect(pair([1, "a"])).toBe(false);
    expect(pair(["a", 1, 2])).toBe(false);
    expect(strict({ a: "x" })).toBe(true);
    expect(strict({ a: "x", b: 1 })).toBe(false);
  });
});
