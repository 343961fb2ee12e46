/**
 * Input format sniffing from the head of a file (its first ~64 KiB):
 *
 * 1. a `.har` name, or a first line that parses as an object with `log.entries`, or a first line
 *    that opens an object which is not complete on that line while the head mentions `"log"`
 *    → `har`;
 * 2. a first non-blank line that is a JSON object with `dir` `c2s`/`s2c` and `msg`, `raw` or `dropped`
 *    → `capture`;
 *    — or, when the first line does not fit in the head, one that opens the way `serve --capture`
 *    writes a record (`{"ts":"…","dir":"c2s"|"s2c","msg":`, or `raw`/`dropped`) → `capture`;
 * 3. any other JSON first line → `jsonl`;
 * 4. a head line in the Claude Desktop log style (`... [x] Message from client: ...`, with or
 *    without the timestamp, indented or quoted as pasted; or a body-less `method="..."` line of the
 *    newer log; the grammar is `claudeLine` of the reader), or a first line with its prefix, `<ISO-8601 timestamp> [name] [level]` (either order; e.g. the log of a
 *    server that crashed before any message: `... [orchestra] [info] Initializing server...`)
 *    → `claude-log`;
 * 5. a first line that is none of these (cut short) followed by a capture record → `capture`
 *    (the cut line is then an `input/malformed-record`);
 * 6. otherwise `jsonl` (its lines then fail as `json/parse-error`).
 */
import type { InputFormat } from "../types.js";
import { claudeLine } from "./claude-log.js";

/**
 * The start of a capture record: `dir` (after `ts`, or before it), then `msg`, `raw` or `dropped`,
 * as `serve --capture` writes it, or with the spaces other JSON writers put between tokens.
 */
const CAPTURE_PREFIX = /^\{\s*(?:"ts"\s*:\s*"[^"\\]*"\s*,\s*)?"dir"\s*:\s*"(?:c2s|s2c)"\s*,\s*(?:"ts"\s*:\s*"[^"\\]*"\s*,\s*)?"(?:msg|raw|dropped)"\s*:/;

/** Bytes of head read before deciding. */
export const SNIFF_BYTES = 64 * 1024;

/** The input format of a file from its head (UTF-8 text) and path; see the module comment. */
export function detectFormat(head: string, path: string): InputFormat {
  if (path.toLowerCase().endsWith(".har")) return "har";
  const text = withoutBom(head);
  const lines = text.split("\n", 200);
  const first = lines.find((l) => l.trim() !== "")?.trim();
  if (first === undefined) return "jsonl";
  const { parsed, value } = parseLine(first);
  if (parsed) {
    if (isPlainObject(value)) {
      const obj = value;
      const log = obj.log;
      if (typeof log === "object" && log !== null && Array.isArray((log as Record<string, unknown>).entries)) return "har";
      if (isRecordObject(obj)) return "capture";
      // JSON that is no JSON-RPC message (a program's own JSON log line) before Claude log lines.
      if (!("jsonrpc" in obj) && hasClaudeLogLine(lines)) return "claude-log";
    }
    return "jsonl";
  }
  // A first line longer than the head (a big first message): the record prefix `serve --capture` writes.
  if (CAPTURE_PREFIX.test(first)) return "capture";
  if (first.startsWith("{") && /"log"\s*:/.test(text)) return "har";
  if (claudeLine(first) !== undefined || hasClaudeLogLine(lines)) return "claude-log";
  // A capture whose first line was cut (`tail -c`, a recorder stopped mid-write): the next line.
  const second = lines.filter((l) => l.trim() !== "")[1]?.trim();
  if (second !== undefined && (CAPTURE_PREFIX.test(second) || isCaptureRecord(second))) return "capture";
  return "jsonl";
}

/** A head line that the Claude log grammar reads as a message (with or without a body). */
function hasClaudeLogLine(lines: readonly string[]): boolean {
  return lines.some((l) => {
    const kind = claudeLine(l)?.kind;
    return kind === "message" || kind === "bodiless";
  });
}

/** A parsed object with the members of a capture record. */
function isRecordObject(o: Record<string, unknown>): boolean {
  return (o.dir === "c2s" || o.dir === "s2c") && ("msg" in o || "raw" in o || "dropped" in o);
}

function isCaptureRecord(line: string): boolean {
  const { value } = parseLine(line);
  return isPlainObject(value) && isRecordObject(value);
}

const withoutBom = (head: string): string => (head.charCodeAt(0) === 0xfeff ? head.slice(1) : head);

/** `line` as JSON, when it is. */
function parseLine(line: string): { parsed: boolean; value: unknown } {
  try {
    return { parsed: true, value: JSON.parse(line) };
  } catch {
    return { parsed: false, value: undefined };
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The format of a live input (live.ts) from the part of its head that has arrived, when that part
 * already decides it: the same answer as {@link detectFormat} gives for any longer head, from the
 * complete lines only. Undefined when more must be read: no complete non-blank line yet, or a
 * first line that could still turn out to open a pretty-printed HAR or to precede Claude log lines.
 */
export function detectFormatEarly(head: string, path: string): InputFormat | undefined {
  if (path.toLowerCase().endsWith(".har")) return "har";
  const text = withoutBom(head);
  const complete = text.lastIndexOf("\n");
  if (complete < 0) return undefined;
  const lines = text.slice(0, complete).split("\n", 200);
  const first = lines.find((l) => l.trim() !== "")?.trim();
  if (first === undefined) return undefined;
  const { parsed, value } = parseLine(first);
  // Claude log lines decide, unless a first `{` line may still turn out to open a HAR.
  if ((parsed || !first.startsWith("{")) && (claudeLine(first) !== undefined || hasClaudeLogLine(lines))) {
    if (detectFormat(text.slice(0, complete + 1), path) === "claude-log") return "claude-log";
  }
  // A JSON first line, or a record prefix on it, decides alone (detectFormat's first rules), but
  // for a JSON object that is neither a record nor a JSON-RPC message: Claude log lines may follow.
  if (isPlainObject(value) && !("jsonrpc" in value) && detectFormat(first, path) === "jsonl") return undefined;
  if (parsed || CAPTURE_PREFIX.test(first)) return detectFormat(text.slice(0, complete + 1), path);
  return undefined; // `{` (perhaps a HAR, once `"log"` shows) or text before Claude log lines
}

/**
 * Why an input whose first bytes are `head` is not a text capture (gzip-compressed; UTF-16, as
 * Windows PowerShell's `>` writes text; or binary: a NUL byte, or mostly bytes that are not UTF-8,
 * in its first line or 4 KiB), else undefined. Such an input is one `input/unreadable` finding
 * (exit code 2), not a finding per line.
 */
export function notTextReason(head: Buffer): string | undefined {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return "not a text capture: gzip-compressed data (gunzip it first)";
  const utf16 = utf16Order(head);
  if (utf16 !== undefined) {
    return `not a text capture in UTF-8: UTF-16 text (${utf16}); convert it first: iconv -f UTF-16 -t UTF-8 FILE, or in PowerShell Out-File -Encoding utf8`;
  }
  const lf = head.indexOf(0x0a);
  const start = head.subarray(0, lf >= 0 && lf < 4096 ? lf : 4096); // (its first line: later ones are checked one by one)
  if (start.includes(0)) return "not a text capture: binary data (a NUL byte in its first line)";
  const text = start.toString("utf8");
  let bad = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 0xfffd) bad++;
  return bad * 10 > text.length ? "not a text capture: binary data (mostly not UTF-8 in its first line)" : undefined;
}

/**
 * The byte order of UTF-16 text: a byte order mark (FF FE little-endian, FE FF big-endian), or
 * without one, a NUL byte after (little-endian) or before (big-endian) each of the first 16 or
 * more ASCII characters; undefined for anything else.
 */
function utf16Order(head: Buffer): string | undefined {
  if (head.length >= 2 && head[0] === 0xff && head[1] === 0xfe) return "little-endian, with a byte order mark";
  if (head.length >= 2 && head[0] === 0xfe && head[1] === 0xff) return "big-endian, with a byte order mark";
  const pairs = Math.min(64, Math.floor(head.length / 2));
  if (pairs < 16) return undefined;
  const ascii = (b: number): boolean => b === 0x09 || b === 0x0a || b === 0x0d || (b >= 0x20 && b < 0x7f);
  let le = true;
  let be = true;
  for (let i = 0; i < pairs && (le || be); i++) {
    const [a, b] = [head[2 * i]!, head[2 * i + 1]!];
    le &&= ascii(a) && b === 0;
    be &&= a === 0 && ascii(b);
  }
  return le ? "little-endian" : be ? "big-endian" : undefined;
}
