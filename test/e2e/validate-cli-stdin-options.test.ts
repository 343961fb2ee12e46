/** The compiled CLI: `-:OPT` (stdin with per-file options) and `--list-rules --format json`. */
import { beforeAll, describe, expect, it } from "vitest";
import { requireBuiltCli, runCli } from "../helpers/cli.js";

describe("validate CLI arguments", () => {
  beforeAll(() => requireBuiltCli());

  it("-:s2c reads stdin as server→client JSONL; other unknown options are still refused (exit 2)", async () => {
    const run = await runCli(["validate", "--format", "json", "-:s2c,jsonl"], `{"jsonrpc":"2.0","id":1,"result":{}}\n`);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout.trim().split("\n").at(-1)!) as { files: { file: string; format: string }[] };
    expect(summary.files.map((f) => [f.file, f.format])).toEqual([["-", "jsonl"]]);
    const bogus = await runCli(["validate", "--bogus", "-"], "");
    expect(bogus.stderr).toMatch(/unknown option '--bogus'/);
    expect(bogus.code).toBe(2);
  }, 60_000);

  it("a usage error found while opening the inputs (stdin named twice) says where the help is, exit 2, nothing on stdout", async () => {
    const run = await runCli(["validate", "-", "-"], "");
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe("orchestra-stdio validate: - (stdin) can be given only once\nsee `orchestra-stdio validate --help`\n");
  });

  it("--list-rules --format json prints one JSON object per rule", async () => {
    const run = await runCli(["validate", "--list-rules", "--format", "json"]);
    const rules = run.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: string; severity: string });
    expect(rules.map((r) => r.id)).toContain("session/response-to-notification");
    expect(run.code).toBe(0);
  }, 60_000);

  it("--list-rules with a report format (sarif, junit, html) is a usage error: the problem and where the help is, exit 2, nothing on stdout", async () => {
    for (const format of ["sarif", "junit", "html"]) {
      const run = await runCli(["validate", "--list-rules", "--format", format]);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr.trim().split("\n")).toEqual([
        `error: --list-rules prints the rules as text or json (--format text | json), not --format ${format}`,
        "see `orchestra-stdio validate --help`",
      ]);
    }
  }, 60_000);
});
