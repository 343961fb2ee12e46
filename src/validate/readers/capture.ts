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
import { isUtf8 } from "node:buffer";
import { isBlank, parseErrorText, type Dispatch, type LineConsumer } from "./dispatch.js";

/** A little-endian 32-bit word of four Latin-1 characters, as `DataView.getInt32(at, true)` reads it. */
const word = (chars: string): number => Buffer.from(chars, "latin1").readInt32LE(0);

/**
 * The record prefix `serve --capture` writes before a message, `{"ts":"<ts>","dir":"c2s","msg":`
 * with `<ts>` from `Date.prototype.toISOString()` (24 characters for the years 0000-9999), laid
 * out as 32-bit words at these byte offsets.
 */
const OPEN_A = word('{"ts'); // at 0
const OPEN_B = word('s":"'); // at 3 (overlapping: the prefix `{"ts":"` has 7 bytes)
const TS_AT = 7;
const TS_BYTES = 24;
const TAIL_AT = TS_AT + TS_BYTES; // `","dir":"c2s","msg":`
const TAIL_A = word('","d'); // at TAIL_AT
const TAIL_B = word('ir":'); // at TAIL_AT + 4
const DIR_C2S = word('"c2s'); // at TAIL_AT + 8
const DIR_S2C = word('"s2c');
const TAIL_C = word('","m'); // at TAIL_AT + 12
const TAIL_D = word('sg":'); // at TAIL_AT + 16
/** Where the message text starts. */
const MSG_AT = TAIL_AT + 20;
const CLOSE_BRACE = 0x7d;
const REPLACEMENT = "\ufffd";

/**
 * True when none of the four bytes of `w` is a control character (< 0x20), above 0x7e, `"` or
 * `\`: the bytes are printable ASCII that a JSON string holds as they are. Bit-parallel tests
 * ("does a byte of the word have a value below n / above n / equal to n"), each exact: a borrow
 * or carry between bytes only starts at a byte that already answers the test.
 */
export function plainStringWord(w: number): boolean {
  return notPlain(w) === 0;
}

/** Non-zero when a byte of `w` is not plain (see {@link plainStringWord}). */
function notPlain(w: number): number {
  const below20 = (w - 0x20202020) & ~w & 0x80808080;
  const above7e = ((w + 0x01010101) | w) & 0x80808080;
  const q = w ^ 0x22222222;
  const quote = (q - 0x01010101) & ~q & 0x80808080;
  const b = w ^ 0x5c5c5c5c;
  const backslash = (b - 0x01010101) & ~b & 0x80808080;
  return below20 | above7e | quote | backslash;
}

/**
 * The fast path for a message record exactly as `serve --capture` writes it (see the constants
 * above): `{"ts":"<24 printable ASCII characters other than " and \>","dir":"c2s"|"s2c","msg":
 * <text>}` with nothing after the final `}`. Such a line is valid UTF-8 and valid JSON, a record
 * with exactly these three members, if and only if `<text>` alone is valid UTF-8 and valid JSON,
 * and its `msg` is that value: so only `<text>` is decoded and parsed (no record object, no `ts`
 * string). The prefix is compared four bytes at a time (`view`: a DataView of `bytes`): in V8 a
 * byte-by-byte loop over a Buffer, or `charCodeAt`/`startsWith` over the decoded string, costs
 * more than the parse this saves. Returns false, having dispatched nothing, when the line does not
 * have that form or `<text>` does not decode or parse: the caller reads the whole line the
 * ordinary way, so every finding about a malformed record comes from there.
 */
function fastRecord(bytes: Buffer, view: DataView, start: number, end: number, lineNo: number, out: Dispatch): boolean {
  if (end - start < MSG_AT + 2 || bytes[end - 1] !== CLOSE_BRACE) return false;
  if (view.getInt32(start, true) !== OPEN_A || view.getInt32(start + 3, true) !== OPEN_B) return false;
  const ts = start + TS_AT; // 24 bytes: six words
  const tsBad =
    notPlain(view.getInt32(ts, true)) |
    notPlain(view.getInt32(ts + 4, true)) |
    notPlain(view.getInt32(ts + 8, true)) |
    notPlain(view.getInt32(ts + 12, true)) |
    notPlain(view.getInt32(ts + 16, true)) |
    notPlain(view.getInt32(ts + 20, true));
  if (tsBad !== 0) return false;
  const t = start + TAIL_AT;
  if (view.getInt32(t, true) !== TAIL_A || view.getInt32(t + 4, true) !== TAIL_B) return false;
  if (view.getInt32(t + 12, true) !== TAIL_C || view.getInt32(t + 16, true) !== TAIL_D) return false;
  const d = view.getInt32(t + 8, true);
  const dir = d === DIR_C2S ? "c2s" : d === DIR_S2C ? "s2c" : undefined;
  if (dir === undefined) return false;
  const from = start + MSG_AT;
  const text = bytes.toString("utf8", from, end - 1);
  if (text.includes(REPLACEMENT) && !isUtf8(bytes.subarray(from, end - 1))) return false;
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return false;
  }
  out.message(msg, out.times === true ? { line: lineNo, ts: bytes.toString("latin1", ts, ts + TS_BYTES) } : { line: lineNo }, dir);
  return true;
}

/** A line consumer for capture files; see the module comment. */
export function captureReader(out: Dispatch): LineConsumer {
  // A DataView of the buffer lines last came from (most lines of a chunk come from one buffer).
  let viewOf: Buffer | undefined;
  let view: DataView | undefined;
  return {
    bytes(bytes, start, end, lineNo) {
      if (bytes !== viewOf) {
        viewOf = bytes;
        view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      }
      return fastRecord(bytes, view!, start, end, lineNo, out);
    },
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
        out.message(r.msg, out.times === true && typeof r.ts === "string" ? { line: lineNo, ts: r.ts } : { line: lineNo }, dir);
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
