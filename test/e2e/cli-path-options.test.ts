/**
 * Path options given as a new user gives them (empty, a directory for a module, a file for a
 * store, a capture in a missing directory; validate's file arguments likewise): a usage error
 * naming the option, the path and what is expected, exit 2, nothing on stdout.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBuiltCli, ROOT, runCli } from "../helpers/cli.js";

const INITIALIZE = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n`;

let dir: string;
let file: string;
beforeAll(async () => {
  requireBuiltCli();
  dir = await mkdtemp(join(tmpdir(), "cli-path-options-"));
  file = join(dir, "a-file");
  await writeFile(file, "x\n");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Runs the CLI and expects a usage error: exit 2, stdout empty, stderr the problem and the help hint. */
async function usageError(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const { stdout, stderr, code } = await runCli(args, INITIALIZE, env);
  expect(code, stderr).toBe(2);
  expect(stdout).toBe("");
  const lines = stderr.trim().split("\n");
  expect(lines).toHaveLength(2);
  expect(lines[1]).toBe(`see \`orchestra-stdio ${args[0]}${args[0] === "certs" ? ` ${args[1]}` : ""} --help\``);
  return lines[0]!;
}

describe("serve and orchestrator path options", () => {
  it("--tools '' and --tools <a directory>: the option, the path, a JavaScript module file expected (serve and orchestrator)", async () => {
    for (const command of [["serve"], ["orchestrator", "--listen", "127.0.0.1:0", "--certs-dir", dir]]) {
      expect(await usageError([...command, "--tools", ""])).toBe(
        `error: option '--tools <module...>' argument '' is invalid. the path is empty: expected a JavaScript module file (an ES module exporting tools, prompts or resources: see ${join(ROOT, "docs", "modules.md")})`,
      );
      expect(await usageError([...command, "--tools", dir])).toBe(
        `error: option '--tools <module...>' argument '${dir}' is invalid. ${dir} is a directory: expected a JavaScript module file (an ES module exporting tools, prompts or resources: see ${join(ROOT, "docs", "modules.md")})`,
      );
    }
    expect(await usageError(["serve"], { ORCHESTRA_TOOLS: dir })).toMatch(
      new RegExp(`^error: option '--tools <module\\.\\.\\.>' value '.*' from env 'ORCHESTRA_TOOLS' is invalid\\. .* is a directory: expected a JavaScript module file`),
    );
  });

  it("--certs-dir <a file> and '' (serve, orchestrator, certs init/show)", async () => {
    for (const command of [["serve"], ["orchestrator", "--listen", "127.0.0.1:0"], ["certs", "init"], ["certs", "show"]]) {
      expect(await usageError([...command, "--certs-dir", file])).toBe(
        `error: option '--certs-dir <dir>' argument '${file}' is invalid. ${file} is not a directory: expected the cert store directory (ca.crt, ca.key, <name>.crt/.key), or leave the option out for the default`,
      );
      expect(await usageError([...command, "--certs-dir", ""])).toMatch(
        /^error: option '--certs-dir <dir>' argument '' is invalid\. the path is empty: expected the cert store directory/,
      );
    }
  });

  it("--capture into a missing directory, or a directory", async () => {
    const missing = join(dir, "missing", "capture.jsonl");
    expect(await usageError(["serve", "--capture", missing])).toBe(
      `error: option '--capture <file>' argument '${missing}' is invalid. the directory ${join(dir, "missing")} does not exist: create it first, or give a file in an existing directory`,
    );
    expect(await usageError(["serve", "--capture", dir])).toBe(
      `error: option '--capture <file>' argument '${dir}' is invalid. ${dir} is a directory: expected a file to append the capture to (created when missing)`,
    );
  });
});

describe("validate's file arguments", () => {
  it("a directory and an empty name: one input/unreadable finding each saying so, exit 2", async () => {
    const { stdout, stderr, code } = await runCli(["validate", "--format", "json", dir, ""]);
    expect(code, stderr).toBe(2);
    const findings = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; rule?: string; message?: string })
      .filter((r) => r.type === "finding");
    expect(findings.map((f) => `${f.rule} ${f.message}`)).toEqual([
      `input/unreadable cannot read input: ${dir} is a directory: expected a capture, JSONL, Claude Desktop log or HAR file, or - for stdin (the files in it, e.g. ${join(dir, "*.jsonl")})`,
      "input/unreadable cannot read input: the file name is empty: expected a capture, JSONL, Claude Desktop log or HAR file, or - for stdin",
    ]);
  });
});
