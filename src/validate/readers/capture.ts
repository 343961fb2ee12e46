/**
 * Reader for `serve --capture` files: one JSON object per line,
 * `{"ts": "<ISO-8601>", "dir": "c2s"|"s2c", "msg": <JSON-RPC message>}`, or `"raw": "<text>"`
 * instead of `msg` when the traffic line was not valid JSON. `ts` is not checked.
 */
import { isBlank, parseErrorText, type Dispatch, type LineConsumer } from "./dispatch.js";

/** A line consumer for capture files; see the module comment. */
export function captureReader(out: Dispatch): LineConsumer {
  return {
    line(text, lineNo) {
      if (isBlank(text)) {
        out.skip();
        return;
      }
      let rec: unknown;
      try {
        rec = JSON.parse(text);
      } catch (err) {
        out.problem("input/malformed-record", { line: lineNo }, `capture line is not JSON (${parseErrorText(err)})`);
        return;
      }
      if (typeof rec !== "object" || rec === null || Array.isArray(rec)) {
        out.problem("input/malformed-record", { line: lineNo }, "capture line is not a JSON object");
        return;
      }
      const r = rec as Record<string, unknown>;
      const dir = r.dir;
      if (dir !== "c2s" && dir !== "s2c") {
        out.problem("input/malformed-record", { line: lineNo }, `capture record "dir" must be "c2s" or "s2c", got ${JSON.stringify(dir) ?? "nothing"}`);
        return;
      }
      if ("msg" in r) {
        out.message(r.msg, { line: lineNo }, dir);
      } else if (typeof r.raw === "string") {
        let value: unknown;
        try {
          value = JSON.parse(r.raw);
        } catch (err) {
          out.unparsable(r.raw, parseErrorText(err), { line: lineNo }, dir);
          return;
        }
        out.message(value, { line: lineNo }, dir); // "raw" that parses after all: check it as a message
      } else {
        out.problem("input/malformed-record", { line: lineNo }, 'capture record has neither "msg" nor a string "raw"');
      }
    },
  };
}
