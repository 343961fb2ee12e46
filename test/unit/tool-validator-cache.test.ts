/**
 * Tool argument validators kept between processes (src/bridge/tool-validator-cache.ts): a second
 * checker over the same directory runs the kept validator (no compile) with the same verdicts as
 * ajv's; a file that is damaged or writable by others is a miss; `ORCHESTRA_NO_CODE_CACHE` turns
 * it off.
 */
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ToolArgumentChecker } from "../../src/bridge/tool-args.js";
import { ToolValidatorCache } from "../../src/bridge/tool-validator-cache.js";

const V = "2025-06-18";

const SCHEMAS: Array<{ schema: Record<string, unknown>; args: Array<Record<string, unknown> | undefined> }> = [
  {
    schema: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
    args: [{ text: "a" }, { text: 1 }, {}, { text: "a", x: 1 }, undefined],
  },
  {
    schema: {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { url: { type: "string", format: "uri" }, at: { type: "string", format: "date-time" } },
    },
    args: [{ url: "https://example.com/a" }, { url: "not a uri" }, { at: "2026-12-02T10:00:00Z" }, { at: "yesterday" }],
  },
  {
    schema: { type: "object", definitions: { n: { type: "integer", minimum: 1 } }, properties: { n: { $ref: "#/definitions/n" }, kind: { enum: ["a", "b"] } } },
    args: [{ n: 2, kind: "a" }, { n: 0 }, { n: 1.5 }, { kind: "c" }],
  },
];

let root: string;
let saved: string | undefined;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "orchestra-validators-"));
  saved = process.env["ORCHESTRA_NO_CODE_CACHE"];
  delete process.env["ORCHESTRA_NO_CODE_CACHE"];
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  if (saved === undefined) delete process.env["ORCHESTRA_NO_CODE_CACHE"];
  else process.env["ORCHESTRA_NO_CODE_CACHE"] = saved;
});

/** Waits until `dir` holds `n` validator files (they are written after the compile, asynchronously). */
async function files(dir: string, n: number): Promise<string[]> {
  for (let i = 0; i < 200; i++) {
    const found = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".cjs")) : [];
    if (found.length >= n) return found;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${dir} did not get ${n} validator files`);
}

async function verdicts(checker: ToolArgumentChecker): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const { schema, args } of SCHEMAS) for (const a of args) out.push(await checker.check(schema, a, V));
  return out;
}

describe("tool validator cache", () => {
  it("a second checker runs the kept validators, with ajv's verdicts, and compiles nothing", async () => {
    const dir = join(root, "orchestra-stdio", "tool-validators");
    const fresh = new ToolArgumentChecker(undefined, { validatorCache: new ToolValidatorCache(dir) });
    const expected = await verdicts(fresh);
    expect(fresh.compilations).toBe(SCHEMAS.length);
    const written = await files(dir, SCHEMAS.length);
    for (const f of written) expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
    expect(expected.filter((v) => v !== null).length).toBeGreaterThan(5);

    const later = new ToolArgumentChecker(undefined, { validatorCache: new ToolValidatorCache(dir) });
    expect(await verdicts(later)).toStrictEqual(expected);
    expect(later.compilations).toBe(0);
    // And the same as a checker with no cache at all.
    expect(await verdicts(new ToolArgumentChecker(undefined, { validatorCache: null }))).toStrictEqual(expected);
  });

  it("a damaged file, or one that others can write, is a miss: the schema is compiled again", async () => {
    const dir = join(root, "orchestra-stdio", "tool-validators");
    const first = new ToolArgumentChecker(undefined, { validatorCache: new ToolValidatorCache(dir) });
    const expected = await verdicts(first);
    const [a, b, c] = await files(dir, SCHEMAS.length);
    writeFileSync(join(dir, a!), "this is not JavaScript {");
    writeFileSync(join(dir, b!), "module.exports = 42;");
    chmodSync(join(dir, c!), 0o666);
    const later = new ToolArgumentChecker(undefined, { validatorCache: new ToolValidatorCache(dir) });
    expect(await verdicts(later)).toStrictEqual(expected);
    expect(later.compilations).toBe(3);
  });

  it("ORCHESTRA_NO_CODE_CACHE=1 turns the user's cache off", () => {
    process.env["ORCHESTRA_NO_CODE_CACHE"] = "1";
    expect(ToolValidatorCache.forUser()).toBeUndefined();
    delete process.env["ORCHESTRA_NO_CODE_CACHE"];
    expect(ToolValidatorCache.forUser()?.dir).toMatch(/orchestra-stdio[\\/]tool-validators$/);
  });

  it("a schema naming a meta-schema of no dialect (left to ajv's own check, which refuses it) is not kept", async () => {
    const dir = join(root, "orchestra-stdio", "tool-validators");
    const checker = new ToolArgumentChecker(undefined, { validatorCache: new ToolValidatorCache(dir) });
    const schema = { $schema: "http://json-schema.org/draft-04/schema#", type: "object", properties: { a: { type: "string" } } };
    expect(await checker.check(schema, { a: 1 }, V)).toBeNull();
    await checker.check(SCHEMAS[0]!.schema, {}, V);
    await files(dir, 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(readdirSync(dir).filter((f) => f.endsWith(".cjs"))).toHaveLength(1);
  });
});
