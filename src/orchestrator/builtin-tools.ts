/**
 * Tools every reference orchestrator serves unless told otherwise: `echo`, `slow`, `count`
 * (streams) and `stats` (the server's counters).
 */
import { ToolError, type Tool, type ToolContext } from "./registry.js";

/** `echo {text: string}` → `{text}`. */
export const echoTool: Tool = {
  name: "echo",
  description: "Returns its text argument unchanged.",
  inputSchema: {
    type: "object",
    properties: { text: { type: "string", description: "Text to return." } },
    required: ["text"],
    additionalProperties: false,
  },
  async handler(args) {
    if (typeof args.text !== "string") throw new ToolError("invalid_arguments", 'echo: "text" must be a string');
    return { text: args.text };
  },
};

/** Longest sleep `slow` accepts, in ms. */
export const SLOW_MAX_MS = 600_000;

/**
 * `slow {ms: number}` sleeps `ms` milliseconds then returns `{slept: ms}`. Cancelling the RPC
 * stops the sleep at once (the handler rejects with `cancelled`).
 */
export const slowTool: Tool = {
  name: "slow",
  description: "Sleeps for the given number of milliseconds, then returns {slept}. Stops early when cancelled.",
  inputSchema: {
    type: "object",
    properties: { ms: { type: "number", minimum: 0, maximum: SLOW_MAX_MS, description: "Milliseconds to sleep." } },
    required: ["ms"],
    additionalProperties: false,
  },
  handler(args, { signal }) {
    const ms = args.ms;
    if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0 || ms > SLOW_MAX_MS) {
      return Promise.reject(new ToolError("invalid_arguments", `slow: "ms" must be a number in 0..${SLOW_MAX_MS}`));
    }
    return pause(ms, signal, "slow").then(() => ({ slept: ms }));
  },
};

/** Largest `to` that `count` accepts. */
export const COUNT_MAX = 1000;
/** Longest pause between `count` chunks, ms. */
export const COUNT_MAX_DELAY_MS = 10_000;

function countArgs(args: Record<string, unknown>): { to: number; delayMs: number } {
  const to = args.to;
  const delayMs = args.delayMs ?? 0;
  if (typeof to !== "number" || !Number.isInteger(to) || to < 1 || to > COUNT_MAX) {
    throw new ToolError("invalid_arguments", `count: "to" must be an integer in 1..${COUNT_MAX}`);
  }
  if (typeof delayMs !== "number" || !Number.isFinite(delayMs) || delayMs < 0 || delayMs > COUNT_MAX_DELAY_MS) {
    throw new ToolError("invalid_arguments", `count: "delayMs" must be a number in 0..${COUNT_MAX_DELAY_MS}`);
  }
  return { to, delayMs };
}

/** Waits `ms`; rejects with `ToolError("cancelled", "<tool>: cancelled")` when `signal` aborts first. */
function pause(ms: number, signal: AbortSignal, tool: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new ToolError("cancelled", `${tool}: cancelled`));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new ToolError("cancelled", `${tool}: cancelled`));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * `count {to: 1..1000, delayMs?: 0..10000}`: counts from 1 to `to`.
 * Streaming (`stream_start`): one text chunk `"<n>\n"` per number, `delayMs` apart.
 * Unary (`tool_call`): `{text: "1\n2\n…\n", count: to}` after the same total delay.
 */
export const countTool: Tool = {
  name: "count",
  description: "Counts from 1 to `to`, one line per number; streams one chunk per number when asked for progress.",
  inputSchema: {
    type: "object",
    properties: {
      to: { type: "integer", minimum: 1, maximum: COUNT_MAX, description: "Last number." },
      delayMs: { type: "number", minimum: 0, maximum: COUNT_MAX_DELAY_MS, description: "Pause before each number, ms (default 0)." },
    },
    required: ["to"],
    additionalProperties: false,
  },
  async handler(args, { signal }) {
    const { to, delayMs } = countArgs(args);
    let text = "";
    for (let n = 1; n <= to; n++) {
      if (delayMs > 0) await pause(delayMs, signal, "count");
      text += `${n}\n`;
    }
    return { text, count: to };
  },
  async stream(args, { signal }, emit) {
    const { to, delayMs } = countArgs(args);
    for (let n = 1; n <= to; n++) {
      if (delayMs > 0) await pause(delayMs, signal, "count");
      if (signal.aborted) throw new ToolError("cancelled", "count: cancelled");
      emit({ data: `${n}\n` });
    }
  },
};

/**
 * `stats {}` → the serving orchestrator's counters (connections, streams opened / completed /
 * cancelled, tool calls, ...), e.g. for tests that check a cancellation reached the server.
 */
export const statsTool: Tool = {
  name: "stats",
  description: "Returns the orchestrator's counters (streams opened, completed, cancelled, tool calls, ...).",
  inputSchema: { type: "object", properties: {}, additionalProperties: false },
  async handler(_args, ctx: ToolContext) {
    return { ...(ctx.stats ?? {}) };
  },
};

/** The built-in tools, fresh array each call. */
export function builtinTools(): Tool[] {
  return [echoTool, slowTool, countTool, statsTool];
}
