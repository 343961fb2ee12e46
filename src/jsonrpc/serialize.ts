/**
 * The one serializer of outbound JSON-RPC lines (MCP stdio transport: one JSON text per line).
 *
 * - A value that must be written as exact source text (a request id as the client wrote it,
 *   e.g. `9007199254740993` or `1e2`, see ./request-id.ts) implements `toJSON()` by calling
 *   {@link exactToken}: inside {@link serialize} that returns a placeholder which is replaced by
 *   the token text after `JSON.stringify`; elsewhere (logs) the token's JS value is used.
 * - U+2028 and U+2029 are written as `\u2028` / `\u2029`: JSON allows them raw, but line readers
 *   that follow ECMAScript line terminators (Node's `readline`) would split the line there.
 */

/** A value whose JSON is its exact source text. */
export interface ExactToken {
  /** The JSON token text, e.g. `9007199254740993`, `-0`, `"x"`. */
  readonly text: string;
  /** The token's JS value (what `JSON.parse(text)` gives). */
  readonly value: unknown;
  /** Whether `JSON.stringify(value)` is already `text` (no splice needed). */
  readonly canonical: boolean;
}

/** Random per process: the placeholder cannot be guessed by message content. */
const NONCE = `\u0000exact-token:${Math.random().toString(36).slice(2)}${Date.now().toString(36)}:`;
let active: ExactToken[] | undefined;

/** `toJSON()` of an {@link ExactToken}: a placeholder while {@link serialize} runs, else its value. */
export function exactToken(token: ExactToken): unknown {
  if (token.canonical || active === undefined) return token.value;
  active.push(token);
  return NONCE + (active.length - 1);
}

const SEPARATORS = /[\u2028\u2029]/g;
const escapeSeparator = (c: string): string => (c === "\u2028" ? "\\u2028" : "\\u2029");

/**
 * `value` as one line of JSON (no terminator): exact tokens spliced in, U+2028/U+2029 escaped.
 * @throws RangeError from `JSON.stringify` on values nested too deep (callers check
 *   {@link import("./line-scan.js").exceedsDepth} first).
 */
export function serialize(value: unknown): string {
  const outer = active;
  const tokens: ExactToken[] = [];
  active = tokens;
  let text: string;
  try {
    text = JSON.stringify(value);
  } finally {
    active = outer;
  }
  if (tokens.length > 0) {
    // JSON.stringify writes the placeholder's NUL as \u0000.
    const quoted = JSON.stringify(NONCE);
    const prefix = quoted.slice(0, -1);
    let out = "";
    let from = 0;
    for (;;) {
      const at = text.indexOf(prefix, from);
      if (at === -1) break;
      const end = text.indexOf('"', at + prefix.length);
      const index = Number(text.slice(at + prefix.length, end));
      out += text.slice(from, at) + tokens[index]!.text;
      from = end + 1;
    }
    text = out + text.slice(from);
  }
  return text.replace(SEPARATORS, escapeSeparator);
}
