/**
 * Helpers for the transport e2e tests (TLS transport, orchestrator restart, server faults): the
 * compiled CLI's `orchestrator` and `serve` as separate processes, the bridge driven by the MCP
 * SDK client over stdio.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { CLI, ROOT } from "./cli.js";

export type TransportKind = "quic" | "tls";

/** Tool modules under test/fixtures/tools. */
export const FAULTY_TOOLS = join(ROOT, "test/fixtures/tools/faulty-tools.mjs");
export const PROBE_TOOLS = join(ROOT, "test/fixtures/tools/probe-tools.mjs");

export interface OrchestratorProcess {
  address: string;
  port: number;
  child: ChildProcessWithoutNullStreams;
  /** Everything the process wrote on stderr so far. */
  stderr: () => string;
  /** Sends `signal` and resolves once the process exited (at once if it already had). */
  kill: (signal: NodeJS.Signals) => Promise<void>;
  /** SIGTERM and wait (a clean stop). */
  stop: () => Promise<void>;
}

/**
 * Starts `orchestra-stdio orchestrator --transport <transport> --listen <listen>` and resolves
 * once it printed `READY <host:port>`.
 */
export async function spawnOrchestrator(options: {
  transport: TransportKind;
  certsDir: string;
  listen?: string;
  args?: string[];
  env?: NodeJS.ProcessEnv;
}): Promise<OrchestratorProcess> {
  const child = spawn(
    process.execPath,
    [CLI, "orchestrator", "--transport", options.transport, "--listen", options.listen ?? "127.0.0.1:0", "--certs-dir", options.certsDir, ...(options.args ?? [])],
    { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ...options.env } },
  );
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`orchestrator did not print READY within 30 s; stderr:\n${stderr}`)), 30_000);
    const onData = (): void => {
      const m = /READY (\S+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        child.stderr.off("data", onData);
        resolve(m[1]!);
      }
    };
    child.stderr.on("data", onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`orchestrator exited (${String(child.exitCode ?? child.signalCode)}); stderr:\n${stderr}`));
    });
  });
  const port = Number(address.slice(address.lastIndexOf(":") + 1));
  const kill = async (signal: NodeJS.Signals): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return { address, port, child, stderr: () => stderr, kill, stop: () => kill("SIGTERM") };
}

export interface Bridge {
  client: Client;
  stderr: () => string;
  close: () => Promise<void>;
}

/** Spawns `orchestra-stdio serve <args>` and completes the MCP handshake with the SDK client. */
export async function connectBridge(args: string[]): Promise<Bridge> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, "serve", ...args], stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: "transport-e2e", version: "1.0.0" });
  await client.connect(transport);
  return { client, stderr: () => stderr, close: () => client.close() };
}

/** The text of a CallToolResult's first content block. */
export function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content[0]?.text ?? "";
}

/** Awaits `p`, expecting it to reject with an McpError, and returns that error. */
export async function mcpError(p: Promise<unknown>): Promise<McpError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof McpError) return e;
    throw new Error(`expected an McpError, got ${String(e)}`, { cause: e });
  }
  throw new Error("expected the request to fail");
}

/** Polls `check` every 50 ms until it returns true; throws naming `what` after `ms`. */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
