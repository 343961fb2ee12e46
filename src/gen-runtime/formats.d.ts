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
 * Types of ./formats.js (plain JavaScript, imported as is by the code generator).
 */
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
export declare function isBase64(value: string): boolean;
/**
 * {@link isBase64} for a string known to hold no character above U+00FF (one decoded from bytes
 * as Latin-1, or from ASCII bytes, like the long-line reader's payloads): the same verdict,
 * without the scan for such characters (step 1 below); characters U+0080-U+00FF are not in the
 * alphabet, so the decoder's count catches them as it catches any other stray character.
 */
export declare function isLatin1Base64(value: string): boolean;
/**
 * {@link isLatin1Base64} for a part of a longer payload that is not its end (its length a
 * multiple of 4): the same test, with no padding allowed. A payload cut into such parts and a
 * last part is well-formed base64 iff every part before the last passes this and the last passes
 * {@link isLatin1Base64} (the alphabet test is per character; `=` may only end the whole).
 */
export declare function isLatin1Base64Part(value: string): boolean;
/**
 * Declares `values` well-formed base64 (each one already checked with {@link isBase64} by the
 * caller) until the next call: {@link isBase64} then answers true for these very strings without
 * scanning them again. The long-line reader of `orchestra-stdio validate` (src/validate/bigline.ts)
 * checks the payloads of a line before the schema checks of its message run; `undefined` clears.
 * Only strings equal to one of `values` are affected, and their verdict is the same either way.
 */
export declare function verifiedBase64(values: readonly string[] | undefined): void;
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
export declare function isUri(value: string): boolean;
/**
 * The format table, keyed by format name, in the shape ajv's `addFormat(name, fn)` accepts and
 * the generated standalone code calls (`formats.byte(data)`).
 */
export declare const MCP_FORMATS: Readonly<Record<"byte" | "uri", (value: string) => boolean>>;
