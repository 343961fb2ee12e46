import { describe, expect, it } from "vitest";
import {
  encodeFrame,
  encodeFrameHeader,
  encodeFrameParts,
  FRAME_COALESCE_BYTES,
  FrameDecoder,
  FrameTooLargeError,
  FrameTruncatedError,
  MAX_FRAME_BYTES,
} from "../../src/framing/frame.js";

function bytes(n: number, seed = 1): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
}

function concat(parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

describe("encodeFrame", () => {
  it("prefixes the payload with its length as a big-endian u32", () => {
    const frame = encodeFrame(new Uint8Array([7, 8, 9]));
    expect([...frame]).toEqual([0, 0, 0, 3, 7, 8, 9]);
    const big = encodeFrameHeader(0x01020304, 0xffffffff);
    expect([...big]).toEqual([1, 2, 3, 4]);
  });

  it("accepts exactly 16 MiB and rejects one byte more with FrameTooLargeError", () => {
    expect(MAX_FRAME_BYTES).toBe(16 * 1024 * 1024);
    expect(() => encodeFrameHeader(MAX_FRAME_BYTES)).not.toThrow();
    expect(() => encodeFrame(new Uint8Array(MAX_FRAME_BYTES + 1))).toThrow(FrameTooLargeError);
    expect(() => encodeFrameParts(new Uint8Array(MAX_FRAME_BYTES + 1))).toThrow(FrameTooLargeError);
  });

  it("keeps large payloads as a separate, uncopied chunk", () => {
    const small = bytes(10);
    expect(encodeFrameParts(small)).toHaveLength(1);
    const large = bytes(FRAME_COALESCE_BYTES + 1);
    const parts = encodeFrameParts(large);
    expect(parts).toHaveLength(2);
    expect(parts[1]).toBe(large);
    expect(concat(parts)).toEqual(encodeFrame(large));
  });
});

describe("FrameDecoder", () => {
  it("round-trips a payload pushed as one chunk, returning a view of that chunk", () => {
    const payload = bytes(1000);
    const frame = encodeFrame(payload);
    const d = new FrameDecoder();
    const out = d.push(frame);
    expect(out).toHaveLength(1);
    expect(out[0]).toEqual(payload);
    expect(out[0]!.buffer).toBe(frame.buffer); // zero-copy
    expect(d.atBoundary).toBe(true);
    expect(() => d.end()).not.toThrow();
  });

  it("reassembles a frame split at every possible point, including inside the header", () => {
    const payload = bytes(37, 5);
    const frame = encodeFrame(payload);
    for (let cut = 1; cut < frame.length; cut++) {
      const d = new FrameDecoder();
      expect(d.push(frame.subarray(0, cut))).toEqual([]);
      expect(d.buffered).toBe(cut);
      const out = d.push(frame.subarray(cut));
      expect(out).toHaveLength(1);
      expect(out[0]).toEqual(payload);
    }
  });

  it("decodes byte-by-byte", () => {
    const payload = bytes(300, 9);
    const frame = encodeFrame(payload);
    const d = new FrameDecoder();
    const got: Uint8Array[] = [];
    for (const b of frame) got.push(...d.push(new Uint8Array([b])));
    expect(got).toHaveLength(1);
    expect(got[0]).toEqual(payload);
  });

  it("returns several frames from one chunk in order, including empty payloads", () => {
    const a = bytes(5, 1);
    const b = new Uint8Array(0);
    const c = bytes(70_000, 3);
    const d = new FrameDecoder();
    const chunk = concat([encodeFrame(a), encodeFrame(b), encodeFrame(c), encodeFrame(a).subarray(0, 6)]);
    const out = d.push(chunk);
    expect(out.map((x) => x.length)).toEqual([5, 0, 70_000]);
    expect(out[0]).toEqual(a);
    expect(out[2]).toEqual(c);
    expect(d.atBoundary).toBe(false);
    expect(d.push(encodeFrame(a).subarray(6))).toEqual([a]);
  });

  it("rejects a declared length over 16 MiB as soon as the header is complete", () => {
    const d = new FrameDecoder();
    const header = encodeFrameHeader(MAX_FRAME_BYTES + 1, Number.MAX_SAFE_INTEGER);
    expect(d.push(header.subarray(0, 3))).toEqual([]);
    let caught: unknown;
    try {
      d.push(header.subarray(3));
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(FrameTooLargeError);
    expect((caught as FrameTooLargeError).length).toBe(MAX_FRAME_BYTES + 1);
    expect(d.buffered).toBe(0); // nothing of the body was buffered
    // The decoder stays failed.
    expect(() => d.push(new Uint8Array([1]))).toThrow(FrameTooLargeError);
  });

  it("rejects 0xFFFFFFFF and honours a custom cap", () => {
    expect(() => new FrameDecoder().push(new Uint8Array([0xff, 0xff, 0xff, 0xff]))).toThrow(FrameTooLargeError);
    const d = new FrameDecoder(10);
    expect(d.push(encodeFrame(bytes(10)))).toHaveLength(1);
    expect(() => d.push(encodeFrame(bytes(11)))).toThrow(FrameTooLargeError);
  });

  it("accepts a frame of exactly 16 MiB", () => {
    const payload = new Uint8Array(MAX_FRAME_BYTES);
    payload[MAX_FRAME_BYTES - 1] = 42;
    const d = new FrameDecoder();
    const header = encodeFrameHeader(MAX_FRAME_BYTES);
    expect(d.push(header)).toEqual([]);
    const out = d.push(payload);
    expect(out).toHaveLength(1);
    expect(out[0]!.length).toBe(MAX_FRAME_BYTES);
    expect(out[0]![MAX_FRAME_BYTES - 1]).toBe(42);
  });

  it("reports a stream that ends inside a header or body", () => {
    const inHeader = new FrameDecoder();
    inHeader.push(new Uint8Array([0, 0]));
    expect(() => inHeader.end()).toThrow(FrameTruncatedError);

    const inBody = new FrameDecoder();
    inBody.push(encodeFrame(bytes(10)).subarray(0, 8));
    let caught: unknown;
    try {
      inBody.end();
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(FrameTruncatedError);
    expect((caught as FrameTruncatedError).received).toBe(8);
    expect((caught as FrameTruncatedError).expected).toBe(14);
  });
});

describe("readOneFrame (stream reader)", () => {
  function readerOf(chunks: Uint8Array[]): ReadableStreamDefaultReader<Uint8Array> {
    return new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of chunks) controller.enqueue(c);
        controller.close();
      },
    }).getReader();
  }

  it("resolves with the first frame and counts bytes after it in the same chunk", async () => {
    const { readOneFrame } = await import("../helpers/quic/library.js");
    const payload = bytes(20);
    const frame = encodeFrame(payload);
    const one = await readOneFrame(readerOf([frame.subarray(0, 2), frame.subarray(2, 9), frame.subarray(9)]));
    expect(one.payload).toEqual(payload);
    expect(one.extra).toBe(0);
    const two = await readOneFrame(readerOf([frame.subarray(0, 3), concat([frame.subarray(3), new Uint8Array(5)])]));
    expect(two.payload).toEqual(payload);
    expect(two.extra).toBe(5);
  });

  it("rejects an empty stream, a truncated frame and an oversized header", async () => {
    const { readOneFrame } = await import("../helpers/quic/library.js");
    const { FrameEmptyStreamError } = await import("../../src/framing/frame.js");
    await expect(readOneFrame(readerOf([]))).rejects.toBeInstanceOf(FrameEmptyStreamError);
    await expect(readOneFrame(readerOf([encodeFrame(bytes(9)).subarray(0, 7)]))).rejects.toBeInstanceOf(FrameTruncatedError);
    await expect(readOneFrame(readerOf([new Uint8Array([0xff, 0, 0, 0])]))).rejects.toBeInstanceOf(FrameTooLargeError);
  });
});
