/**
 * JSON Schema `format` checks used by every MCP validator in this project: the ahead-of-time
 * validators in `src/gen/mcp/<version>/validators.js` import {@link MCP_FORMATS} from here, and the
 * runtime compiler in `./validation.ts` registers the same functions with ajv. Both paths therefore
 * give identical verdicts.
 *
 * MCP schemas use two formats on protocol data: `byte` (base64 payloads of images, audio and
 * resource blobs, which can be many MiB) and `uri` (resource URIs). Both checks here are single
 * linear scans with no backtracking groups, so they stay cheap on large inputs and cannot overflow
 * the regex stack (ajv-formats' `byte` regex throws RangeError on a ~12 MB string).
 *
 * Pure, dependency-free module: the code generator loads it (transpiled) at generation time.
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
 * @param value the string to check (ajv only calls format checks on strings)
 * @returns true when `value` is well-formed padded base64. O(n), no allocation.
 */
export function isBase64(value: string): boolean {
  return value.length % 4 === 0 && BASE64_BODY.test(value);
}

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
export function isUri(value: string): boolean {
  if (!URI_CHARS.test(value) || BAD_PERCENT.test(value)) return false;
  const hash = value.indexOf("#");
  return hash === -1 || value.indexOf("#", hash + 1) === -1;
}

/**
 * The format table, keyed by format name, in the shape ajv's `addFormat(name, fn)` accepts and
 * the generated standalone code calls (`formats.byte(data)`).
 */
export const MCP_FORMATS: Readonly<Record<"byte" | "uri", (value: string) => boolean>> = {
  byte: isBase64,
  uri: isUri,
};
