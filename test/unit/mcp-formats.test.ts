/**
 * The `byte` (base64) and `uri` format checks shared by generated and runtime validators:
 * correctness against ajv-formats on ordinary inputs, and robustness on multi-MiB inputs where
 * ajv-formats' backtracking regexes overflow the stack.
 */
import { fullFormats } from "ajv-formats/dist/formats.js";
import { describe, expect, it } from "vitest";
import { isBase64, isLatin1Base64, isUri, MCP_FORMATS } from "../../src/mcp/formats.js";
import { validatorsFor } from "../../src/mcp/validation.js";
import { mulberry32 as prng } from "../helpers/prng.js";

const ajvByte = fullFormats.byte as (s: string) => boolean;
const ajvUri = fullFormats.uri as (s: string) => boolean;

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

describe("format byte: the fast check for long strings has exactly the regex's verdicts", () => {
  /** The definition: length a multiple of 4, alphabet, at most two trailing `=`. */
  const reference = (s: string): boolean => s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s);
  const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  /** Characters a mutation may insert: padding, base64url, whitespace, other ASCII, non-ASCII (also
   * characters whose low byte is an alphabet character, and a lone surrogate). */
  const STRAY = ["=", "-", "_", " ", "\n", "\r", "\t", ".", "!", "\u0000", "\u007f", "\u0080", "é", "\u0141", "\u0241", "\uff2b", "\ud83d", "😀"];

  function mutate(s: string, rand: () => number): string {
    const at = Math.floor(rand() * (s.length + 1));
    const stray = STRAY[Math.floor(rand() * STRAY.length)]!;
    switch (Math.floor(rand() * 7)) {
      case 0: // replace one character
        return s.slice(0, at) + stray + s.slice(at + 1);
      case 1: // insert (breaks the length), then maybe drop one to restore it
        return rand() < 0.5 ? s.slice(0, at) + stray + s.slice(at) : s.slice(0, at) + stray + s.slice(at + 2);
      case 2: // padding in the middle
        return `${s.slice(0, at)}==${s.slice(at + 2)}`;
      case 3: // one, two or three trailing `=`
        return s.slice(0, s.length - 3) + ["A==", "AA=", "===", "=A=", "==A"][Math.floor(rand() * 5)]!;
      case 4: // drop one or two characters at the end or in the middle
        return s.slice(0, at) + s.slice(at + 1 + Math.floor(rand() * 2));
      case 5: // url-safe alphabet throughout
        return s.replace(/\+/g, "-").replace(/\//g, "_");
      default: // a stray character near the end (after a fast-path-sized prefix)
        return `${s.slice(0, s.length - 2)}${stray}${s.slice(s.length - 1)}`;
    }
  }

  it("agrees with the regex on random and mutated strings of both sides of 256 characters", () => {
    const rand = prng(7);
    let checked = 0;
    let accepted = 0;
    for (let i = 0; i < 20_000; i++) {
      // Lengths around the 256-character switch, and some much longer ones.
      const n = i % 10 === 0 ? 240 + Math.floor(rand() * 4000) : 180 + Math.floor(rand() * 160);
      const bytes = Buffer.from(Array.from({ length: n }, () => Math.floor(rand() * 256)));
      let s = bytes.toString("base64");
      if (rand() < 0.1) {
        // Random alphabet characters (non-canonical trailing bits), any length.
        s = Array.from({ length: s.length + Math.floor(rand() * 4) }, () => ALPHABET[Math.floor(rand() * 64)]).join("");
      }
      const rounds = Math.floor(rand() * 3);
      for (let r = 0; r < rounds; r++) s = mutate(s, rand);
      expect(isBase64(s), JSON.stringify(s)).toBe(reference(s));
      checked++;
      if (reference(s)) accepted++;
    }
    expect(checked).toBe(20_000);
    // Both verdicts occur often enough for the comparison to mean something.
    expect(accepted).toBeGreaterThan(3_000);
    expect(checked - accepted).toBeGreaterThan(3_000);
  });

  it("agrees on every single-character stray at every position of a long string", () => {
    const base = Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 37) & 255)).toString("base64");
    for (const pad of ["", "=", "=="]) {
      const s0 = pad === "" ? base : base.slice(0, base.length - pad.length) + pad;
      expect(isBase64(s0)).toBe(reference(s0));
      for (let at = 0; at < s0.length; at += 1) {
        for (const stray of STRAY) {
          const s = s0.slice(0, at) + stray + s0.slice(at + 1);
          expect(isBase64(s), `${pad} ${at} ${JSON.stringify(stray)}`).toBe(reference(s));
        }
      }
    }
  });

  it("isLatin1Base64 gives the regex's verdicts on strings of Latin-1 characters (decoded from bytes)", () => {
    const rand = prng(13);
    const latin1Stray = STRAY.filter((c) => c.length === 1 && c.charCodeAt(0) <= 0xff).concat(["\u00c1", "\u00ff", "\u00aa"]);
    let rejected = 0;
    for (let i = 0; i < 5_000; i++) {
      let s = Buffer.from(Array.from({ length: 190 + Math.floor(rand() * 600) }, () => Math.floor(rand() * 256))).toString("base64");
      for (let r = Math.floor(rand() * 3); r > 0; r--) {
        const at = Math.floor(rand() * s.length);
        s = s.slice(0, at) + latin1Stray[Math.floor(rand() * latin1Stray.length)]! + s.slice(at + 1);
      }
      const bytes = Buffer.from(s, "latin1"); // the long-line reader's way to the string
      const decoded = bytes.toString("latin1");
      expect(isLatin1Base64(decoded), JSON.stringify(decoded)).toBe(reference(decoded));
      if (!reference(decoded)) rejected++;
    }
    expect(rejected).toBeGreaterThan(1_000);
  });

  it("accepts what Buffer encodes at the 256-character boundary and beyond", () => {
    for (let n = 180; n < 200; n++) {
      const s = Buffer.alloc(n, n).toString("base64");
      expect(isBase64(s)).toBe(true);
      expect(isBase64(`${s}=`)).toBe(false);
      expect(isBase64(`${s}AAA=`)).toBe(n % 3 === 0);
      expect(isBase64(`${s}A===`)).toBe(false);
    }
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
    'http://x/"quoted"',
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
