/**
 * Helpers for end-to-end tests: the compiled CLI as a real child process.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, inject } from "vitest";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** The package's `bin` (a CommonJS loader of the CLI bundle; dist/cli/main.js runs it too). */
export const CLI = join(ROOT, "dist/cli/main.cjs");

/** Fails the calling test file when the global setup could not build dist/. */
export function requireBuiltCli(): void {
  const error = inject("distBuildError");
  if (error) throw new Error(error);
}

export async function tempDir(prefix = "orchestra-e2e-"): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/**
 * The test process's environment without its `ORCHESTRA_*` variables (e.g. ORCHESTRA_GO_PEER_BIN,
 * which the CLI would report as unknown): the CLI sees only the variables a test sets.
 */
export function cliEnvironment(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("ORCHESTRA_"))), ...env };
}

/** Runs the CLI to completion with `input` on stdin; resolves with its output and exit status. */
export function runCli(args: string[], input = "", env: NodeJS.ProcessEnv = {}): Promise<{ stdout: string; stderr: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: cliEnvironment(env), stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ stdout, stderr, code }));
    // A command that exits before reading its stdin (a usage error, a refused start) closes the
    // pipe: EPIPE here is that, and its exit status and output are what the caller judges.
    child.stdin.on("error", () => {});
    child.stdin.end(input);
  });
}

/**
 * `serve --orchestrator-addr` with a cert store it cannot use (it checks the store after its
 * `initialize` answer): `initialize`, then `tools/list` (id 2, answered with the store's fault).
 */
export const INITIALIZE_THEN_TOOLS_LIST = [
  { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/list" },
]
  .map((m) => `${JSON.stringify(m)}\n`)
  .join("");

/**
 * Expects `stdout` of a `serve --orchestrator-addr` given {@link INITIALIZE_THEN_TOOLS_LIST} whose
 * cert store was refused: the `initialize` result, then `tools/list` answered -32603 with a
 * message containing `fault`, and nothing else.
 */
export function expectStoreFaultAnswers(stdout: string, fault: string): void {
  const messages = stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { id: number; result?: { protocolVersion?: string }; error?: { code: number; message: string } });
  expect(messages).toHaveLength(2);
  expect(messages[0]).toMatchObject({ id: 1, result: { protocolVersion: "2025-06-18" } });
  expect(messages[1]).toMatchObject({ id: 2, error: { code: -32603 } });
  expect(messages[1]!.error!.message).toContain(fault);
}

/**
 * Starts `orchestra-stdio orchestrator` as a separate process on an ephemeral loopback port and
 * resolves once it printed `READY <host:port>` on stderr.
 */
export async function startOrchestratorProcess(
  certsDir: string,
  extraArgs: string[] = [],
): Promise<{ address: string; port: number; child: ChildProcessWithoutNullStreams; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [CLI, "orchestrator", "--listen", "127.0.0.1:0", "--certs-dir", certsDir, ...extraArgs], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const address = await new Promise<string>((resolve, reject) => {
    let stderr = "";
    const timer = setTimeout(() => reject(new Error(`orchestrator did not print READY within 20 s; stderr:\n${stderr}`)), 20_000);
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      const m = /READY (\S+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`orchestrator exited with ${code}; stderr:\n${stderr}`));
    });
  });
  const port = Number(address.slice(address.lastIndexOf(":") + 1));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  };
  return { address, port, child, stop };
}
