/**
 * Tools every reference orchestrator serves unless told otherwise: `echo` and `slow`.
 */
import { ToolError, type Tool } from "./registry.js";

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
    return new Promise((resolve, reject) => {
      if (signal.aborted) {
        reject(new ToolError("cancelled", "slow: cancelled"));
        return;
      }
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(new ToolError("cancelled", "slow: cancelled"));
      };
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve({ slept: ms });
      }, ms);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  },
};

/** The built-in tools, fresh array each call. */
export function builtinTools(): Tool[] {
  return [echoTool, slowTool];
}
