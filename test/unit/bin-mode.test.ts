/**
 * The `orchestra-stdio` bin (package.json's `bin`, dist/cli/main.cjs, built by the global setup)
 * and dist/cli/main.js (the ES module that runs it, for those who run that file) are executable
 * node scripts. `npx orchestra-stdio` in a clone runs it through a link in npm's npx cache that npm made
 * executable only once, so a rebuilt 0644 file failed with "Permission denied" after a re-clone at
 * the same path.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/requires.js";

const BIN = (JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { bin: Record<string, string> }).bin["orchestra-stdio"]!;

describe("the built bin", () => {
  it.each([BIN, "dist/cli/main.js"])("%s is executable by its owner, group and others, with a node shebang", (file) => {
    expect(statSync(join(PROJECT_ROOT, file)).mode & 0o111).toBe(0o111);
    expect(readFileSync(join(PROJECT_ROOT, file), "utf8").split("\n", 1)[0]).toMatch(/^#!\/usr\/bin\/env node/);
  });
});
