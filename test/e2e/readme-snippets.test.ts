/**
 * The README's snippets work as written: each MCP client configuration is started exactly as the
 * client would (the official SDK client spawning the configured command, arguments and env, with
 * the placeholder address and cert store replaced by a local orchestrator's), and the quick
 * start's command prints its three answers on a checkout.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configuredServer, QUICK_START_ANSWERS, quickStart, quickStartAnswers, readmeSnippets, SNIPPET_CERTS_DIR, SNIPPET_ORCHESTRATOR_ADDR } from "../helpers/readme.js";
import { PROJECT_ROOT } from "../helpers/requires.js";
import { requireBuiltCli, startOrchestratorProcess, tempDir } from "../helpers/cli.js";
import { textOf } from "../helpers/transport.js";

const run = promisify(execFile);
const clients = readmeSnippets().filter((s) => s.kind === "client-snippet");

describe("README client snippets", () => {
  let certs: Awaited<ReturnType<typeof tempDir>>;
  let orchestrator: Awaited<ReturnType<typeof startOrchestratorProcess>>;
  beforeAll(async () => {
    requireBuiltCli();
    certs = await tempDir();
    orchestrator = await startOrchestratorProcess(certs.path);
  });
  afterAll(async () => {
    await orchestrator?.stop();
    await certs?.remove();
  });

  it("has one for each client, with npx -y and --certs-dir", () => {
    expect(clients.map((c) => c.name)).toEqual(["claude-desktop", "vscode", "cursor", "claude-code"]);
    for (const c of clients) {
      const server = configuredServer(c);
      expect([c.name, server.command, server.args.slice(0, 3)]).toEqual([c.name, "npx", ["-y", "orchestra-stdio", "serve"]]);
      expect(server.args).toContain("--certs-dir");
    }
  });

  it.each(clients.map((c) => [c.name, c] as const))(
    "%s: the configured server lists and calls the orchestrator's tools",
    async (_name, snippet) => {
      const server = configuredServer(snippet);
      const args = server.args.map((a) => (a === SNIPPET_ORCHESTRATOR_ADDR ? orchestrator.address : a === SNIPPET_CERTS_DIR ? certs.path : a));
      expect(args).toContain(orchestrator.address);
      expect(args).toContain(certs.path);
      const transport = new StdioClientTransport({ command: server.command, args, env: { ...getDefaultEnvironment(), ...server.env }, cwd: PROJECT_ROOT, stderr: "pipe" });
      const client = new Client({ name: "readme-snippet", version: "1" });
      await client.connect(transport);
      try {
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toContain("echo");
        expect(textOf(await client.callTool({ name: "echo", arguments: { text: `from ${snippet.name}` } }))).toBe(`from ${snippet.name}`);
      } finally {
        await client.close();
      }
    },
    180_000,
  );
});

describe("README quick start", () => {
  beforeAll(() => requireBuiltCli());

  it("runs the bridge on the embedded orchestrator and prints three answers", async () => {
    const { stdout } = await run("sh", ["-c", quickStart("serve")], { cwd: PROJECT_ROOT, env: { ...process.env, ORCHESTRA_LOG_LEVEL: "warn" } });
    expect(quickStartAnswers(stdout)).toEqual(QUICK_START_ANSWERS);
  }, 180_000);

  it("runs the whole test suite with its second command", () => {
    expect(quickStart("test")).toBe("npm test");
  });
});
