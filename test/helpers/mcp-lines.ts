/**
 * E2E helpers for driving `orchestra-stdio serve` with raw JSON-RPC lines (for what the official
 * SDK client cannot send: other protocol versions, batches, stateless requests, cancellations
 * whose absence of a response must be observed) and for pinning the SDK client to a revision.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { CLI } from "./cli.js";

export type Line = Record<string, unknown> | Array<Record<string, unknown>>;

/**
 * A running `serve` process spoken to line by line. `request` resolves with the response of that
 * id; every line the bridge wrote is kept in `lines` (in order). With `command`, that executable
 * runs with `args` instead (another MCP stdio server, e.g. the upstream Go bridge); `env`: the
 * process's environment (default this one's).
 */
export class LineClient {
  readonly lines: Line[] = [];
  stderr = "";
  private readonly child: ChildProcessWithoutNullStreams;
  private buffer = "";
  private readonly waiters = new Map<unknown, (message: Record<string, unknown>) => void>();
  /** Resolves with the exit code when the process exits. */
  readonly exited: Promise<number | null>;

  constructor(args: string[] = [], command?: string, env?: NodeJS.ProcessEnv) {
    const options = { stdio: ["pipe", "pipe", "pipe"] as const, env: env ?? process.env };
    this.child = command ? spawn(command, args, options) : spawn(process.execPath, [CLI, "serve", ...args], options);
    this.child.stderr.setEncoding("utf8").on("data", (d: string) => (this.stderr += d));
    this.child.stdout.setEncoding("utf8").on("data", (d: string) => {
      this.buffer += d;
      let nl: number;
      while ((nl = this.buffer.indexOf("\n")) >= 0) {
        const text = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        if (text.trim() === "") continue;
        const message = JSON.parse(text) as Line;
        this.lines.push(message);
        for (const m of Array.isArray(message) ? message : [message]) {
          if ("id" in m && ("result" in m || "error" in m)) {
            const w = this.waiters.get(m.id);
            if (w) {
              this.waiters.delete(m.id);
              w(m);
            }
          }
        }
      }
    });
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
  }

  /** The process id. */
  get pid(): number {
    return this.child.pid!;
  }

  /** Writes one line (a message, a batch, or raw text). */
  write(message: unknown): void {
    this.child.stdin.write((typeof message === "string" ? message : JSON.stringify(message)) + "\n");
  }

  /** Sends a request and resolves with its response (the whole message). */
  request(message: Record<string, unknown>): Promise<Record<string, unknown>> {
    const p = new Promise<Record<string, unknown>>((resolve) => this.waiters.set(message.id, resolve));
    this.write(message);
    return p;
  }

  /**
   * The MCP handshake: `initialize` (id "init") asking for `protocolVersion`, then
   * `notifications/initialized`. Resolves with the initialize response; throws when it is an error.
   */
  async initialize(protocolVersion = "2025-06-18", clientName = "e2e"): Promise<Record<string, unknown>> {
    const init = await this.request({
      jsonrpc: "2.0",
      id: "init",
      method: "initialize",
      params: { protocolVersion, capabilities: {}, clientInfo: { name: clientName, version: "1" } },
    });
    if (!("result" in init)) throw new Error(`initialize failed: ${JSON.stringify(init)}`);
    this.write({ jsonrpc: "2.0", method: "notifications/initialized" });
    return init;
  }

  /** Messages written so far whose `id` is `id` (responses). */
  responsesTo(id: unknown): Array<Record<string, unknown>> {
    return this.lines.flatMap((l) => (Array.isArray(l) ? l : [l])).filter((m) => m.id === id && ("result" in m || "error" in m));
  }

  /** Closes stdin and resolves with the exit code once the bridge has drained and exited. */
  async end(): Promise<number | null> {
    this.child.stdin.end();
    return this.exited;
  }

  /** Kills the process if still running. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill("SIGKILL");
      await this.exited;
    }
  }
}

/**
 * An SDK {@link Transport} that forwards to `inner` but rewrites the client's `initialize` to ask
 * for `version` (the SDK client always asks for its latest), and records what the server chose.
 */
export class PinnedVersionTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** `protocolVersion` of the initialize result. */
  negotiated: string | undefined;
  /** Every message the server sent, in order. */
  readonly received: JSONRPCMessage[] = [];
  private initializeId: unknown;

  constructor(
    private readonly inner: Transport,
    private readonly version: string,
  ) {}

  async start(): Promise<void> {
    this.inner.onmessage = (message) => {
      this.received.push(message);
      const m = message as { id?: unknown; result?: { protocolVersion?: string } };
      if (m.id !== undefined && m.id === this.initializeId && m.result) this.negotiated = m.result.protocolVersion;
      this.onmessage?.(message);
    };
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (e) => this.onerror?.(e);
    await this.inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const m = message as { method?: string; id?: unknown; params?: Record<string, unknown> };
    if (m.method === "initialize") {
      this.initializeId = m.id;
      message = { ...message, params: { ...m.params, protocolVersion: this.version } } as JSONRPCMessage;
    }
    await this.inner.send(message, options);
  }

  async close(): Promise<void> {
    await this.inner.close();
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }
}
