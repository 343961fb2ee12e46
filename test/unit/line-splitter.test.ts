import { describe, expect, it } from "vitest";
import { stdioLineSplitter, type LineEvent } from "../../src/framing/line-splitter.js";

function split(chunks: Array<string | Buffer>, max?: number): LineEvent[] {
  const events: LineEvent[] = [];
  const splitter = stdioLineSplitter((e) => events.push(e), max);
  for (const c of chunks) splitter.push(typeof c === "string" ? Buffer.from(c) : c);
  splitter.end();
  return events;
}
const lines = (events: LineEvent[]) => events.map((e) => (e.kind === "line" ? e.line.toString() : `<oversized ${e.bytes}>`));

describe("LineSplitter", () => {
  it("joins a message split across chunks", () => {
    expect(lines(split(['{"a":', '1,"b"', ":2}\n"]))).toEqual(['{"a":1,"b":2}']);
  });

  it("splits several messages in one chunk", () => {
    expect(lines(split(["one\ntwo\nthree\n"]))).toEqual(["one", "two", "three"]);
  });

  it("strips CRLF endings", () => {
    expect(lines(split(["a\r\nb\r\n"]))).toEqual(["a", "b"]);
  });

  it("skips empty and blank lines", () => {
    expect(lines(split(["\n\n  \n\t\r\nx\n\r\n"]))).toEqual(["x"]);
  });

  it("emits a final line without a terminator at end of input", () => {
    expect(lines(split(["a\nb"]))).toEqual(["a", "b"]);
  });

  it("keeps a multi-byte UTF-8 character split across chunks intact", () => {
    const bytes = Buffer.from("€🙂\n");
    expect(lines(split([bytes.subarray(0, 2), bytes.subarray(2, 5), bytes.subarray(5)]))).toEqual(["€🙂"]);
  });

  it("reports an oversized line with its head and length, then goes on", () => {
    const long = "x".repeat(50);
    const events = split([`{"id":7,"p":"${long}`, `${long}"}\nok\n`], 40);
    expect(events[0]).toMatchObject({ kind: "oversized", complete: true, bytes: 13 + 100 + 2 });
    expect(events[0]!.kind === "oversized" && events[0]!.head.toString().startsWith('{"id":7,"p":"xxx')).toBe(true);
    expect(lines(events.slice(1))).toEqual(["ok"]);
  });

  it("does not count the CR of a CRLF against the cap; one byte more is still oversized", () => {
    const full = "x".repeat(40);
    expect(lines(split([full + "\r\n", "ok\r\n"], 40))).toEqual([full, "ok"]);
    expect(lines(split([full, "\r", "\n"], 40))).toEqual([full]);
    expect(lines(split([full + "y\n", full + "y\r\n", "ok\n"], 40))).toEqual(["<oversized 41>", "<oversized 41>", "ok"]);
  });

  it("handles a line of many chunks in linear time (16 MiB in 64 KiB chunks)", () => {
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const events: LineEvent[] = [];
    const splitter = stdioLineSplitter((e) => events.push(e));
    for (let i = 0; i < 256; i++) splitter.push(chunk);
    splitter.push(Buffer.from("\n"));
    expect(events).toHaveLength(1);
    expect(events[0]!.kind === "line" && events[0]!.line.length).toBe(16 * 1024 * 1024);
  });
});
