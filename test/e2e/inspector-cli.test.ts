/**
 * The official MCP Inspector's CLI (`@modelcontextprotocol/inspector` 2.12.0, `--cli`, on the
 * Node 22 it requires) as the MCP client of the compiled `orchestra-stdio serve`: one Inspector
 * process per method, each starting its own `serve` as a stdio server, as a user runs it
 * (`inspector --cli --method tools/list -- orchestra-stdio serve`). Embedded orchestrator, and the
 * upstream Go orchestrator when the Go peer is built. Every `serve` writes a `--capture`, and
 * `orchestra-stdio validate` must find nothing in any of them.
 *
 * `.ci/run` installs the Inspector and its Node into ~/.cache/orchestra-node22-peers; elsewhere
 * the file skips and says how to install them (test/helpers/requires.ts).
 */
import { spawn } from "node:child_process";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, requireBuiltCli, runCli, tempDir } from "../helpers/cli.js";
import { goPeerSkipReason, HARD_TEXT, startGoOrchestrator, type GoOrchestrator } from "../helpers/go-peer.js";
import { NODE22_PEERS, requireNode22Peer, skipTitle } from "../helpers/requires.js";

const skip = requireNode22Peer("inspector");
const goSkip = skip ?? goPeerSkipReason();

interface InspectorRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (the Inspector prints the result, or `{error}`), `undefined` if not JSON. */
  json: Record<string, unknown> | undefined;
}

/**
 * Runs `inspector --cli <inspectorArgs> -- node dist/cli/main.cjs serve --capture … <serveArgs>`
 * with `home` as HOME (the Inspector's catalog and serve's embedded cert store live there).
 */
function inspect(home: string, capture: string, inspectorArgs: string[], serveArgs: string[] = []): Promise<InspectorRun> {
  const args = [NODE22_PEERS.inspector, "--cli", ...inspectorArgs, "--", process.execPath, CLI, "serve", "--capture", capture, ...serveArgs];
  return new Promise((resolve, reject) => {
    const child = spawn(NODE22_PEERS.node, args, {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      let json: Record<string, unknown> | undefined;
      try {
        json = JSON.parse(stdout) as Record<string, unknown>;
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}

/** The text of the first content block of a `tools/call` result printed by the Inspector. */
function firstText(result: Record<string, unknown> | undefined): string | undefined {
  const content = result?.content as Array<{ type: string; text?: string }> | undefined;
  return content?.[0]?.text;
}

/** `validate --format json` over every capture in `dir`: the findings (none expected). */
async function findingsIn(dir: string): Promise<{ files: number; findings: unknown[]; code: number | null; stderr: string }> {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".jsonl")).map((f) => join(dir, f));
  const { stdout, stderr, code } = await runCli(["validate", "--format", "json", ...files]);
  const findings = stdout
    .trim()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => typeof l.rule === "string");
  return { files: files.length, findings, code, stderr };
}

describe.skipIf(skip !== undefined)(skipTitle("MCP Inspector CLI → serve (embedded orchestrator)", skip), () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let captures: Awaited<ReturnType<typeof tempDir>>;
  let n = 0;
  const run = (inspectorArgs: string[]): Promise<InspectorRun> => inspect(home.path, join(captures.path, `${++n}.jsonl`), inspectorArgs);

  beforeAll(async () => {
    requireBuiltCli();
    home = await tempDir("orchestra-inspector-home-");
    captures = await tempDir("orchestra-inspector-captures-");
  });

  afterAll(async () => {
    await home?.remove();
    await captures?.remove();
  });

  it.concurrent("tools/list: the embedded tools with their input schemas", async () => {
    const r = await run(["--method", "tools/list"]);
    expect(r.code, r.stderr).toBe(0);
    const tools = r.json?.tools as Array<{ name: string; inputSchema: Record<string, unknown> }>;
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["echo", "slow"]));
    expect(tools.find((t) => t.name === "echo")!.inputSchema).toMatchObject({ type: "object", required: ["text"] });
  });

  it.concurrent("tools/call echo: the text comes back unchanged", async () => {
    const r = await run(["--method", "tools/call", "--tool-name", "echo", "--tool-arg", `text=${HARD_TEXT}`]);
    expect(r.code, r.stderr).toBe(0);
    expect(firstText(r.json)).toBe(HARD_TEXT);
    expect(r.json?.isError).toBeFalsy();
  });

  it.concurrent("tools/call with an argument the schema forbids: a tool error naming it, not a crash", async () => {
    const r = await run(["--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=x", "extra=1"]);
    expect(r.json?.isError, r.stdout + r.stderr).toBe(true);
    expect(firstText(r.json)).toMatch(/Invalid arguments for tool echo: .*additional property 'extra'/);
    expect(r.code).not.toBe(0);
  });

  it.concurrent("prompts/list and prompts/get with arguments", async () => {
    const [list, get] = await Promise.all([
      run(["--method", "prompts/list"]),
      run(["--method", "prompts/get", "--prompt-name", "greet", "--prompt-args", "name=Ada", "style=formal"]),
    ]);
    expect(list.code, list.stderr).toBe(0);
    expect((list.json?.prompts as Array<{ name: string }>).map((p) => p.name)).toContain("greet");
    expect(get.code, get.stderr).toBe(0);
    const messages = get.json?.messages as Array<{ role: string; content: { type: string; text: string } }>;
    expect(messages[0]).toMatchObject({ role: "user", content: { type: "text" } });
    expect(messages[0]!.content.text).toContain("Ada");
  });

  it.concurrent("resources/list, resources/read (non-ASCII text) and resources/templates/list", async () => {
    const [list, read, templates] = await Promise.all([
      run(["--method", "resources/list"]),
      run(["--method", "resources/read", "--uri", "orchestra://storage/docs/notes.txt"]),
      run(["--method", "resources/templates/list"]),
    ]);
    expect(list.code, list.stderr).toBe(0);
    expect((list.json?.resources as Array<{ uri: string }>).map((r) => r.uri)).toContain("orchestra://storage/docs/notes.txt");
    expect(read.code, read.stderr).toBe(0);
    const contents = read.json?.contents as Array<{ uri: string; mimeType: string; text: string }>;
    expect(contents[0]).toMatchObject({ uri: "orchestra://storage/docs/notes.txt", mimeType: "text/plain" });
    expect(contents[0]!.text).toMatch(/résumé ✓ 世界/);
    expect(templates.code, templates.stderr).toBe(0);
    expect(templates.json?.resourceTemplates).toEqual(expect.arrayContaining([expect.objectContaining({ uriTemplate: "orchestra://storage/{+path}" })]));
  });

  it.concurrent("logging/setLevel is accepted", async () => {
    const r = await run(["--method", "logging/setLevel", "--log-level", "error"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toEqual({});
  });

  // Runs after the concurrent cases above (vitest runs sequential tests after the concurrent ones
  // of the same suite have settled).
  it("validate finds nothing in any capture of these sessions", async () => {
    const { files, findings, code, stderr } = await findingsIn(captures.path);
    expect(files).toBeGreaterThanOrEqual(8);
    expect(findings).toEqual([]);
    expect(code, stderr).toBe(0);
  });
});

describe.skipIf(goSkip !== undefined)(skipTitle("MCP Inspector CLI → serve → upstream Go orchestrator", goSkip), () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let certs: Awaited<ReturnType<typeof tempDir>>;
  let captures: Awaited<ReturnType<typeof tempDir>>;
  let orchestrator: GoOrchestrator;
  let n = 0;
  const run = (inspectorArgs: string[]): Promise<InspectorRun> =>
    inspect(home.path, join(captures.path, `${++n}.jsonl`), inspectorArgs, ["--orchestrator-addr", orchestrator.address, "--certs-dir", certs.path]);

  beforeAll(async () => {
    requireBuiltCli();
    home = await tempDir("orchestra-inspector-home-");
    certs = await tempDir();
    captures = await tempDir("orchestra-inspector-captures-");
    orchestrator = await startGoOrchestrator({ certsDir: certs.path });
  }, 120_000);

  afterAll(async () => {
    await orchestrator?.kill("SIGKILL");
    for (const dir of [home, certs, captures]) await dir?.remove();
  });

  it("tools/list, then tools/call echo, through the upstream orchestrator; validate finds nothing", async () => {
    const list = await run(["--method", "tools/list"]);
    expect(list.code, list.stderr).toBe(0);
    expect((list.json?.tools as Array<{ name: string }>).map((t) => t.name).sort()).toEqual(["echo", "slow"]);
    const call = await run(["--method", "tools/call", "--tool-name", "echo", "--tool-arg", `text=${HARD_TEXT}`]);
    expect(call.code, call.stderr).toBe(0);
    expect(firstText(call.json)).toBe(HARD_TEXT);
    const { files, findings, code } = await findingsIn(captures.path);
    expect(files).toBe(2);
    expect(findings).toEqual([]);
    expect(code).toBe(0);
  }, 120_000);
});
