/**
 * The long-line fast path (`src/validate/bigline.ts`): for every line, the events the capture and
 * JSONL readers give through it must be exactly those they give for the line's full text.
 */
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { BASE64_PART_CHARS, base64Value, BIG_LINE_BYTES, BigLineConsumer, splitBigLine } from "../../src/validate/bigline.js";
import { lineReader } from "../../src/validate/file.js";
import { validateFiles } from "../../src/validate/index.js";
import { dispatchRecorder } from "../helpers/dispatch-recorder.js";
import { mulberry32 as prng } from "../helpers/prng.js";

const recorder = dispatchRecorder;

/** Events of `line` through the fast path, and through the reader on the full text. */
function both(format: "capture" | "jsonl", line: string): { fast: string[]; plain: string[]; taken: boolean } {
  const bytes = Buffer.from(`xx${line}yy`, "utf8");
  const f = recorder();
  const big = new BigLineConsumer((out) => lineReader(format, out, "s2c"), f.out);
  const taken = big.line(bytes, 2, bytes.length - 2, 7);
  if (!taken) lineReader(format, f.out, "s2c").line(line, 7);
  const p = recorder();
  lineReader(format, p.out, "s2c").line(line, 7);
  return { fast: f.events, plain: p.events, taken };
}

const b64 = (n: number, rand: () => number): string => Buffer.from(Array.from({ length: n }, () => Math.floor(rand() * 256))).toString("base64");

describe("long-line fast path", () => {
  it("gives the reader's events for a capture line with image and blob payloads, without decoding them", () => {
    const rand = prng(3);
    const msg = {
      jsonrpc: "2.0",
      id: 12,
      result: {
        content: [
          { type: "image", data: b64(60_000, rand), mimeType: "image/png" },
          { type: "text", text: 'done ✓ "quoted" \\ back' },
          { type: "resource", resource: { uri: "file:///x", blob: b64(5_000, rand) } },
        ],
      },
    };
    const line = JSON.stringify({ ts: "2025-06-18T10:00:00.000Z", dir: "s2c", msg });
    const split = splitBigLine(Buffer.from(line), 0, Buffer.byteLength(line));
    expect(split?.strings.length).toBe(2);
    expect(split!.text.length).toBeLessThan(1000);
    const r = both("capture", line);
    expect(r.taken).toBe(true);
    expect(r.fast).toEqual(r.plain);
    expect(JSON.parse(r.fast[0]!)[1]).toEqual(msg);
  });

  it("matches the reader on random and mutated lines (capture and jsonl)", () => {
    const rand = prng(11);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)]!;
    let taken = 0;
    for (let i = 0; i < 250; i++) {
      const big = b64(BIG_LINE_BYTES + Math.floor(rand() * 5000), rand);
      const small = b64(3100 + Math.floor(rand() * 200), rand);
      const msg: Record<string, unknown> = {
        jsonrpc: "2.0",
        id: i,
        result: {
          content: [
            { type: pick(["image", "audio"]), data: big, mimeType: "x/y" },
            { type: "resource", resource: { uri: "u:x", blob: small } },
          ],
        },
      };
      let line = JSON.stringify(pick([{ ts: "t", dir: pick(["s2c", "c2s", "up"]), msg }, { ts: "t", dir: "s2c", raw: big }, msg, [msg, msg]]));
      // Mutations: breaks of the JSON, of the base64, escapes, duplicate keys, keys that are payloads, NULs.
      switch (Math.floor(rand() * 15)) {
        case 0:
          line = line.replace(big, `${big.slice(0, 100)}\\"${big.slice(100)}`);
          break;
        case 1:
          line = line.replace(big, `${big.slice(0, 100)}\\/${big.slice(102)}`);
          break;
        case 2:
          line = line.replace(big, `${big.slice(0, 100)}-${big.slice(101)}`);
          break;
        case 3:
          line = line.replace(big, `${big.slice(0, 100)}\u0001${big.slice(101)}`);
          break;
        case 4:
          line = line.replace('"result":', `"result":{"dup":"${small}"},"result":`);
          break;
        case 5:
          line = line.replace('"jsonrpc":', `"${small}":1,"jsonrpc":`);
          break;
        case 6:
          line = line.replace('"mimeType":"x/y"', '"mimeType":"\\u0000orchestra-b64#0"');
          break;
        case 7:
          line = line.slice(0, line.length - 1 - Math.floor(rand() * 3));
          break;
        case 8:
          line = line.replace(big, `${big}"x`);
          break;
        case 9:
          line = line.replace('"ts":"t"', `"ts":"${small}"`);
          break;
        case 10:
          line = line.replace(big, `${big.slice(0, 50)}é${big.slice(51)}`);
          break;
        case 11:
          line = line.replace("{", `{"x": "${small}", "y" : "${small}" ,`);
          break;
        case 12:
          // Characters above U+00FF whose low byte is a base64 character (Œ is U+0152: "R").
          line = line.replace(big, `${big.slice(0, 70)}${pick(["Œ", "ł", "Ł"])}${big.slice(71)}`);
          break;
        default:
          break;
      }
      for (const format of ["capture", "jsonl"] as const) {
        const r = both(format, line);
        if (r.taken) taken++;
        expect(r.fast, `${format} case ${i}`).toEqual(r.plain);
      }
    }
    expect(taken).toBeGreaterThan(120);
  });

  it("leaves short lines, lines with \\u0000 escapes and lines that are not UTF-8 to the ordinary path", () => {
    const rand = prng(5);
    const data = b64(BIG_LINE_BYTES, rand);
    expect(splitBigLine(Buffer.from(`{"a":"${data.slice(0, 5000)}"}`), 0, 5008)).toBeUndefined();
    const withNul = Buffer.from(`{"a":"${data}","b":"\\u0000"}`);
    expect(splitBigLine(withNul, 0, withNul.length)).toBeUndefined();
    const bad = Buffer.concat([Buffer.from(`{"a":"${data}","b":"`), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    expect(splitBigLine(bad, 0, bad.length)).toBeUndefined();
    const ok = Buffer.from(`{"a":"${data}"}`);
    expect(splitBigLine(ok, 0, ok.length)?.strings).toEqual([data]);
  });
});

describe("long-line fast path: payload strings made of parts", () => {
  const reference = (s: string): boolean => s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s);
  const ASCII_STRAY = ["=", "==", "-", "_", " ", ".", "\u0000", "\u007f", "A"];

  it("gives the byte format's verdict and the payload's characters, with strays at and around every part boundary", () => {
    const rand = prng(21);
    let accepted = 0;
    let rejected = 0;
    for (const parts of [1, 2, 3]) {
      for (const pad of ["", "=", "=="]) {
        // Exactly `parts` parts, a part and a bit, and a part short of a boundary.
        for (const extra of [0, 4, -4]) {
          const n = parts * BASE64_PART_CHARS + extra;
          if (n <= 0) continue;
          let s = Array.from({ length: n }, () => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[Math.floor(rand() * 64)]).join("");
          s = s.slice(0, n - pad.length) + pad;
          const positions = [0, 1, n - 1, n - 2, n - 3];
          for (let k = 1; k <= parts; k++) positions.push(k * BASE64_PART_CHARS - 1, k * BASE64_PART_CHARS, k * BASE64_PART_CHARS + 1);
          const cases = [s, s.slice(0, -1), `${s}A`];
          for (const at of positions.filter((p) => p >= 0 && p < n)) {
            for (const stray of ASCII_STRAY) cases.push(s.slice(0, at) + stray + s.slice(at + stray.length));
          }
          for (const c of cases) {
            const value = base64Value(Buffer.from(c, "latin1"));
            expect(value !== undefined, `${parts} parts, pad ${JSON.stringify(pad)}, ${c.length} chars`).toBe(reference(c));
            if (value !== undefined) {
              expect(value === c).toBe(true);
              accepted++;
            } else {
              rejected++;
            }
          }
        }
      }
    }
    expect(accepted).toBeGreaterThan(20);
    expect(rejected).toBeGreaterThan(200);
  });

  it("a line with a multi-part payload gives the reader's events for its full text", async () => {
    const data = b64(3 * BASE64_PART_CHARS, prng(22)); // 4 parts of base64 characters
    expect(data.length).toBeGreaterThan(3 * BASE64_PART_CHARS);
    const line = JSON.stringify({
      ts: "2025-06-18T10:00:00.000Z",
      dir: "s2c",
      msg: { jsonrpc: "2.0", id: 1, result: { content: [{ type: "image", data, mimeType: "image/png" }] } },
    });
    const split = splitBigLine(Buffer.from(line), 0, Buffer.byteLength(line));
    expect(split?.strings).toEqual([data]);
    const r = both("capture", line);
    expect(r.taken).toBe(true);
    expect(r.fast).toEqual(r.plain);
  });
});

describe("long-line fast path: schema verdicts", () => {
  /** A capture whose one long result carries `data` as its image payload. */
  const capture = (data: string): string =>
    [
      {
        ts: "2025-06-18T10:00:00.000Z",
        dir: "c2s",
        msg: { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } } },
      },
      {
        ts: "2025-06-18T10:00:00.001Z",
        dir: "s2c",
        msg: { jsonrpc: "2.0", id: 0, result: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "s", version: "1" } } },
      },
      { ts: "2025-06-18T10:00:00.002Z", dir: "c2s", msg: { jsonrpc: "2.0", method: "notifications/initialized" } },
      { ts: "2025-06-18T10:00:00.003Z", dir: "c2s", msg: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "shot", arguments: {} } } },
      { ts: "2025-06-18T10:00:00.004Z", dir: "s2c", msg: { jsonrpc: "2.0", id: 1, result: { content: [{ type: "image", data, mimeType: "image/png" }] } } },
    ]
      .map((r) => JSON.stringify(r))
      .join("\n");

  it("a payload with a character above U+00FF whose low byte is a base64 character still fails the byte format", async () => {
    const good = b64(BIG_LINE_BYTES, prng(8));
    const run = async (data: string, jobs: number) =>
      (await validateFiles(["-"], { inputFormat: "capture", jobs, stdin: Readable.from([Buffer.from(capture(data))]) })).findings.map((f) => `${f.rule} ${f.pointer ?? ""}`);
    for (const jobs of [1, 2]) {
      expect(await run(good, jobs)).toEqual([]);
      for (const c of ["Œ", "ł", "é"]) {
        // Œ is U+0152, read by Node's base64 decoder as its low byte "R"; ł U+0142 as "B".
        const bad = `${good.slice(0, 70)}${c}${good.slice(71)}`;
        expect(await run(bad, jobs), `${c} jobs ${jobs}`).toContain("schema/result /result/content/0/data");
      }
    }
  });
});
