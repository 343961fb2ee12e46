/**
 * The interface between format readers and session checkers: readers turn lines (or HAR
 * entries) into parsed JSON values with a direction and an origin, and hand them to a
 * {@link Dispatch}, which routes them to the {@link SessionChecker} of their session.
 */
import type { Origin } from "../checker.js";
import type { RuleId } from "../rules.js";
import type { Direction } from "../types.js";

export interface Dispatch {
  /** A parsed JSON value (message or batch) sent in `dir`; `session` keys Claude-log servers and HAR `Mcp-Session-Id`s. */
  message(value: unknown, origin: Origin, dir: Direction, session?: string): void;
  /** A message that is not JSON; `error` is the parser's message. */
  unparsable(raw: string, error: string, origin: Origin, dir: Direction, session?: string): void;
  /** A reader-level problem (`input/*` rules) at `origin`. */
  problem(rule: RuleId, origin: Origin, message: string): void;
  /** A line (or HAR entry) that carries no MCP message and was ignored. */
  skip(): void;
  /** True when origins should carry the time the input gives a message (`Origin.ts`; for the HTML timeline). */
  times?: boolean;
}

/** Consumes the lines of a line-oriented format. */
export interface LineConsumer {
  line(text: string, lineNo: number): void;
  /**
   * Optional fast path: reads the line `bytes[start, end)` (no terminator, no byte-order mark)
   * without decoding all of it, and returns true, when it can give exactly the events
   * {@link line} gives for the decoded text; returns false, having done nothing, otherwise (the
   * caller then decodes the line, reports it if it is not valid UTF-8, and calls {@link line}).
   */
  bytes?(bytes: Buffer, start: number, end: number, lineNo: number): boolean;
  /** Optional: the input ended (a format whose messages may span lines reports an open one). */
  end?(): void;
}

/** The message of a thrown JSON.parse error, without a stack, on one line (V8 quotes the input). */
export function parseErrorText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/\r\n|\r|\n/g, "\\n");
}

/** True for a line with only spaces/tabs (or nothing). */
export function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}
