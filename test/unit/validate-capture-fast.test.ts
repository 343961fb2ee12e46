/**
 * The capture reader's byte-level fast path (`captureReader(...).bytes`, src/validate/readers/
 * capture.ts): for every line it takes, the events must be exactly those the reader gives for the
 * line's full text; and it must take the records `serve --capture` writes.
 */
import { describe, expect, it } from "vitest";
import { captureReader, plainStringWord } from "../../src/validate/readers/capture.js";
import { dispatchRecorder } from "../helpers/dispatch-recorder.js";
import { mulberry32 as prng } from "../helpers/prng.js";

const recorder = dispatchRecorder;

/**
 * Events of the line `bytes` through the fast path (or, when it declines, through the reader on
 * the decoded text, as the line splitter does), and through the reader on the decoded text alone.
 */
function both(bytes: Buffer): { fast: string[]; plain: string[]; taken: boolean } {
  const padded = Buffer.concat([Buffer.from("ab\n"), bytes, Buffer.from("\ncd")]);
  const f = recorder();
  const reader = captureReader(f.out);
  const taken = reader.bytes!(padded, 3, 3 + bytes.length, 9);
  if (!taken) reader.line(bytes.toString("utf8"), 9);
  const p = recorder();
  captureReader(p.out).line(bytes.toString("utf8"), 9);
  return { fast: f.events, plain: p.events, taken };
}

/** A record as `serve --capture` writes it (src/bridge/capture.ts). */
const record = (ts: string, dir: string, text: string): string => `{"ts":"${ts}","dir":"${dir}","msg":${text}}`;

describe("capture reader fast path", () => {
  it("takes the records serve --capture writes, with the message the full parse gives", () => {
    const msg = { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "read", arguments: { path: "ä/✓" } } };
    for (const dir of ["c2s", "s2c"]) {
      const r = both(Buffer.from(record(new Date(Date.UTC(2026, 10, 30, 1, 2, 3, 4)).toISOString(), dir, JSON.stringify(msg))));
      expect(r.taken).toBe(true);
      expect(r.fast).toEqual(r.plain);
      expect(JSON.parse(r.fast[0]!)).toEqual(["message", msg, { line: 9 }, dir, null]);
    }
  });

  it("declines, and the ordinary path reports it, when the record is not in that exact form", () => {
    const ts = "2026-11-30T01:02:03.004Z";
    const cases = [
      record(ts, "up", "{}"), // bad direction
      record("2026-11-30T01:02:03Z", "c2s", "{}"), // another timestamp length
      record("2026-11-30T01:02:03.00\\Z", "c2s", "{}"), // escape in ts
      record("2026-11-30T01:02:03.0\u0001Z", "c2s", "{}"), // control character in ts (invalid JSON)
      record("2026-11-30T01:02:03.0\u00e9Z", "c2s", "{}"), // non-ASCII in ts
      `${record(ts, "c2s", "{}")} `, // trailing space
      record(ts, "c2s", '{"a":1},"raw":"x"'), // a second member after msg
      record(ts, "c2s", '{"a":1},"msg":2'), // duplicate msg
      record(ts, "c2s", "{"), // msg not JSON
      record(ts, "c2s", ""), // no msg value
      `{"ts":"${ts}","dir":"c2s","raw":"{x"}`,
    ];
    for (const line of cases) {
      const r = both(Buffer.from(line, "utf8"));
      expect(r.taken, line).toBe(false);
      expect(r.fast, line).toEqual(r.plain);
    }
  });

  it("declines a message that is not valid UTF-8, so that the caller reports it", () => {
    const bytes = Buffer.concat([Buffer.from('{"ts":"2026-11-30T01:02:03.004Z","dir":"s2c","msg":{"t":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}}')]);
    expect(both(bytes).taken).toBe(false);
  });

  it("matches the reader on random and mutated records", () => {
    const rand = prng(29);
    const alphabet = ['"', "\\", "{", "}", ",", ":", "a", "1", " ", "\u0000", "\u001f", "\u007f", "é", "✓", "c", "s", "2", "[", "]"];
    let taken = 0;
    for (let i = 0; i < 3000; i++) {
      const msg = { jsonrpc: "2.0", id: i, result: { content: [{ type: "text", text: `line ${i} ✓` }] } };
      const line = Buffer.from(record(new Date(1_700_000_000_000 + i * 997).toISOString(), rand() < 0.5 ? "c2s" : "s2c", JSON.stringify(msg)), "utf8");
      // Up to three random single-byte or character changes anywhere (prefix, ts, message, end).
      let bytes = line;
      const edits = Math.floor(rand() * 4);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(rand() * bytes.length);
        const kind = rand();
        if (kind < 0.4) bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(alphabet[Math.floor(rand() * alphabet.length)]!), bytes.subarray(at + 1)]);
        else if (kind < 0.7) bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1)]);
        else if (kind < 0.9) bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(alphabet[Math.floor(rand() * alphabet.length)]!), bytes.subarray(at)]);
        else bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from([0x80 + Math.floor(rand() * 64)]), bytes.subarray(at + 1)]);
      }
      if (bytes.toString("utf8").includes("\ufffd")) continue; // the caller reports invalid UTF-8 itself
      const r = both(bytes);
      if (r.taken) taken++;
      expect(r.fast, bytes.toString("utf8")).toEqual(r.plain);
    }
    expect(taken).toBeGreaterThan(500);
  });

  it("plainStringWord answers as a byte-by-byte check does", () => {
    const plain = (b: number): boolean => b >= 0x20 && b <= 0x7e && b !== 0x22 && b !== 0x5c;
    const rand = prng(5);
    const special = [0x00, 0x01, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x5b, 0x5c, 0x5d, 0x7e, 0x7f, 0x80, 0x81, 0xa2, 0xdc, 0xfe, 0xff];
    const bytes = Buffer.alloc(4);
    for (let i = 0; i < 200_000; i++) {
      for (let k = 0; k < 4; k++) bytes[k] = rand() < 0.5 ? special[Math.floor(rand() * special.length)]! : Math.floor(rand() * 256);
      const expected = plain(bytes[0]!) && plain(bytes[1]!) && plain(bytes[2]!) && plain(bytes[3]!);
      expect(plainStringWord(bytes.readInt32LE(0)), bytes.toString("hex")).toBe(expected);
    }
  });
});
