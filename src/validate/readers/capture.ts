/**
 * Reader for `serve --capture` files: one JSON object per line,
 * `{"ts": "<ISO-8601>", "dir": "c2s"|"s2c", "msg": <JSON-RPC message>}`, or `"raw": "<text>"`
 * instead of `msg` when the traffic line was not valid JSON. `ts` is not checked.
 *
 * A record `{"ts", "dir", "dropped": {"bytes": N, "limit": M, "reason": "line-too-long"}}` marks
 * a message the bridge read but refused unrecorded (a line over its M-byte limit; `bytes` is its
 * length, or its length so far when the input ended inside it). It becomes an
 * `input/dropped-message` warning and, like an `input/line-too-long` line, suppresses the
 * follow-on findings the missing message could explain (the bridge's `-32600` reply to it, an
 * unanswered request).
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
      if ("dropped" in r) {
        const d = r.dropped;
        const bytes = typeof d === "object" && d !== null && !Array.isArray(d) ? (d as Record<string, unknown>).bytes : undefined;
        if (typeof bytes !== "number") {
          out.problem("input/malformed-record", { line: lineNo }, 'capture record "dropped" must be an object with a number "bytes"');
          return;
        }
        const info = d as Record<string, unknown>;
        const limit = typeof info.limit === "number" ? ` over the ${info.limit}-byte line limit` : "";
        const reason = typeof info.reason === "string" ? ` (${info.reason})` : "";
        const who = dir === "c2s" ? "client→server" : "server→client";
        out.problem(
          "input/dropped-message",
          { line: lineNo },
          `the recorder dropped a ${who} message of ${bytes} bytes${limit}${reason}; it is not in the capture, so findings it could explain are not reported`,
        );
      } else if ("msg" in r) {
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
