/**
 * The `byte` (base64) and `uri` format checks shared by generated and runtime validators:
 * correctness against ajv-formats on ordinary inputs, and robustness on multi-MiB inputs where
 * ajv-formats' backtracking regexes overflow the stack.
 */
import { fullFormats } from "ajv-formats/dist/formats.js";
import { describe, expect, it } from "vitest";
import { isBase64, isUri, MCP_FORMATS } from "../../src/mcp/formats.js";
import { validatorsFor } from "../../src/mcp/validation.js";

const ajvByte = fullFormats.byte as (s: string) => boolean;
const ajvUri = fullFormats.uri as (s: string) => boolean;

/** Small deterministic PRNG (mulberry32) so the generated cases are the same on every run. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("format byte (base64)", () => {
  it("accepts padded base64, including what Buffer encodes", () => {
    for (const s of ["", "AAAA", "AAA=", "AA==", "aGVsbG8=", "+/+/", "QUJDRA=="]) expect(isBase64(s), s).toBe(true);
    const rand = prng(1);
    for (let n = 0; n < 64; n++) {
      const bytes = Buffer.from(Array.from({ length: n }, () => Math.floor(rand() * 256)));
      expect(isBase64(bytes.toString("base64"))).toBe(true);
    }
  });

  it("rejects bad length, stray padding, other alphabets and whitespace", () => {
    for (const s of ["A", "AA", "AAA", "A===", "AA=A", "====", "AAAAA===", "AA-_", "AAAA\n", " AAAA", "AA AA", "ÀAAA"]) {
      expect(isBase64(s), JSON.stringify(s)).toBe(false);
    }
  });

  it("agrees with ajv-formats' byte on random short strings without line breaks", () => {
    const alphabet = "ABCxyz019+/=-_ !";
    const rand = prng(42);
    for (let i = 0; i < 5000; i++) {
      const len = Math.floor(rand() * 13);
      let s = "";
      for (let j = 0; j < len; j++) s += alphabet[Math.floor(rand() * alphabet.length)];
      expect(isBase64(s), JSON.stringify(s)).toBe(ajvByte(s));
    }
  });

  it("handles a 16 MiB blob without throwing, valid or with one bad character at the end", () => {
    const blob = Buffer.alloc(12 * 1024 * 1024, 7).toString("base64");
    expect(blob.length).toBeGreaterThanOrEqual(16 * 1024 * 1024);
    expect(() => ajvByte(blob)).toThrow(RangeError); // why we do not use ajv-formats here
    expect(isBase64(blob)).toBe(true);
    expect(isBase64(`${blob.slice(0, -4)}AA!A`)).toBe(false);
    const v = validatorsFor("2025-06-18");
    expect(v?.validate("ImageContent", { type: "image", data: blob, mimeType: "image/png" })).toBeNull();
  });
});

describe("format uri", () => {
  const valid = [
    "https://example.com/a/b?c=d#frag",
    "file:///tmp/x.txt",
    "urn:isbn:0451450523",
    "mailto:someone@example.com",
    "custom+scheme.v1-2://host/path",
    "data:text/plain;base64,SGVsbG8=",
    "http://[::1]:8080/",
    "resource://orchestra/tools/echo",
    "http://example.com/%20space",
  ];
  const invalid = [
    "",
    "relative/path",
    "/absolute/path",
    "1http://x",
    "://missing-scheme",
    "http://exa mple.com",
    "http://x/%zz",
    "http://x/%2",
    "http://x/#a#b",
    "http://ü.example",
    "http://x/\"quoted\"",
    "http://x/<tag>",
  ];

  it("accepts absolute URIs of any scheme", () => {
    for (const s of valid) expect(isUri(s), s).toBe(true);
  });

  it("rejects relative references, bad characters and bad percent-encoding", () => {
    for (const s of invalid) expect(isUri(s), s).toBe(false);
  });

  it("agrees with ajv-formats' RFC 3986 uri on these examples", () => {
    for (const s of [...valid, ...invalid]) expect(isUri(s), s).toBe(ajvUri(s));
  });

  it("handles a 10 MB URI without throwing", () => {
    const long = `file:///${"a/".repeat(5_000_000)}`;
    expect(isUri(long)).toBe(true);
    expect(isUri(`${long} `)).toBe(false);
  });
});

it("MCP_FORMATS exposes exactly the formats our schemas use", () => {
  expect(Object.keys(MCP_FORMATS).sort()).toEqual(["byte", "uri"]);
  expect(MCP_FORMATS.byte).toBe(isBase64);
  expect(MCP_FORMATS.uri).toBe(isUri);
});
