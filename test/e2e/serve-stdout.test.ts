/**
 * `serve --tools MODULE`: a module's console.log / process.stdout.write (at load time and in a
 * tool) go to stderr; stdout carries nothing but the bridge's JSON-RPC lines.
 * A start-up failure is one error line on stderr and exit 1, whatever is waiting.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeFile } from "node:fs/promises";
import { CLI, requireBuiltCli, ROOT, runCli, tempDir } from "../helpers/cli.js";

const NOISY = join(ROOT, "test/fixtures/tools/noisy-tools.mjs");

describe("serve --tools: stdout belongs to JSON-RPC", () => {
  it("sends a module's stdout writes to stderr", async () => {
    requireBuiltCli();
    const child = spawn(process.execPath, [CLI, "serve", "--no-builtins", "--tools", NOISY], { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
    const send = (m: unknown) => child.stdin.write(JSON.stringify(m) + "\n");
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "noisy", arguments: {} } });
    // Wait for the call's answer before closing stdin (the bridge answers in-flight calls on EOF anyway).
    await new Promise<void>((resolve) => {
      const check = () => (/"id":2[,}]/.test(stdout) ? resolve() : setTimeout(check, 50));
      check();
    });
    child.stdin.end();
    expect(await exited).toBe(0);
    const lines = stdout.split("\n").filter((l) => l !== "");
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" });
    const answer = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((m) => m.id === 2);
    expect(answer).toMatchObject({ result: { content: [{ type: "text", text: "done" }] } });
    expect(stderr).toContain("noisy module loaded");
    expect(stderr).toContain("noisy console.log");
    expect(stderr).toContain("noisy stdout.write");
    expect(stderr).toContain("console.info");
  }, 60_000);

  it("a module whose top-level await never settles is a start-up failure: one JSON error line naming it, exit 1 (serve and orchestrator)", async () => {
    requireBuiltCli();
    const dir = await tempDir();
    try {
      const file = join(dir.path, "never.mjs");
      await writeFile(file, "await new Promise(() => {});\nexport const tools = [];\n");
      const initialize = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      });
      const serve = await runCli(["serve", "--no-builtins", "--tools", file, "--log-format", "json"], `${initialize}\n`);
      const orchestrator = await runCli(["orchestrator", "--listen", "127.0.0.1:0", "--certs-dir", dir.path, "--no-builtins", "--tools", file, "--log-format", "json"]);
      for (const r of [serve, orchestrator]) {
        expect(r.code).toBe(1);
        const lines = r.stderr
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => JSON.parse(l) as { level: number; msg: string });
        expect(lines.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([
          `cannot load tool module ${file}: its top-level await never settled (it waits for nothing that can still happen)`,
        ]);
      }
      // stdout carries JSON-RPC only: the initialize answer.
      expect(
        serve.stdout
          .trim()
          .split("\n")
          .map((l) => (JSON.parse(l) as { id: number }).id),
      ).toEqual([1]);
      expect(orchestrator.stdout).toBe("");
    } finally {
      await dir.remove();
    }
  }, 60_000);

  it("a --tools module that does not exist, with calls waiting: one error line, -32603 for each waiting request, exit 1 (no crash dump)", async () => {
    requireBuiltCli();
    const dir = await tempDir();
    try {
      const file = join(dir.path, "nope.mjs");
      const input = [
        { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
        { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo", arguments: { message: "hi" } } },
      ]
        .map((m) => `${JSON.stringify(m)}\n`)
        .join("");
      const r = await runCli(["serve", "--tools", file, "--log-format", "json"], input);
      expect(r.code).toBe(1);
      // Every stderr line is a log record (an unhandled rejection would add a stack and "Node.js vX").
      const records = r.stderr
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as { level: number; msg: string });
      expect(records.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([`cannot load tool module ${file}: no file ${file}`]);
      const answers = r.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { id: number; error?: { code: number; message: string } });
      expect(answers.map((a) => a.id)).toEqual([1, 2, 3]);
      for (const a of answers.slice(1)) expect(a.error).toMatchObject({ code: -32603, message: expect.stringContaining(`cannot load tool module ${file}`) });
    } finally {
      await dir.remove();
    }
  }, 60_000);

  it("a client that closed stdout is one warn record with the error's message and code, no stack", async () => {
    requireBuiltCli();
    const child = spawn(process.execPath, [CLI, "serve", "--log-format", "json"], { stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    const closedLogged = new Promise<void>((resolve) =>
      child.stderr.setEncoding("utf8").on("data", (d: string) => {
        stderr += d;
        if (stderr.includes('"stdout closed"')) resolve();
      }),
    );
    const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
    child.stdout.destroy();
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n`,
    );
    await closedLogged;
    child.stdin.end();
    await exited;
    const records = stderr
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const closed = records.filter((r) => r["msg"] === "stdout closed");
    expect(closed).toHaveLength(1);
    expect(closed[0]).toMatchObject({ level: 40, err: "write EPIPE", code: "EPIPE" });
    expect(JSON.stringify(closed[0])).not.toContain("stack");
  }, 60_000);
});
