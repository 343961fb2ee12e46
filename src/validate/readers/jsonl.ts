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
