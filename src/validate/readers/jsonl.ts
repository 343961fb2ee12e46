/** Reader for plain JSONL of one direction: one JSON-RPC message (or batch) per line. */
import type { Direction } from "../types.js";
import { isBlank, parseErrorText, type Dispatch, type LineConsumer } from "./dispatch.js";

/** A line consumer for JSONL of one direction `dir`; blank lines are skipped. */
export function jsonlReader(out: Dispatch, dir: Direction): LineConsumer {
  return {
    line(text, lineNo) {
      if (isBlank(text)) {
        out.skip();
        return;
      }
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        out.unparsable(text, parseErrorText(err), { line: lineNo }, dir);
        return;
      }
      out.message(value, { line: lineNo }, dir);
    },
  };
}

/**
 * Whether plain JSONL given without a direction is server→client: its first message (the first
 * element of a batch) is a response, or a request or notification that only a server sends
 * (`serverOnly(method)`). Returns that message's 1-based line in `head`, or undefined (read as
 * client→server, the default).
 */
export function serverSideFirstLine(head: string, serverOnly: (method: string) => boolean): number | undefined {
  const lines = head.split("\n", 200);
  const at = lines.findIndex((l) => !isBlank(l));
  if (at < 0) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(lines[at]!.charCodeAt(0) === 0xfeff ? lines[at]!.slice(1) : lines[at]!);
  } catch {
    return undefined;
  }
  const first = Array.isArray(value) ? value[0] : value;
  if (typeof first !== "object" || first === null) return undefined;
  const m = first as Record<string, unknown>;
  const isResponse = !("method" in m) && ("result" in m || "error" in m);
  const serverMessage = typeof m.method === "string" && serverOnly(m.method);
  return isResponse || serverMessage ? at + 1 : undefined;
}
