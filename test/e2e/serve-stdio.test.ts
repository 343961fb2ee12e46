/**
 * End to end on raw stdio: the compiled CLI with bytes written to its stdin, as `printf ... |
 * orchestra-stdio serve` would, on the embedded default (real QUIC, reference orchestrator).
 */
import { spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { CLI, requireBuiltCli, runCli, tempDir } from "../helpers/cli.js";

const PROBE_TOOLS = fileURLToPath(new URL("../fixtures/tools/probe-tools.mjs", import.meta.url));

const line = (m: unknown) => JSON.stringify(m) + "\n";
const initialize = line({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "printf", version: "1" } },
});
const initialized = line({ jsonrpc: "2.0", method: "notifications/initialized" });

function parseLines(stdout: string): Array<Record<string, unknown>> {
  expect(stdout.endsWith("\n")).toBe(true);
  return stdout
    .slice(0, -1)
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

beforeAll(() => requireBuiltCli());

describe("serve over raw stdio", () => {
  it("answers initialize, tools/list and tools/call with exactly three lines and exits 0", async () => {
    const input =
      initialize +
      initialized +
      line({ jsonrpc: "2.0", id: 2, method: "tools/list" }) +
      line({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo", arguments: { text: "hello" } } });
    const { stdout, code } = await runCli(["serve"], input);
    expect(code).toBe(0);
    const out = parseLines(stdout);
    expect(out).toHaveLength(3);
    expect(out.map((m) => m.id).sort()).toEqual([1, 2, 3]);
    const byId = new Map(out.map((m) => [m.id, m]));
    expect(byId.get(1)).toMatchObject({ jsonrpc: "2.0", result: { protocolVersion: "2025-06-18", serverInfo: { name: "orchestra-stdio" } } });
    expect((byId.get(2)!.result as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toContain("echo");
    expect(byId.get(3)).toEqual({ jsonrpc: "2.0", id: 3, result: { content: [{ type: "text", text: "hello" }] } });
  });

  it("survives malformed input, CRLF and blank lines, answering each request once", async () => {
    const input = "this is not json\r\n\r\n   \n" + '{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n' + "[1,2]\n" + '{"jsonrpc":"2.0","id":2,"method":"nope"}';
    const { stdout, code } = await runCli(["serve"], input);
    expect(code).toBe(0);
    const out = parseLines(stdout);
    expect(out).toEqual([
      expect.objectContaining({ id: null, error: expect.objectContaining({ code: -32700 }) }),
      { jsonrpc: "2.0", id: 1, result: {} },
      expect.objectContaining({ id: null, error: expect.objectContaining({ code: -32600 }) }),
      { jsonrpc: "2.0", id: 2, error: { code: -32601, message: "Method not found: nope" } },
    ]);
  });

  it("after a BOM, answers with exact id tokens and escapes U+2028 (issue #13)", async () => {
    const call = (id: string, text: string) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"${text}"}}}\n`;
    const input = "\ufeff" + initialize + call("9007199254740993", "odd") + call("9007199254740992", "a\u2028b") + '{"jsonrpc":"2.0","id":1e2,"method":"ping"}\n';
    const { stdout, code } = await runCli(["serve"], input);
    expect(code).toBe(0);
    const lines = stdout.trim().split("\n");
    expect(JSON.parse(lines[0]!)).toMatchObject({ id: 1, result: { protocolVersion: "2025-06-18" } });
    expect(lines.slice(1).sort()).toEqual([
      '{"jsonrpc":"2.0","id":1e2,"result":{}}',
      '{"jsonrpc":"2.0","id":9007199254740992,"result":{"content":[{"type":"text","text":"a\\u2028b"}]}}',
      '{"jsonrpc":"2.0","id":9007199254740993,"result":{"content":[{"type":"text","text":"odd"}]}}',
    ]);
  });

  it("forwards arguments nested up to the depth limit and refuses deeper ones by name, 5,000 deep too (issue #13)", async () => {
    const nested = (levels: number) => '[{"a":'.repeat(levels) + "1" + "}]".repeat(levels);
    // The line's depth is 3 (message, params, arguments) + 2 per level.
    const call = (id: number, levels: number) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"depth","arguments":{"x":${nested(levels)}}}}\n`;
    const { stdout, code } = await runCli(["serve", "--tools", PROBE_TOOLS], initialize + call(2, 126) + call(3, 127) + call(4, 2500));
    expect(code).toBe(0);
    const byId = new Map(parseLines(stdout).map((m) => [m.id, m]));
    // Reached the orchestrator's tool whole: 126 levels of [{...}] are 252 nested values.
    expect(byId.get(2)).toMatchObject({ result: { content: [{ type: "text", text: "252" }] } });
    for (const id of [3, 4]) expect(byId.get(id)).toMatchObject({ error: { code: -32600, message: "Invalid Request: nesting depth exceeds the limit of 256" } });
  });

  it("answers an in-flight call before exiting on stdin EOF", async () => {
    const input = initialize + line({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "slow", arguments: { ms: 300 } } });
    const { stdout, code } = await runCli(["serve"], input);
    expect(code).toBe(0);
    const out = parseLines(stdout);
    expect(out.map((m) => m.id)).toEqual([1, 2]);
    expect(out[1]).toMatchObject({ result: { content: [{ type: "text" }] } });
    expect((out[1]!.result as { isError?: boolean }).isError).toBeUndefined();
  });

  it("answers an oversized line with -32600 and keeps serving", async () => {
    const huge = line({ jsonrpc: "2.0", id: "huge", method: "tools/call", params: { name: "echo", arguments: { text: "x".repeat(17 * 1024 * 1024) } } });
    const { stdout, code } = await runCli(["serve"], huge + line({ jsonrpc: "2.0", id: "after", method: "ping" }));
    expect(code).toBe(0);
    const out = parseLines(stdout);
    expect(out).toEqual([expect.objectContaining({ id: "huge", error: expect.objectContaining({ code: -32600 }) }), { jsonrpc: "2.0", id: "after", result: {} }]);
  });

  it("records both directions with --capture", async () => {
    const dir = await tempDir();
    try {
      const file = join(dir.path, "session.jsonl");
      const input = initialize + initialized + "not json\n" + line({ jsonrpc: "2.0", id: 2, method: "ping" });
      const { code } = await runCli(["serve", "--capture", file], input);
      expect(code).toBe(0);
      const records = (await readFile(file, "utf8"))
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(records.map((r) => r.dir)).toEqual(["c2s", "s2c", "c2s", "c2s", "s2c", "c2s", "s2c"]);
      expect(records[3]).toMatchObject({ raw: "not json" });
      expect(records[6]).toMatchObject({ msg: { id: 2, result: {} } });
      expect(records.every((r) => typeof r.ts === "string" && !Number.isNaN(Date.parse(r.ts as string)))).toBe(true);
    } finally {
      await dir.remove();
    }
  });

  it("records a dropped marker for an oversized line with --capture, which validate reports as a warning only", async () => {
    const dir = await tempDir();
    try {
      const file = join(dir.path, "session.jsonl");
      const huge = line({ jsonrpc: "2.0", id: "huge", method: "tools/call", params: { name: "echo", arguments: { text: "x".repeat(17 * 1024 * 1024) } } });
      const { code } = await runCli(["serve", "--capture", file], initialize + initialized + huge + line({ jsonrpc: "2.0", id: 2, method: "ping" }));
      expect(code).toBe(0);
      const records = (await readFile(file, "utf8"))
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(records.map((r) => r.dir)).toEqual(["c2s", "s2c", "c2s", "c2s", "s2c", "c2s", "s2c"]);
      expect(records[3]).toEqual({ ts: expect.any(String), dir: "c2s", dropped: { bytes: huge.length - 1, limit: 16 * 1024 * 1024, reason: "line-too-long" } });
      expect(records[4]).toMatchObject({ msg: { id: "huge", error: { code: -32600 } } });
      const v = await runCli(["validate", "--format", "json", file]);
      const findings = v.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => typeof l.rule === "string");
      expect(findings.map((f) => `${f.line} ${f.severity} ${f.rule}`)).toEqual(["4 warning input/dropped-message"]);
      expect(findings[0]!.message).toContain(`message of ${huge.length - 1} bytes`);
      expect(v.code).toBe(0);
    } finally {
      await dir.remove();
    }
  });

  it("exits 1 with a clear message when the capture file cannot be opened", async () => {
    // A name longer than the file system allows: only opening it can tell (a missing directory is a usage error).
    const { stdout, stderr, code } = await runCli(["serve", "--capture", join(tmpdir(), `${"c".repeat(300)}.jsonl`)], initialize);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain("cannot open the capture file");
  });

  it("refuses an empty --orchestrator-addr instead of silently using the embedded orchestrator (usage error, exit 2)", async () => {
    const { stdout, stderr, code } = await runCli(["serve", "--orchestrator-addr", ""], initialize);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain("--orchestrator-addr is empty");
  });

  it("exits 2 on a malformed --orchestrator-addr, naming the value and the problem", async () => {
    const cases: Array<[string, RegExp]> = [
      ["nope", /invalid address "nope": missing port/],
      ["127.0.0.1:abc", /invalid address "127\.0\.0\.1:abc": bad port/],
      ["[::1]", /invalid address "\[::1\]": missing port/],
      ["127.0.0.1:0", /invalid address "127\.0\.0\.1:0": port 0 cannot be connected to: port must be 1\.\.65535/],
      ["127.0.0.1:70000", /invalid address "127\.0\.0\.1:70000": port must be 1\.\.65535/],
      ["http://127.0.0.1:50100", /invalid address "http:\/\/127\.0\.0\.1:50100": a URL; give host:port without a scheme \(e\.g\. 127\.0\.0\.1:50100\)/],
      ["127.0.0.1:50100 ", /invalid address "127\.0\.0\.1:50100 ": contains whitespace/],
      ["::1:50100", /invalid address "::1:50100": an IPv6 host needs brackets \(\[::1\]:50100\)/],
      ["127.0.0.1:050100", /invalid address "127\.0\.0\.1:050100": port 050100 has leading zeros/],
      ["127.0.0.1/x:50100", /invalid address "127\.0\.0\.1\/x:50100": expected host:port/],
    ];
    for (const [addr, message] of cases) {
      const { stdout, stderr, code } = await runCli(["serve", "--orchestrator-addr", addr], initialize);
      expect(code, addr).toBe(2);
      expect(stdout, addr).toBe("");
      expect(stderr, addr).toMatch(/error: option '--orchestrator-addr <host:port>'/);
      expect(stderr, addr).toMatch(message);
    }
  });

  it("on SIGTERM answers in-flight calls with -32603 at once, exits 143 and removes its throwaway cert store", async () => {
    const tmp = await tempDir("orchestra-sig-");
    try {
      // A cache directory that cannot be created: the embedded store falls back to a throwaway one in TMPDIR.
      const child = spawn(process.execPath, [CLI, "serve"], { env: { ...process.env, TMPDIR: tmp.path, XDG_CACHE_HOME: "/dev/null" }, stdio: ["pipe", "pipe", "pipe"] });
      let stdout = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
      child.stdin.write(initialize + line({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "slow", arguments: { ms: 600_000 } } }));
      // Once initialize is answered the bridge is serving; give the slow call time to reach the orchestrator.
      while (!stdout.includes('"id":1')) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 300));
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      child.kill("SIGTERM");
      expect(await exited).toBe(143); // stdin is still open: only the signal can have ended it
      const out = parseLines(stdout);
      expect(out[1]).toMatchObject({ id: 2, error: { code: -32603, message: expect.stringContaining("SIGTERM") } });
      expect(await readdir(tmp.path)).toEqual([]);
    } finally {
      await tmp.remove();
    }
  });

  it("exits 2 on a usage error, writing nothing to stdout", async () => {
    for (const args of [["serve", "--call-timeout", "soon"], ["validate", "--format", "xml"], ["no-such-command"]]) {
      const { stdout, stderr, code } = await runCli(args);
      expect(code, args.join(" ")).toBe(2);
      expect(stdout).toBe("");
      expect(stderr).toMatch(/error:/);
    }
  });

  it("prints --help and --version for the program and each command", async () => {
    const version = (JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
    for (const args of [[], ["serve"], ["orchestrator"], ["validate"]]) {
      const help = await runCli([...args, "--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain("Usage: orchestra-stdio");
      const v = await runCli([...args, "--version"]);
      expect(v.code).toBe(0);
      expect(v.stdout.trim()).toBe(version);
    }
  });
});
