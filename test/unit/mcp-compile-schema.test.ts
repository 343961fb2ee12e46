/**
 * compileValidatorsFromSchema: runtime ajv compilation of any MCP schema.json must give the same
 * verdicts and method tables as the generated validators, on our own schema and on the official
 * 2025-06-18 (draft-07) and 2025-11-25 (2020-12) schemas; the official 2026-07-28 examples must
 * validate. Tests that read ../shared skip with a reason when it is absent.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { GENERATED_PROTOCOLS } from "../../src/gen/mcp/index.js";
import { compileValidatorsFromSchema, type ProtocolValidators } from "../../src/mcp/validation.js";
import { mutations, SAMPLES } from "../helpers/mcp-samples.js";
import { firstReason, requireShared, sharedPath, skipTitle } from "../helpers/requires.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SHARED = sharedPath("mcp-schema");
const sharedMissing = firstReason(requireShared("mcp-schema/2025-06-18/schema.json"), requireShared("mcp-schema/2025-11-25/schema.json"));
const examplesMissing = requireShared("mcp-schema/2026-07-28/examples");
const readJson = (file: string): object => JSON.parse(readFileSync(file, "utf8")) as object;

const generated = GENERATED_PROTOCOLS["2025-06-18"];
if (!generated) throw new Error("no generated validators for 2025-06-18");

/** Disagreements between the generated validators and `other` on samples (+ mutations) of `definitions`. */
function disagreements(other: ProtocolValidators, definitions: readonly string[], withMutations: boolean): string[] {
  const out: string[] = [];
  for (const definition of definitions) {
    const gen = generated?.validators[definition];
    if (!gen) throw new Error(`no generated validator for ${definition}`);
    for (const sample of SAMPLES[definition] ?? []) {
      for (const data of withMutations ? [sample, ...mutations(sample)] : [sample]) {
        const mine = gen(data);
        const theirs = other.validate(definition, data) === null;
        if (mine !== theirs && out.length < 20) out.push(`${definition}: generated=${mine} runtime=${theirs} ${JSON.stringify(data).slice(0, 160)}`);
      }
    }
  }
  return out;
}

describe("compileValidatorsFromSchema on our own schema", () => {
  const runtime = compileValidatorsFromSchema(readJson(path.join(ROOT, "schemas/mcp/2025-06-18/schema.json")), "2025-06-18");

  it("reports the version it was given and the same definitions", () => {
    expect(runtime.version).toBe("2025-06-18");
    for (const d of generated.definitions) expect(runtime.has(d)).toBe(true);
    expect(runtime.has("NoSuchDefinition")).toBe(false);
  });

  it("derives the same method tables as the generator", () => {
    for (const direction of ["c2s", "s2c"] as const) {
      for (const [method, entry] of Object.entries(generated.methods[direction])) {
        expect(runtime.messageDefinition(direction, method)).toEqual(entry);
      }
    }
    expect(runtime.messageDefinition("s2c", "tools/call")).toBeUndefined();
  });

  it("gives the generated validators' verdicts on samples and their mutations", () => {
    expect(disagreements(runtime, generated.definitions, true)).toEqual([]);
  });

  it("explains failures the same way (refined branch, pointer, reason)", () => {
    const data = { content: [{ type: "audio", data: "UklGRg==" }] };
    const issues = runtime.validate("CallToolResult", data);
    expect(issues?.[0]).toEqual({
      pointer: "/content/0",
      reason: "must have required property 'mimeType'",
      keyword: "required",
      definition: "AudioContent",
    });
  });

  it("does not modify the schema object it is given", () => {
    const schema = readJson(path.join(ROOT, "schemas/mcp/2025-06-18/schema.json"));
    const before = JSON.stringify(schema);
    compileValidatorsFromSchema(schema, "x").validate("CallToolResult", { content: [] });
    expect(JSON.stringify(schema)).toBe(before);
  });

  it("rejects schemas without definitions and unsupported dialects", () => {
    expect(() => compileValidatorsFromSchema({ type: "object" }, "x")).toThrow(/definitions/);
    expect(() => compileValidatorsFromSchema({ $schema: "http://json-schema.org/draft-04/schema#", definitions: {} }, "x")).toThrow(/dialect/);
  });

  it("reports an invalid schema at compile time and an unresolvable $ref on use", () => {
    expect(() => compileValidatorsFromSchema({ definitions: { A: { type: 5 } } }, "x")).toThrow(/schema is invalid: .*definitions\/A\/type must be/);
    const dangling = compileValidatorsFromSchema({ definitions: { A: { $ref: "#/definitions/Nope" } } }, "x");
    expect(dangling.has("A")).toBe(true);
    expect(() => dangling.validate("A", 1)).toThrow(/#\/definitions\/Nope/);
  });
});

describe.skipIf(sharedMissing !== undefined)(skipTitle("compileValidatorsFromSchema on official schemas", sharedMissing), () => {
  it("2025-06-18 (draft-07): same verdicts as ours on every definition we cover, and the spec's full method table", () => {
    const official = compileValidatorsFromSchema(readJson(path.join(SHARED, "2025-06-18/schema.json")), "2025-06-18");
    expect(disagreements(official, generated.definitions, true)).toEqual([]);
    for (const direction of ["c2s", "s2c"] as const) {
      for (const [method, entry] of Object.entries(generated.methods[direction])) {
        expect(official.messageDefinition(direction, method)).toEqual(entry);
      }
    }
    expect(official.messageDefinition("c2s", "resources/read")).toEqual({
      definition: "ReadResourceRequest",
      kind: "request",
      resultDefinition: "ReadResourceResult",
    });
    expect(official.messageDefinition("c2s", "logging/setLevel")?.resultDefinition).toBe("EmptyResult");
    expect(official.messageDefinition("s2c", "sampling/createMessage")?.resultDefinition).toBe("CreateMessageResult");
    expect(official.messageDefinition("s2c", "elicitation/create")?.resultDefinition).toBe("ElicitResult");
    expect(official.messageDefinition("c2s", "notifications/roots/list_changed")?.kind).toBe("notification");
    expect(official.messageDefinition("c2s", "sampling/createMessage")).toBeUndefined();
  });

  it("2025-11-25 (2020-12, $defs): same verdicts on shared messages, and its new methods", () => {
    const official = compileValidatorsFromSchema(readJson(path.join(SHARED, "2025-11-25/schema.json")), "2025-11-25");
    const shared = generated.definitions.filter((d) => official.has(d));
    // Every valid message of ours that both revisions define is valid there too.
    expect(disagreements(official, shared, false)).toEqual([]);
    // Mutations only where 2025-11-25 did not change the definition's rules: its request and
    // notification definitions also require the JSON-RPC envelope (jsonrpc, id) and type
    // params._meta differently, so malformed variants of those legitimately get other verdicts.
    // CreateMessageResult, ElicitResult, EnumSchema and SamplingMessage changed their rules in
    // 2025-11-25 (tool use in sampling, enum schema variants), so their mutations differ too.
    const changedIn20251125 = new Set(["CreateMessageResult", "ElicitResult", "EnumSchema", "SamplingMessage"]);
    const unchanged = shared.filter((d) => !/(Request|Notification|^JSONRPC.*)$/.test(d) && !changedIn20251125.has(d));
    expect(unchanged.length).toBeGreaterThan(25);
    expect(disagreements(official, unchanged, true)).toEqual([]);

    expect(official.messageDefinition("c2s", "tools/call")).toEqual({
      definition: "CallToolRequest",
      kind: "request",
      resultDefinition: "CallToolResult",
    });
    expect(official.messageDefinition("c2s", "tasks/get")?.resultDefinition).toBe("GetTaskResult");
    expect(official.messageDefinition("s2c", "notifications/elicitation/complete")?.kind).toBe("notification");
    expect(official.messageDefinition("c2s", "ping")?.resultDefinition).toBe("EmptyResult");
  });

  it.skipIf(examplesMissing !== undefined)(skipTitle("2026-07-28: every published example validates against its definition", examplesMissing), () => {
    const dir = path.join(SHARED, "2026-07-28/examples");
    const official = compileValidatorsFromSchema(readJson(path.join(SHARED, "2026-07-28/schema.json")), "2026-07-28");
    let count = 0;
    for (const definition of readdirSync(dir).sort()) {
      for (const file of readdirSync(path.join(dir, definition)).sort()) {
        const issues = official.validate(definition, readJson(path.join(dir, definition, file)));
        expect(issues, `${definition}/${file}`).toBeNull();
        count++;
      }
    }
    expect(count).toBeGreaterThan(50);
    // one-member union inlined in the schema (ClientNotification) is still dispatched
    expect(official.messageDefinition("c2s", "notifications/cancelled")?.kind).toBe("notification");
    expect(official.messageDefinition("c2s", "tools/call")?.resultDefinition).toBe("CallToolResult");
  });
});
