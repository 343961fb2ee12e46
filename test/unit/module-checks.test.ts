/**
 * What a module may declare and how its mistakes are reported (src/orchestrator/load-tools.ts,
 * registry.ts, prompts.ts, storage.ts; docs/modules.md).
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadModule, loadOrchestratorContent } from "../../src/orchestrator/load-tools.js";
import { tempDir } from "../e2e/helpers.js";

let dir: Awaited<ReturnType<typeof tempDir>>;
let seq = 0;
/** Writes `source` as a new module file and returns its path. */
const mod = async (source: string) => {
  const file = join(dir.path, `m${seq++}.mjs`);
  await writeFile(file, source);
  return file;
};
beforeAll(async () => {
  dir = await tempDir("orchestra-module-checks-");
});
afterAll(async () => {
  await dir.remove();
});

const tool = (inputSchema: string) => `export const tools = [{ name: "t", description: "", inputSchema: ${inputSchema}, handler: async () => ({}) }];`;

describe("tool inputSchema at load", () => {
  it("refuses a schema ajv cannot compile, naming the module, the tool and the problem", async () => {
    const requiredNotArray = await mod(tool(`{ type: "object", required: "a" }`));
    await expect(loadModule(requiredNotArray)).rejects.toThrow(new RegExp(`${requiredNotArray.replace(/[.\\/]/g, "\\$&")} \\[0\\] \\(t\\): "inputSchema" is not a valid JSON Schema: .*required must be array`));
    const badType = await mod(tool(`{ type: "object", properties: { a: { type: "strng" } } }`));
    await expect(loadModule(badType)).rejects.toThrow(/\(t\): "inputSchema" is not a valid JSON Schema: .*properties\/a\/type/);
  });
  it("accepts valid schemas", async () => {
    const ok = await mod(tool(`{ type: "object", properties: { a: { type: "string", format: "uri" } }, required: ["a"] }`));
    expect((await loadModule(ok)).tools.map((t) => t.name)).toEqual(["t"]);
  });
});
