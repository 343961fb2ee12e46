/**
 * Errors of `--tools` modules outside a handler's promise, in the processes that host them: `serve`
 * with the embedded orchestrator and `orchestrator` log them and serve on (every request in flight
 * answered, later ones too); a module that cannot load is reported with the place in it.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, ROOT, cliEnvironment, requireBuiltCli, runCli, tempDir } from "../helpers/cli.js";

const STRAYS = join(ROOT, "test/fixtures/tools/stray-errors.mjs");
const line = (id: number, method: string, params: object = {}): string => `${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`;
const INITIALIZE = line(0, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } });

describe("errors thrown by tool modules outside their handlers", () => {
  let work: { path: string; remove: () => Promise<void> };
  beforeAll(async () => {
    requireBuiltCli();
    work = await tempDir("orchestra-module-errors-");
  });
  afterAll(() => work?.remove());

  it("serve (embedded) logs them and answers every request, those in flight and later ones", async () => {
    const child = spawn(process.execPath, [CLI, "serve", "--tools", STRAYS, "--log-format", "json"], {
      env: cliEnvironment({ XDG_CACHE_HOME: join(work.path, "cache") }),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const answered = (id: number): boolean => stdout.split("\n").some((l) => l.startsWith("{") && (JSON.parse(l) as { id?: unknown }).id === id);
    const until = async (ok: () => boolean): Promise<void> => {
      for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 50));
    };
    child.stdin.write(INITIALIZE);
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
    await until(() => answered(0));
    // A slow call in flight while both strays go off; then a ping and a call after them.
    child.stdin.write(line(1, "tools/call", { name: "slow", arguments: { ms: 600 } }));
    child.stdin.write(line(2, "tools/call", { name: "unawaited", arguments: {} }));
    child.stdin.write(line(3, "tools/call", { name: "timer-throws", arguments: {} }));
    await until(() => stderr.includes("stray throw from the timer-throws tool"));
    child.stdin.write(line(4, "ping"));
    child.stdin.write(line(5, "tools/call", { name: "echo", arguments: { text: "still here" } }));
    await until(() => [1, 2, 3, 4, 5].every(answered));
    child.stdin.end();
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    const responses = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: number; result?: Record<string, unknown>; error?: unknown });
    expect(responses.map((r) => r.id).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    for (const r of responses) expect(r.error).toBeUndefined();
    expect(JSON.stringify(responses.find((r) => r.id === 5)!.result)).toContain("still here");
    const errors = stderr
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { level: number; msg: string; err?: { stack?: string } })
      .filter((r) => r.level >= 50);
    expect(errors.map((e) => e.msg).sort()).toEqual(["uncaught exception in a tool module; still serving", "unhandled rejection in a tool module; still serving"]);
    for (const e of errors) expect(e.err?.stack).toContain("stray-errors.mjs");
  }, 60_000);

  it("an error thrown while the modules still load is logged, and serve starts and answers", async () => {
    const early = join(work.path, "early.mjs");
    writeFileSync(early, 'setTimeout(() => {\n  throw new Error("stray throw while loading");\n}, 0);\nawait new Promise((r) => setTimeout(r, 300));\nexport const tools = [];\n');
    const r = await runCli(["serve", "--tools", early, "--log-format", "json"], `${INITIALIZE}${line(1, "tools/call", { name: "echo", arguments: { text: "after" } })}`, {
      XDG_CACHE_HOME: join(work.path, "cache"),
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("uncaught exception in a tool module; still serving");
    expect(r.stderr).toContain("stray throw while loading");
    const ids = r.stdout
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { id: number }).id);
    expect(ids).toEqual([0, 1]);
  }, 60_000);

  it("a module that cannot load is reported with the place in it", async () => {
    const syntax = join(work.path, "syntax.mjs");
    writeFileSync(syntax, 'export const tools = [\n  { name: "x" ,, },\n];\n');
    const thrower = join(work.path, "throws.mjs");
    writeFileSync(thrower, 'const fail = () => {\n  throw new Error("boom at top level");\n};\nfail();\nexport const tools = [];\n');
    const importer = join(work.path, "imports-thrower.mjs");
    writeFileSync(importer, 'import "./throws.mjs";\nexport const tools = [];\n');
    for (const [file, place] of [
      [syntax, `${syntax}:2`],
      [thrower, `${thrower}:2:9`],
      [importer, `${thrower}:2:9`],
    ] as const) {
      for (const command of ["serve", "orchestrator"]) {
        const r = await runCli([command, "--tools", file, ...(command === "orchestrator" ? ["--listen", "127.0.0.1:0", "--certs-dir", join(work.path, "certs")] : [])], "", {
          XDG_CACHE_HOME: join(work.path, "cache"),
        });
        expect(r.code).toBe(1);
        expect(r.stdout).toBe("");
        expect(r.stderr).toContain(`cannot load tool module ${file}`);
        expect(r.stderr).toContain(`(at ${place}`);
      }
    }
  }, 60_000);
});
