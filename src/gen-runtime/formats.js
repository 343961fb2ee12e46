/**
 * JSON Schema `format` checks used by every MCP validator in this project: the ahead-of-time
 * validators in `src/gen/mcp/<version>/validators.js` import {@link MCP_FORMATS} from here, and the
 * runtime compiler in `src/mcp/validation.ts` registers the same functions with ajv. Both paths therefore
 * give identical verdicts.
 *
 * MCP schemas use two formats on protocol data: `byte` (base64 payloads of images, audio and
 * resource blobs, which can be many MiB) and `uri` (resource URIs). Both checks here are single
 * linear scans with no backtracking groups, so they stay cheap on large inputs and cannot overflow
 * the regex stack (ajv-formats' `byte` regex throws RangeError on a ~12 MB string).
 *
 * Dependency-free plain JavaScript (Node's global `Buffer` only; types in ./formats.d.ts): the code
 * generator imports it as is.
 */
/** Base64 alphabet (RFC 4648 §4) followed by at most two `=` padding characters. */
const BASE64_BODY = /^[A-Za-z0-9+/]*={0,2}$/;
/**
 * `format: "byte"` — standard base64 with padding (RFC 4648 §4; OpenAPI's "byte").
 *
 * Accepts the empty string. Requires the length to be a multiple of 4, only alphabet characters,
 * and `=` only as one or two trailing pad characters. No whitespace or line breaks (MCP carries
 * base64 inside JSON strings, where line wrapping is not used).
 *
 * Strings of 256 characters or more (the base64 payloads, often MiB long) are checked with Node's
 * base64 decoder instead of the regex, with exactly the regex's verdicts (see the steps below and
 * test/unit/mcp-formats.test.ts, which compares both on random and mutated strings).
 *
 * @param value the string to check (ajv only calls format checks on strings)
 * @returns true when `value` is well-formed padded base64. O(n); allocates only when a longer
 *   string than ever before needs a larger scratch buffer (kept for reuse, 3/4 of its length).
 */
export function isBase64(value) {
  return base64Check(value, false);
}
/**
 * {@link isBase64} for a string known to hold no character above U+00FF (one decoded from bytes
 * as Latin-1, or from ASCII bytes, like the long-line reader's payloads): the same verdict,
 * without the scan for such characters (step 1 below); characters U+0080-U+00FF are not in the
 * alphabet, so the decoder's count catches them as it catches any other stray character.
 */
export function isLatin1Base64(value) {
  return base64Check(value, true);
}
/**
 * {@link isLatin1Base64} for a part of a longer payload that is not its end (its length a
 * multiple of 4): the same test, with no padding allowed. A payload cut into such parts and a
 * last part is well-formed base64 iff every part before the last passes this and the last passes
 * {@link isLatin1Base64} (the alphabet test is per character; `=` may only end the whole).
 */
export function isLatin1Base64Part(value) {
  return value.charCodeAt(value.length - 1) !== EQUALS && base64Check(value, true);
}
function base64Check(value, latin1) {
  const length = value.length;
  if (length % 4 !== 0) return false;
  if (length < BASE64_FAST_MIN) return BASE64_BODY.test(value);
  // A payload the long-line reader has just checked (see verifiedBase64): the very same string
  // object, so `===` is one pointer comparison. (A history of earlier verdicts would cost more than
  // it saves: comparing a payload with an equal copy runs over the whole string, at about half the
  // speed of the check below.)
  const known = verified;
  if (known !== undefined) for (let i = 0; i < known.length; i++) if (known[i] === value) return true;
  // Same verdict as the regex, without it (it runs at ~100-150 MB/s; this at well over 1 GB/s):
  // 1. ASCII only. Node's decoder would read a character above U+00FF by its low byte.
  if (!latin1 && Buffer.byteLength(value, "utf8") !== length) return false;
  // 2. Node's decoder also accepts the base64url alphabet; the regex does not.
  if (value.indexOf("-") !== -1 || value.indexOf("_") !== -1) return false;
  // 3. At most two trailing `=`: a third one would have to be part of the body.
  let padding = 0;
  if (value.charCodeAt(length - 1) === EQUALS) {
    padding = value.charCodeAt(length - 2) === EQUALS ? 2 : 1;
    if (padding === 2 && value.charCodeAt(length - 3) === EQUALS) return false;
  }
  // 4. The decoder skips every other character (whitespace, `.`, ...) and stops at the first `=`,
  //    so it yields exactly length / 4 * 3 - padding bytes iff the body before the padding is
  //    entirely alphabet characters: one skipped or cut-off character costs at least one byte.
  const expected = (length / 4) * 3 - padding;
  if (scratch.length < expected + 3) scratch = Buffer.allocUnsafe(Math.max(expected + 3, 2 * scratch.length));
  return scratch.write(value, 0, "base64") === expected;
}
/**
 * Declares `values` well-formed base64 (each one already checked with {@link isBase64} by the
 * caller) until the next call: {@link isBase64} then answers true for these very strings without
 * scanning them again. The long-line reader of `orchestra-stdio validate` (src/validate/bigline.ts)
 * checks the payloads of a line before the schema checks of its message run; `undefined` clears.
 * Only strings equal to one of `values` are affected, and their verdict is the same either way.
 */
export function verifiedBase64(values) {
  verified = values;
}
/** Below this length the regex is as fast as the decoder-based check and needs no scratch space. */
const BASE64_FAST_MIN = 256;
const EQUALS = 0x3d;
/** See {@link verifiedBase64}. */
let verified;
/** Decoding target of {@link isBase64} (the decoded bytes are discarded); grown as needed. */
let scratch = Buffer.allocUnsafe(0);
/** scheme ":" then only characters that RFC 3986 allows anywhere in a URI. */
const URI_CHARS = /^[A-Za-z][A-Za-z0-9+.-]*:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;
/** A `%` not followed by two hex digits (invalid percent-encoding, RFC 3986 §2.1). */
const BAD_PERCENT = /%(?![0-9A-Fa-f]{2})/;
/**
 * `format: "uri"` — an absolute URI per RFC 3986 §3 (`scheme ":" hier-part ["?" query]
 * ["#" fragment]`), checked lexically: a valid scheme, then only URI characters, well-formed
 * percent-encoding and at most one `#`. It does not parse the authority (host, IPv6 literal,
 * port) in detail. Relative references such as `/path` or `file.txt` are rejected; non-ASCII
 * characters must be percent-encoded.
 *
 * @param value the string to check
 * @returns true when `value` looks like an absolute URI. O(n).
 */
export function isUri(value) {
  if (!URI_CHARS.test(value) || BAD_PERCENT.test(value)) return false;
  const hash = value.indexOf("#");
  return hash === -1 || value.indexOf("#", hash + 1) === -1;
}
/**
 * The format table, keyed by format name, in the shape ajv's `addFormat(name, fn)` accepts and
 * the generated standalone code calls (`formats.byte(data)`).
 */
export const MCP_FORMATS = {
  byte: isBase64,
  uri: isUri,
};
