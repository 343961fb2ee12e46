/**
 * The staleness check of codegen/generate.mjs: a fresh copy of the sources plus the committed
 * src/gen/mcp passes; editing a schema, deleting a generated file or adding a stray one fails
 * with those files named. Runs the generator in-process on a temp copy (buf/proto skipped: that
 * part of `npm run generate:check` is buf's own clean regeneration).
 */
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

interface Codegen {
  check(options: { root?: string; proto?: boolean }): Promise<string[]>;
  generate(options: { root?: string; outRoot?: string; proto?: boolean }): Promise<string[]>;
}

describe("codegen --check (staleness)", () => {
  let tmp = "";
  let codegen: Codegen;

  beforeAll(async () => {
    codegen = (await import(path.join(ROOT, "codegen/generate.mjs"))) as Codegen;
    tmp = await mkdtemp(path.join(tmpdir(), "codegen-staleness-"));
    for (const rel of ["schemas/mcp", "src/gen/mcp", "src/mcp/schema-meta.ts", "src/mcp/formats.ts"]) {
      await cp(path.join(ROOT, rel), path.join(tmp, rel), { recursive: true });
    }
  });

  afterAll(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it("passes on the committed output and fails, naming files, once sources or outputs change", async () => {
    expect(await codegen.check({ root: tmp, proto: false })).toEqual([]);

    const schemaFile = path.join(tmp, "schemas/mcp/2025-06-18/schema.json");
    const schema = JSON.parse(await readFile(schemaFile, "utf8")) as {
      definitions: Record<string, { properties: Record<string, unknown> }>;
    };
    const tool = schema.definitions["Tool"];
    if (!tool) throw new Error("fixture lost its Tool definition");
    tool.properties["icon"] = { type: "string" };
    await writeFile(schemaFile, JSON.stringify(schema, null, 2));
    await rm(path.join(tmp, "src/gen/mcp/2025-06-18/methods.ts"));
    await writeFile(path.join(tmp, "src/gen/mcp/2025-06-18/stray.ts"), "export {};\n");

    const diffs = await codegen.check({ root: tmp, proto: false });
    expect(diffs).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^stale: +src\/gen\/mcp\/2025-06-18\/types\.ts$/),
        expect.stringMatching(/^stale: +src\/gen\/mcp\/2025-06-18\/validators\.js$/),
        expect.stringMatching(/^missing: +src\/gen\/mcp\/2025-06-18\/methods\.ts/),
        expect.stringMatching(/^extra: +src\/gen\/mcp\/2025-06-18\/stray\.ts/),
      ]),
    );
    expect(diffs.some((d) => d.includes("validators.d.ts"))).toBe(false); // its input (names, descriptions) did not change
  }, 60_000);
});
