/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance 0.1.13) against `serve`
 * and the reference orchestrator loaded with examples/conformance-fixtures.mjs, through a
 * stdio → Streamable HTTP gateway (test/helpers/mcp-http-gateway.ts; one `serve` process per HTTP
 * session). One run of the suite covers every server scenario; the scenarios the Orchestra
 * protocol can carry must pass, and docs/conformance.md says why the others do not apply.
 */
import { spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpHttpGateway, type RunningGateway } from "../helpers/mcp-http-gateway.js";
import { CLI, requireBuiltCli, ROOT, startOrchestratorProcess, tempDir } from "../helpers/cli.js";
import { NODE22_PEERS, requireNode22Peer, skipTitle } from "../helpers/requires.js";

/** The server scenarios that must pass (issue #12, item 7, and two more). */
export const REQUIRED_SCENARIOS = [
  "server-initialize",
  "ping",
  "logging-set-level",
  "tools-list",
  "tools-call-simple-text",
  "tools-call-error",
  "tools-call-image",
  "tools-call-audio",
  "tools-call-embedded-resource",
  "tools-call-mixed-content",
  "tools-call-with-logging",
  "tools-call-with-progress",
  "json-schema-2020-12",
  "resources-list",
  "resources-read-text",
  "resources-read-binary",
  "resources-templates-read",
  "prompts-list",
  "prompts-get-simple",
  "prompts-get-with-args",
  "server-sse-multiple-streams",
  // Beyond the issue's 21: they pass too (docs/conformance.md).
  "prompts-get-embedded-resource",
  "prompts-get-with-image",
  "dns-rebinding-protection", // the gateway's Host/Origin check: HTTP belongs to the gateway
] as const;

/** The suites run: the devDependency on this Node, and the newest release on Node 22 when installed. */
const SUITES = [
  { label: "0.1.13", node: process.execPath, entry: join(ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js"), skip: undefined },
  { label: "0.1.16 on Node 22", node: NODE22_PEERS.node, entry: NODE22_PEERS.conformance, skip: requireNode22Peer("conformance") },
];
const FIXTURES = join(ROOT, "examples/conformance-fixtures.mjs");

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | string;
  errorMessage?: string;
}

/** Runs the whole server suite once; resolves with each scenario's checks (from `--output-dir`). */
async function runSuite(suite: (typeof SUITES)[number], url: string, outDir: string): Promise<{ results: Map<string, Check[]>; output: string }> {
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(suite.node, [suite.entry, "server", "--url", url, "--suite", "all", "--output-dir", outDir], { stdio: ["ignore", "pipe", "pipe"] });
    let text = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (text += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (text += d));
    child.on("error", reject);
    child.on("close", () => resolve(text)); // a failing scenario exits 1: judged below, per scenario
  });
  const results = new Map<string, Check[]>();
  for (const dir of await readdir(outDir)) {
    // <out>/server-<scenario>-<ISO timestamp with - for : and .>/checks.json
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(dir);
    if (!m) continue;
    results.set(m[1]!, JSON.parse(await readFile(join(outDir, dir, "checks.json"), "utf8")) as Check[]);
  }
  return { results, output };
}

for (const which of SUITES) {
  describe.skipIf(which.skip !== undefined)(skipTitle(`MCP conformance suite ${which.label} against serve + the reference orchestrator`, which.skip), () => {
    let certs: Awaited<ReturnType<typeof tempDir>>;
    let out: Awaited<ReturnType<typeof tempDir>>;
    let orchestrator: Awaited<ReturnType<typeof startOrchestratorProcess>>;
    let gateway: RunningGateway;
    let suite: Awaited<ReturnType<typeof runSuite>>;
    let stderr = "";

    beforeAll(async () => {
      requireBuiltCli();
      certs = await tempDir("orchestra-conformance-certs-");
      out = await tempDir("orchestra-conformance-out-");
      orchestrator = await startOrchestratorProcess(certs.path, ["--no-builtins", "--tools", FIXTURES]);
      gateway = await startMcpHttpGateway({
        command: process.execPath,
        args: [CLI, "serve", "--orchestrator-addr", orchestrator.address, "--certs-dir", certs.path],
        onStderr: (c) => {
          if (stderr.length < 200_000) stderr += c.toString("utf8");
        },
      });
      suite = await runSuite(which, gateway.url, out.path);
    }, 600_000);

    afterAll(async () => {
      await gateway?.close();
      await orchestrator?.stop();
      await out?.remove();
      await certs?.remove();
    });

    it("runs every required scenario and each passes (no FAILURE check)", () => {
      // Every scenario's verdict, for the record (docs/conformance.md explains the ones that fail).
      const summary = [...suite.results].map(([name, checks]) => {
        const failures = checks.filter((c) => c.status === "FAILURE").length;
        const warnings = checks.filter((c) => c.status === "WARNING").length;
        return `${failures > 0 ? "FAIL" : "pass"} ${name}${warnings > 0 ? ` (${warnings} warning${warnings > 1 ? "s" : ""})` : ""}${REQUIRED_SCENARIOS.includes(name as never) ? "" : " [not required]"}`;
      });
      console.log(`conformance scenarios:\n${summary.sort().join("\n")}`);
      const failed: string[] = [];
      for (const scenario of REQUIRED_SCENARIOS) {
        const checks = suite.results.get(scenario);
        if (!checks) {
          failed.push(`${scenario}: not run`);
          continue;
        }
        const failures = checks.filter((c) => c.status === "FAILURE");
        if (failures.length > 0) failed.push(`${scenario}: ${failures.map((c) => `${c.id}: ${c.errorMessage ?? "failed"}`).join("; ")}`);
      }
      if (failed.length > 0) console.error(`conformance suite output:\n${suite.output.slice(-20_000)}\nserve stderr (tail):\n${stderr.slice(-5_000)}`);
      expect(failed, `failed scenarios:\n${failed.join("\n")}`).toEqual([]);
    });
  });
}
