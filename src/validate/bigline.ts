/**
 * A fast path for very long lines of the `capture` and `jsonl` formats, which are long because of
 * base64 payloads (images, audio, embedded blobs): decoding such a line to UTF-16 and running
 * JSON.parse over the payloads costs about as much as everything else in the line's validation.
 *
 * For a line of at least {@link BIG_LINE_BYTES} bytes, {@link splitBigLine} finds, in the raw
 * bytes, the JSON string values of at least {@link BIG_STRING_BYTES} bytes that are ASCII and
 * well-formed base64 (the `byte` format check, `isLatin1Base64`) and contain no escape, and replaces each with a short placeholder string (`"\u0000…#i"`,
 * which no string of the line can equal: the line contains no `\u0000` escape). The reader
 * parses the much shorter text; {@link BigLineConsumer} then puts the payload strings back into
 * the parsed message, so the checker gets exactly the value `JSON.parse` of the whole line gives.
 *
 * Exactness: the replaced bytes are a string's entire content in the JSON lexing (quotes and
 * backslash escapes are tracked from the line start, as JSON.parse does up to its first error),
 * consist of base64 characters only (no escapes, no control characters), and are not an object
 * key. So the shorter text parses if and only if the line does, into the same value but for those
 * strings; a string whose value is exactly those ASCII characters is put back where each
 * placeholder is. Whenever anything else happens — the reader reports a problem or an unparsable
 * line, a placeholder is missing from the message (e.g. outside `msg`, or lost to a duplicate key)
 * — the line is read again the ordinary way, from its full text, and the placeholder run leaves
 * no trace. Lines that are not valid UTF-8 are never split (the caller reports those).
 */
import { isAscii, isUtf8 } from "node:buffer";
import { isLatin1Base64, isLatin1Base64Part, verifiedBase64 } from "../mcp/formats.js";
import type { Dispatch, LineConsumer } from "./readers/dispatch.js";

/** Lines shorter than this (bytes) are read the ordinary way. */
export const BIG_LINE_BYTES = 64 * 1024;
/** Only string values at least this long (bytes) are replaced. */
export const BIG_STRING_BYTES = 4096;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
/** `\u0000` as it appears in JSON text: a line containing it is not split (see the module comment). */
const ESCAPED_NUL = Buffer.from("\\u0000", "latin1");
/** Placeholder prefix as a parsed string value (NUL first), and as JSON text. */
const PLACEHOLDER = "\u0000orchestra-b64#";
const PLACEHOLDER_JSON = "\\u0000orchestra-b64#";

/** A line with its long base64 strings taken out: `text` to parse, `strings[i]` for placeholder i. */
export interface SplitLine {
  text: string;
  strings: string[];
}

/** True when the quote at `q` is escaped (an odd number of backslashes before it). */
function escaped(line: Buffer, q: number): boolean {
  let k = q - 1;
  while (k >= 0 && line[k] === BACKSLASH) k--;
  return (q - 1 - k) % 2 === 1;
}

/** True when the first non-whitespace byte at or after `at` is `:` (the string before was a key). */
function keyFollows(line: Buffer, at: number): boolean {
  for (let i = at; i < line.length; i++) {
    const c = line[i]!;
    if (c === COLON) return true;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return false;
  }
  return false;
}

/**
 * Payload strings are made of parts of at most this many characters (a multiple of 4), joined:
 * V8 allocates a string this short in the young generation (memory it reuses) and joins them
 * into a rope (ConsString) without copying, where one string of the whole payload (often MiB)
 * would go to the large-object space, on fresh pages: the page faults made that allocation cost
 * ~5x more than copying the bytes (BENCHMARKS.md, "Results (2026-12-01, second session)").
 */
export const BASE64_PART_CHARS = 32 * 1024;

/**
 * The string value of an ASCII payload `bytes` when it is well-formed base64 (the `byte` format,
 * {@link isLatin1Base64}), else undefined. The string is a rope of {@link BASE64_PART_CHARS} parts, each
 * checked on its own ({@link isLatin1Base64Part}, which together give the whole's verdict); its
 * characters are those of the bytes (ASCII), as JSON.parse of the quoted bytes gives them.
 */
export function base64Value(bytes: Buffer): string | undefined {
  const n = bytes.length;
  if (n % 4 !== 0) return undefined;
  if (n <= BASE64_PART_CHARS) {
    const whole = bytes.toString("latin1");
    return isLatin1Base64(whole) ? whole : undefined;
  }
  let value = "";
  for (let at = 0; at < n; at += BASE64_PART_CHARS) {
    const end = Math.min(n, at + BASE64_PART_CHARS);
    const part = bytes.toString("latin1", at, end);
    if (!(end === n ? isLatin1Base64(part) : isLatin1Base64Part(part))) return undefined;
    value += part;
  }
  return value;
}

/**
 * Splits `bytes[start, end)` (one line, without terminator) as described in the module comment.
 * @returns undefined when the line keeps its ordinary path (short, not UTF-8, no such string).
 */
export function splitBigLine(bytes: Buffer, start: number, end: number): SplitLine | undefined {
  if (end - start < BIG_LINE_BYTES) return undefined;
  const line = bytes.subarray(start, end);
  if (line.indexOf(ESCAPED_NUL) !== -1 || !isUtf8(line)) return undefined;
  const n = line.length;
  let backslash = line.indexOf(BACKSLASH);
  const parts: string[] = [];
  const strings: string[] = [];
  let from = 0;
  let pos = 0;
  while (pos < n) {
    const open = line.indexOf(QUOTE, pos);
    if (open === -1) break;
    let close = line.indexOf(QUOTE, open + 1);
    while (close !== -1 && escaped(line, close)) close = line.indexOf(QUOTE, close + 1);
    if (close === -1) break; // unterminated: JSON.parse reports it, on the ordinary path
    if (close - open - 1 >= BIG_STRING_BYTES) {
      if (backslash !== -1 && backslash <= open) backslash = line.indexOf(BACKSLASH, open + 1);
      if ((backslash === -1 || backslash > close) && !keyFollows(line, close + 1)) {
        // Base64 is ASCII: only an ASCII payload can pass, and for ASCII bytes Latin-1 decoding
        // gives what UTF-8 decoding (JSON's reading of them) gives.
        const payload = line.subarray(open + 1, close);
        const value = isAscii(payload) ? base64Value(payload) : undefined;
        if (value !== undefined) {
          parts.push(line.toString("utf8", from, open + 1), PLACEHOLDER_JSON, String(strings.length));
          strings.push(value);
          from = close;
        }
      }
    }
    pos = close + 1;
  }
  if (strings.length === 0) return undefined;
  parts.push(line.toString("utf8", from, n));
  return { text: parts.join(""), strings };
}

/**
 * Puts the strings of `split` back in place of their placeholders in `value` (in place).
 * @returns false when not every placeholder was found exactly once (the value is then unusable).
 */
export function restoreStrings(value: unknown, strings: readonly string[]): boolean {
  if (value === null || typeof value !== "object") return false;
  const seen = new Uint8Array(strings.length);
  let found = 0;
  const stack: object[] = [value];
  const take = (s: string): string | undefined => {
    if (!s.startsWith(PLACEHOLDER)) return undefined;
    const digits = s.slice(PLACEHOLDER.length);
    const k = Number(digits);
    if (!/^(0|[1-9][0-9]*)$/.test(digits) || k >= strings.length || seen[k] === 1) return undefined;
    seen[k] = 1;
    found++;
    return strings[k];
  };
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const v: unknown = node[i];
        if (typeof v === "string") {
          if (v.charCodeAt(0) === 0) {
            const s = take(v);
            if (s === undefined) return false;
            node[i] = s;
          }
        } else if (v !== null && typeof v === "object") stack.push(v);
      }
    } else {
      const o = node as Record<string, unknown>;
      for (const key of Object.keys(o)) {
        const v = o[key];
        if (typeof v === "string") {
          if (v.charCodeAt(0) === 0) {
            const s = take(v);
            if (s === undefined) return false;
            o[key] = s; // an own data property (JSON.parse made it), also for "__proto__"
          }
        } else if (v !== null && typeof v === "object") stack.push(v);
      }
    }
  }
  return found === strings.length;
}

/**
 * A reader of a pass-through format (`capture`, `jsonl`: the parsed message is handed to
 * `message` as it is in the line) fed with line bytes; see the module comment.
 */
export class BigLineConsumer {
  private readonly reader: LineConsumer;
  /** Set while the reader reads a split line: its events are held, not forwarded. */
  private held: { events: number; message?: [unknown, Parameters<Dispatch["message"]>[1], Parameters<Dispatch["message"]>[2], string | undefined] } | undefined;

  /**
   * @param makeReader builds the format's reader over a dispatch (stateless across lines).
   * @param out where the events of every line go.
   */
  constructor(
    makeReader: (out: Dispatch) => LineConsumer,
    private readonly out: Dispatch,
  ) {
    const held = (): NonNullable<BigLineConsumer["held"]> => this.held!;
    this.reader = makeReader({
      message: (value, origin, dir, session) => {
        if (this.held === undefined) return out.message(value, origin, dir, session);
        const h = held();
        h.events++;
        h.message = [value, origin, dir, session];
      },
      unparsable: (raw, error, origin, dir, session) => {
        if (this.held === undefined) return out.unparsable(raw, error, origin, dir, session);
        held().events++;
      },
      problem: (rule, origin, message) => {
        if (this.held === undefined) return out.problem(rule, origin, message);
        held().events++;
      },
      skip: () => {
        if (this.held === undefined) return out.skip();
        held().events++;
      },
    });
  }

  /**
   * Reads the line `bytes[start, end)` when it takes the fast path, with exactly the events the
   * format's reader gives for its full text. @returns false (nothing done) for a line that does
   * not (short, not UTF-8, no long base64 string): the caller reads it the ordinary way.
   */
  line(bytes: Buffer, start: number, end: number, lineNo: number): boolean {
    const split = splitBigLine(bytes, start, end);
    if (split === undefined) return false;
    const h: NonNullable<BigLineConsumer["held"]> = { events: 0 };
    this.held = h;
    try {
      this.reader.line(split.text, lineNo);
    } finally {
      this.held = undefined;
    }
    const m = h.message;
    if (h.events === 1 && m !== undefined && restoreStrings(m[0], split.strings)) {
      // The schema checks of this message need not scan the payloads again; the declaration lasts until the next line is read
      // (`byteLineReader` in file.ts clears it).
      verifiedBase64(split.strings);
      this.out.message(m[0], m[1], m[2], m[3]);
    } else {
      this.reader.line(bytes.toString("utf8", start, end), lineNo);
    }
    return true;
  }
}
