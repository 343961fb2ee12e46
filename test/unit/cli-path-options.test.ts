/**
 * The value checks of the path options (`--tools`, `--certs-dir`, `--capture`): what can never
 * be what the option wants is a usage error naming the path and what is expected.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { InvalidArgumentError } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { captureFilePath, certsDirPath, toolModulePath } from "../../src/cli/path-options.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

let dir: string;
let file: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "path-options-"));
  file = join(dir, "tools.mjs");
  await writeFile(file, "export default [];\n");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The message of the InvalidArgumentError `f` throws. */
function refusal(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidArgumentError);
    return (err as Error).message;
  }
  throw new Error("accepted");
}

describe("--tools", () => {
  it("collects the values; a missing file is left to the loader (its own message, exit 1)", () => {
    expect(toolModulePath(file, undefined)).toEqual([file]);
    expect(toolModulePath(join(dir, "missing.mjs"), [file])).toEqual([file, join(dir, "missing.mjs")]);
    expect(toolModulePath(pathToFileURL(file).href, undefined)).toEqual([pathToFileURL(file).href]);
  });

  it("refuses an empty value and a directory (also as a file: URL), saying a JavaScript module file is expected", () => {
    expect(refusal(() => toolModulePath("", undefined))).toMatch(/^the path is empty: expected a JavaScript module file/);
    expect(refusal(() => toolModulePath("  ", undefined))).toMatch(/^the path is empty/);
    expect(refusal(() => toolModulePath(dir, undefined))).toBe(
      `${dir} is a directory: expected a JavaScript module file (an ES module exporting tools, prompts or resources: see ${join(ROOT, "docs", "modules.md")})`,
    );
    // The guide is named where the package has it, whatever the working directory.
    expect(existsSync(join(ROOT, "docs", "modules.md"))).toBe(true);
    expect(refusal(() => toolModulePath(pathToFileURL(dir).href, undefined))).toMatch(new RegExp(`^${dir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is a directory`));
  });
});

describe("--certs-dir", () => {
  it("takes a directory, or a path that does not exist yet", () => {
    expect(certsDirPath(dir)).toBe(dir);
    expect(certsDirPath(join(dir, "new-store"))).toBe(join(dir, "new-store"));
  });

  it("refuses an empty value and a file", () => {
    expect(refusal(() => certsDirPath(""))).toMatch(/^the path is empty: expected the cert store directory/);
    expect(refusal(() => certsDirPath(file))).toBe(
      `${file} is not a directory: expected the cert store directory (ca.crt, ca.key, <name>.crt/.key), or leave the option out for the default`,
    );
  });
});

describe("--capture", () => {
  it("takes a file, existing or not, in an existing directory", () => {
    expect(captureFilePath(file)).toBe(file);
    expect(captureFilePath(join(dir, "new.jsonl"))).toBe(join(dir, "new.jsonl"));
  });

  it("refuses an empty value, a directory, a file in a missing directory and one under a file", () => {
    expect(refusal(() => captureFilePath(""))).toMatch(/^the path is empty: expected a file to append the capture to/);
    expect(refusal(() => captureFilePath(dir))).toBe(`${dir} is a directory: expected a file to append the capture to (created when missing)`);
    expect(refusal(() => captureFilePath(join(dir, "missing", "c.jsonl")))).toBe(
      `the directory ${join(dir, "missing")} does not exist: create it first, or give a file in an existing directory`,
    );
    expect(refusal(() => captureFilePath(join(file, "c.jsonl")))).toMatch(/is not a directory: expected a file to append the capture to/);
  });
});
