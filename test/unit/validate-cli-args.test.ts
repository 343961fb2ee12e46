/** `validate FILE:OPTS`: per-file --direction / --input-format, and a real file name with a colon. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { splitInputArgument } from "../../src/cli/validate.js";

const dir = mkdtempSync(join(tmpdir(), "validate-args-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("splitInputArgument", () => {
  it("splits a suffix of directions and input formats off the path", async () => {
    expect(await splitInputArgument("server.jsonl:s2c")).toEqual({ path: "server.jsonl", options: { direction: "s2c" } });
    expect(await splitInputArgument("log.txt:claude-log")).toEqual({ path: "log.txt", options: { inputFormat: "claude-log" } });
    expect(await splitInputArgument("x:jsonl,c2s")).toEqual({ path: "x", options: { inputFormat: "jsonl", direction: "c2s" } });
  });

  it("leaves the argument whole when the suffix is not options, or names an existing file", async () => {
    expect(await splitInputArgument("C:/traffic/cap.jsonl")).toEqual({ path: "C:/traffic/cap.jsonl" });
    expect(await splitInputArgument("a:s2c,s2c")).toEqual({ path: "a:s2c,s2c" });
    expect(await splitInputArgument("-")).toEqual({ path: "-" });
    const real = join(dir, "weird:s2c");
    writeFileSync(real, "");
    expect(await splitInputArgument(real)).toEqual({ path: real });
  });
});
