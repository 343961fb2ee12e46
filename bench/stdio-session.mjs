// The benchmarks' MCP client: JSON-RPC lines written straight to a child process's stdin and read
// from its stdout with the project's line splitter (dist/framing/line-splitter.js). Lighter than the
// SDK's Client (no schema parsing per message), so that the subject, not the client, is what a
// throughput figure measures; every response is still checked (its id, and the echoed text).
import { spawn } from "node:child_process";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { ROOT, cpuMsOf, lastLine, memoryKiBOf, quantile } from "./common.mjs";

const { stdioLineSplitter } = await import(join(ROOT, "dist/framing/line-splitter.js"));

/** Protocol version the benchmark client asks for in `initialize`. */
export const PROTOCOL_VERSION = "2025-06-18";

const STDERR_KEEP = 8 * 1024;

/** A session with requests pending and no response for this long is declared stuck (ms). */
export const STALL_MS = 60_000;

/**
 * One MCP stdio server process and the client side of its session.
 * - `spawnedAt`: performance.now() just before spawn (start-up times are measured from it).
 * - request(method, params) → Promise<{ message, at }> (`at`: performance.now() when the response line arrived).
 * - Responses to unknown ids, notifications and server requests are counted in `unexpected`, never fatal.
 * - Stuck subject: when requests are pending and nothing has answered for `stallMs` (default
 *   {@link STALL_MS}; longer for a subject under valgrind), every
 *   pending request rejects ("no response for ...") and the process is killed, so a hung subject
 *   fails the run instead of hanging it.
 */
export class StdioSession {
  constructor(command, args, { env, stallMs = STALL_MS } = {}) {
    this.stallMs = stallMs;
    this.nextId = 1;
    this.pending = new Map();
    this.unexpected = 0;
    this.stderrTail = "";
    this.spawnedAt = performance.now();
    this.child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], env: env ?? process.env });
    // "close": after the exit and after stdout/stderr have delivered everything.
    this.exited = new Promise((resolve) => this.child.once("close", (code, signal) => resolve({ code, signal })));
    this.child.stdin.on("error", () => {}); // EPIPE after an early exit: reported through `exited`
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (d) => {
      this.stderrTail = (this.stderrTail + d).slice(-STDERR_KEEP);
    });
    const splitter = stdioLineSplitter((event) => {
      if (event.kind !== "line") return void this.unexpected++;
      const at = performance.now();
      let message;
      try {
        message = JSON.parse(event.line.toString("utf8"));
      } catch {
        return void this.unexpected++;
      }
      const waiter = message.id !== undefined && message.method === undefined ? this.pending.get(message.id) : undefined;
      if (!waiter) return void this.unexpected++;
      this.pending.delete(message.id);
      this.lastResponseAt = at;
      waiter.resolve({ message, at });
    });
    this.child.stdout.on("data", (chunk) => splitter.push(chunk));
    this.lastResponseAt = this.spawnedAt;
    const watchdog = setInterval(() => {
      if (this.pending.size === 0 || performance.now() - this.lastResponseAt < this.stallMs) return;
      const [oldestId, oldest] = this.pending.entries().next().value;
      const err = new Error(
        `${command}: no response for ${this.stallMs / 1000} s with ${this.pending.size} request(s) pending (oldest: id ${oldestId}, ${oldest.method}, sent ${((performance.now() - oldest.sentAt) / 1000).toFixed(0)} s ago); stderr ends: ${lastLine(this.stderrTail)}\n${this.stderrTail}`,
      );
      for (const w of this.pending.values()) w.reject(err);
      this.pending.clear();
      this.child.kill("SIGKILL");
    }, 1000);
    watchdog.unref();
    void this.exited.then(({ code, signal }) => {
      clearInterval(watchdog);
      const err = new Error(`${command} exited (${code ?? signal}) with ${this.pending.size} request(s) unanswered; stderr ends: ${lastLine(this.stderrTail)}\n${this.stderrTail}`);
      for (const w of this.pending.values()) w.reject(err);
      this.pending.clear();
    });
  }

  get pid() {
    return this.child.pid;
  }

  /** Sends a JSON-RPC request; resolves with its response and the time it arrived. */
  request(method, params) {
    const id = this.nextId++;
    if (this.pending.size === 0) this.lastResponseAt = performance.now(); // idle time is not a stall
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method, sentAt: performance.now() });
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  }

  /** Sends a JSON-RPC notification. */
  notify(method, params) {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method, ...(params ? { params } : {}) })}\n`);
  }

  /** `initialize` (throws on an error response); resolves with the time its response arrived. */
  async initialize() {
    const { message, at } = await this.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "orchestra-stdio-bench", version: "1.0.0" },
    });
    if (!message.result) throw new Error(`initialize failed: ${JSON.stringify(message.error)}`);
    this.notify("notifications/initialized");
    return at;
  }

  /** One `tools/call` of `echo`; resolves with { ok, at } (`ok`: a result echoing exactly `text`). */
  async echo(text) {
    const { message, at } = await this.request("tools/call", { name: "echo", arguments: { text } });
    const c = message.result?.content?.[0];
    return { ok: message.result?.isError !== true && c?.type === "text" && c.text === text, at, message };
  }

  /** CPU ms the process has used so far. */
  cpuMs() {
    return cpuMsOf(this.pid);
  }

  /** { rssKiB, peakRssKiB } of the process now. */
  memory() {
    return memoryKiBOf(this.pid);
  }

  /** Ends stdin and waits for the exit (SIGTERM after `graceMs`, SIGKILL 3 s later). */
  async close(graceMs = 5000) {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.stdin.end();
      const term = setTimeout(() => this.child.kill("SIGTERM"), graceMs);
      const kill = setTimeout(() => this.child.kill("SIGKILL"), graceMs + 3000);
      await this.exited;
      clearTimeout(term);
      clearTimeout(kill);
    }
  }
}

/**
 * Drives `calls` echo calls of `payload` bytes with `inFlight` outstanding at any time.
 * Returns { calls, failures, wallMs, callsPerSec, p50Ms, p99Ms, firstFailure }. A failure is an
 * error response or a result that is not the exact echo (the run goes on; the caller reports it).
 */
export async function driveEcho(session, { payload, inFlight, calls }) {
  const text = "x".repeat(payload);
  const lat = new Float64Array(calls);
  let next = 0;
  let failures = 0;
  let firstFailure;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= calls) return;
      const t0 = performance.now();
      const r = await session.echo(text);
      lat[i] = r.at - t0;
      if (!r.ok) {
        failures++;
        firstFailure ??= JSON.stringify(r.message).slice(0, 300);
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  const wallMs = performance.now() - t0;
  const sorted = Array.from(lat).sort((a, b) => a - b);
  return { calls, failures, firstFailure, wallMs, callsPerSec: (calls * 1000) / wallMs, p50Ms: quantile(sorted, 0.5), p99Ms: quantile(sorted, 0.99) };
}
