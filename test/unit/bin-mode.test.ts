/**
 * The `orchestra-stdio` bin (dist/cli/main.js, built by the global setup) is an executable node
 * script. `npx orchestra-stdio` in a clone runs it through a link in npm's npx cache that npm made
 * executable only once, so a rebuilt 0644 file failed with "Permission denied" after a re-clone at
 * the same path.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/requires.js";

const BIN = join(PROJECT_ROOT, "dist/cli/main.js");

describe("the built bin", () => {
  it("is executable by its owner, group and others, with a node shebang", () => {
    expect(statSync(BIN).mode & 0o111).toBe(0o111);
    expect(readFileSync(BIN, "utf8").split("\n", 1)[0]).toMatch(/^#!\/usr\/bin\/env node/);
  });
});
