/**
 * `validate` on a terminal (a real pseudo-terminal through util-linux `script`): the progress
 * bar never shares a line with the report. A text report streamed to the bar's terminal gets no
 * bar; any other report clears the bar before its first byte.
 */
import { spawn } from "node:child_process";
import { truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROGRESS_MIN_BYTES } from "../../src/validate/progress.js";
import { requireCommand, skipTitle } from "../helpers/requires.js";
import { CLI, requireBuiltCli, tempDir } from "../helpers/cli.js";

const scriptMissing = requireCommand("script", ["--version"]);
/** cli-progress's clear-line sequence, written when the bar stops. */
const CLEAR_LINE = "\x1b[2K";

/** Runs `sh -c shellCommand` on a pseudo-terminal; resolves with what the terminal showed. */
function onTerminal(shellCommand: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("script", ["-qec", shellCommand, "/dev/null"], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.on("error", reject);
    child.on("close", () => resolve(out));
  });
}

describe.skipIf(scriptMissing !== undefined)(skipTitle("validate's progress bar on a terminal", scriptMissing), () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let input: string;
  let cli: string;
  beforeAll(async () => {
    requireBuiltCli();
    dir = await tempDir();
    // Big enough for the bar, cheap to make: one request, then a sparse run of NUL bytes (one
    // unparsable line), so the report has findings.
    input = join(dir.path, "big.jsonl");
    writeFileSync(input, '{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    truncateSync(input, PROGRESS_MIN_BYTES + 8 * 1024 * 1024);
    cli = `'${process.execPath}' '${CLI}' validate`;
  });
  afterAll(async () => {
    await dir?.remove();
  });

  it("shows no bar when the text report goes to the same terminal", async () => {
    const out = await onTerminal(`${cli} '${input}'`);
    expect(out).toContain("session/initialize-first");
    expect(out).not.toContain("validating");
  });

  it("clears the bar before the first line of a JSON report on the same terminal", async () => {
    const out = await onTerminal(`${cli} --format json '${input}'`);
    const first = out.indexOf('{"type":');
    expect(first).toBeGreaterThan(0);
    const before = out.slice(0, first);
    expect(before).toContain("validating");
    expect(before.slice(before.lastIndexOf("validating"))).toContain(CLEAR_LINE);
    expect(out.slice(first)).not.toContain("validating");
  });

  it("shows the bar when the text report goes elsewhere", async () => {
    const report = join(dir.path, "report.txt");
    const out = await onTerminal(`${cli} '${input}' > '${report}'`);
    expect(out).toContain("validating");
    expect(out).not.toContain("session/initialize-first");
  });
});
