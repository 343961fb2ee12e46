/**
 * The staleness check of codegen/generate.mjs: a fresh copy of the sources plus the committed
 * src/gen/mcp passes; editing a schema, deleting a generated file or adding a stray one fails
 * with those files named. Runs the generator in-process on temp copies (buf/proto skipped: that
 * part of `npm run generate:check` is buf's own clean regeneration). The committed output is
 * checked once, for every version; the failure cases use a one-version project (MCP 2025-03-26)
 * so that the file stays within a few generator runs' time.
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
  let small = "";
  let codegen: Codegen;

  beforeAll(async () => {
    codegen = (await import(path.join(ROOT, "codegen/generate.mjs"))) as Codegen;
    tmp = await mkdtemp(path.join(tmpdir(), "codegen-staleness-"));
    for (const rel of ["schemas/mcp", "src/gen/mcp", "src/gen-runtime"]) {
      await cp(path.join(ROOT, rel), path.join(tmp, rel), { recursive: true });
    }
    small = await mkdtemp(path.join(tmpdir(), "codegen-staleness-small-"));
    for (const rel of ["schemas/mcp/2025-03-26", "src/gen-runtime"]) {
      await cp(path.join(ROOT, rel), path.join(small, rel), { recursive: true });
    }
  });

  afterAll(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
    if (small) await rm(small, { recursive: true, force: true });
  });

  it("passes on the committed output of every version", async () => {
    expect(await codegen.check({ root: tmp, proto: false })).toEqual([]);
  }, 180_000);

  it("fails, naming files, once sources or outputs change", async () => {
    expect(await codegen.generate({ root: small, proto: false })).toEqual(["2025-03-26"]);
    expect(await codegen.check({ root: small, proto: false })).toEqual([]); // regeneration is byte-identical

    const schemaFile = path.join(small, "schemas/mcp/2025-03-26/schema.json");
    const schema = JSON.parse(await readFile(schemaFile, "utf8")) as {
      definitions: Record<string, { properties: Record<string, unknown> }>;
    };
    const tool = schema.definitions["Tool"];
    if (!tool) throw new Error("fixture lost its Tool definition");
    tool.properties["icon"] = { type: "string" };
    await writeFile(schemaFile, JSON.stringify(schema, null, 2));
    await rm(path.join(small, "src/gen/mcp/2025-03-26/methods.ts"));
    await writeFile(path.join(small, "src/gen/mcp/2025-03-26/stray.ts"), "export {};\n");

    const diffs = await codegen.check({ root: small, proto: false });
    expect(diffs).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^stale: +src\/gen\/mcp\/2025-03-26\/types\.ts$/),
        expect.stringMatching(/^stale: +src\/gen\/mcp\/2025-03-26\/validators\.cjs$/),
        expect.stringMatching(/^missing: +src\/gen\/mcp\/2025-03-26\/methods\.ts/),
        expect.stringMatching(/^extra: +src\/gen\/mcp\/2025-03-26\/stray\.ts/),
      ]),
    );
    expect(diffs.some((d) => d.includes("catalog.ts"))).toBe(false); // its input (versions, definition names) did not change
    expect(diffs.some((d) => d.includes("index.ts"))).toBe(false); // same versions
  }, 120_000);
});
