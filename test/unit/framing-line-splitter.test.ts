import { describe, expect, it } from "vitest";
import { LineSplitter, type LineSink } from "../../src/framing/line-splitter.js";

type Seen = Array<[number, string] | [number, "oversized", number, string, boolean]>;

/** Splits `text` in chunks of `size` bytes with the core splitter; returns what its sink saw. */
function run(text: string, size: number, options: ConstructorParameters<typeof LineSplitter>[1]): { seen: Seen; lineNo: number } {
  const seen: Seen = [];
  const sink: LineSink = {
    line: (bytes, start, end, no) => void seen.push([no, bytes.toString("utf8", start, end)]),
    oversized: (no, bytes, head, complete) => void seen.push([no, "oversized", bytes, head.toString(), complete]),
  };
  const s = new LineSplitter(sink, options);
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) s.push(bytes.subarray(i, i + size));
  s.end();
  return { seen, lineNo: s.lineNo };
}

describe("LineSplitter (framing core)", () => {
  it("numbers every line, empty and oversized ones included, whatever the chunking", () => {
    const text = `a\r\n\n${"z".repeat(20)}\r\nb\n${"q".repeat(12)}`;
    for (const size of [1, 3, 8, 1000]) {
      const { seen, lineNo } = run(text, size, { maxLineBytes: 10, headBytes: 4 });
      expect(seen).toEqual([
        [1, "a"],
        [2, ""],
        [3, "oversized", 20, "zzzz", true],
        [4, "b"],
        [5, "oversized", 12, "qqqq", false],
      ]);
      expect(lineNo).toBe(5);
    }
  });

  it("counts a trailing CR against the cap only with countCr", () => {
    const text = `${"x".repeat(10)}\r\nok\n`;
    for (const size of [1, 4, 1000]) {
      expect(run(text, size, { maxLineBytes: 10 }).seen).toEqual([
        [1, "x".repeat(10)],
        [2, "ok"],
      ]);
      expect(run(text, size, { maxLineBytes: 10, countCr: true }).seen).toEqual([
        [1, "oversized", 11, "", true],
        [2, "ok"],
      ]);
    }
  });

  it("drops a BOM only at the very start, even cut across chunks, and only with skipBom", () => {
    const text = "\ufeffa\n\ufeffb\n";
    for (const size of [1, 2, 1000]) {
      expect(run(text, size, { maxLineBytes: 100, skipBom: true }).seen).toEqual([
        [1, "a"],
        [2, "\ufeffb"],
      ]);
      expect(run(text, size, { maxLineBytes: 100 }).seen[0]).toEqual([1, "\ufeffa"]);
    }
    // Input that ends inside what could have been a BOM is data.
    const partial = Buffer.from([0xef, 0xbb]);
    const lines: number[][] = [];
    const s = new LineSplitter({ line: (b, st, en) => void lines.push([...b.subarray(st, en)]), oversized: () => {} }, { maxLineBytes: 100, skipBom: true });
    s.push(partial);
    s.end();
    expect(lines).toEqual([[0xef, 0xbb]]);
  });
});
