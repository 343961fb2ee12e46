// The tool-argument checker checks a tool's inputSchema against its dialect's meta-schema with the
// validators codegen compiled ahead of time (src/gen/mcp/json-schema/<dialect>.cjs): the verdict
// and the message must be ajv's own, as ajv.compile gives them with its run-time meta-schema check.
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { ToolArgumentChecker } from "../../src/bridge/tool-args.js";

const require = createRequire(import.meta.url);
const addFormats = require("ajv-formats") as (ajv: unknown) => void;
type AjvClass = new (opts: Record<string, unknown>) => { compile(schema: object): unknown };
const DIALECTS: [string, AjvClass, string][] = [
  ["draft-07", require("ajv").default as AjvClass, "http://json-schema.org/draft-07/schema#"],
  ["2019-09", require("ajv/dist/2019").default as AjvClass, "https://json-schema.org/draft/2019-09/schema"],
  ["2020-12", require("ajv/dist/2020").default as AjvClass, "https://json-schema.org/draft/2020-12/schema"],
];

const SCHEMAS: Record<string, unknown>[] = [
  { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  { type: "object", required: "text" },
  { type: "nope" },
  { type: ["string", "null"], minLength: 1 },
  { minLength: -1 },
  { enum: [] },
  { anyOf: [] },
  { multipleOf: 0 },
  { properties: { a: { pattern: "(" } } },
  { properties: { a: { pattern: "^[a-z]+$" } } },
  { $ref: "#/definitions/a b ::" },
  { definitions: { a: { type: 3 } } },
  { $defs: { a: { type: "string", maxLength: "3" } } },
  { items: [{ type: "string" }], additionalItems: false },
  { prefixItems: [{ type: "string" }], items: false },
  { dependentRequired: { a: [1] } },
  { dependencies: { a: ["b"] } },
  { format: "email", contentEncoding: 7 },
  { properties: { a: { $dynamicRef: "#meta" } } },
  { not: { const: null }, if: { type: "string" }, then: { minLength: 2 }, else: true },
  { unevaluatedProperties: "no" },
  { additionalProperties: { type: "integer", exclusiveMinimum: 0 } },
];

/** ajv's own verdict: undefined when ajv.compile accepts the schema, else its message. */
function ajvVerdict(Ajv: AjvClass, schema: Record<string, unknown>): string | undefined {
  const ajv = new Ajv({ strict: false, allErrors: false, messages: true, logger: false });
  addFormats(ajv);
  try {
    ajv.compile(schema);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

describe("tool inputSchema meta-schema check (generated meta-schema validators)", () => {
  for (const [dialect, Ajv, id] of DIALECTS) {
    it(`gives ajv's verdict and message for every schema in JSON Schema ${dialect}`, async () => {
      const checker = new ToolArgumentChecker();
      let rejected = 0;
      for (const schema of SCHEMAS) {
        const declared = { $schema: id, ...schema };
        const expected = ajvVerdict(Ajv, declared);
        if (expected !== undefined) rejected++;
        expect(await checker.schemaProblem(declared), JSON.stringify(schema)).toBe(expected);
      }
      expect(rejected).toBeGreaterThan(5); // the corpus has invalid schemas in every dialect
    });
  }

  it("takes a schema without $schema in the revision's dialect, as ajv would", async () => {
    const checker = new ToolArgumentChecker();
    const bad = { type: "object", required: "text" };
    expect(await checker.check(bad, {}, "2025-06-18")).toBeNull(); // not compiled: not enforced
    const good = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };
    expect(await checker.check(good, {}, "2025-11-25")).toEqual({ pointer: "", reason: expect.stringContaining("text") as string });
    expect(await checker.check(good, { text: "x" }, "2024-11-05")).toBeNull();
    expect(await checker.schemaProblem({ prefixItems: "x" })).toBe(ajvVerdict(DIALECTS[2][1], { prefixItems: "x" }) + " (JSON Schema 2020-12)");
  });

  it("leaves any other $schema to ajv's own check", async () => {
    const checker = new ToolArgumentChecker();
    const draft4 = { $schema: "http://json-schema.org/draft-04/schema#", type: "object" };
    expect(await checker.schemaProblem(draft4)).toBe(ajvVerdict(DIALECTS[0][1], draft4));
    expect(await checker.schemaProblem(draft4)).toMatch(/no schema with key or ref/);
  });
});
