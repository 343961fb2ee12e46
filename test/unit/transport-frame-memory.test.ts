// Frames in pooled memory (src/framing/frame.ts allocFrameBytes): small frames and the copies
// FramedStream hands out share Node's Buffer pool, so each one must be read and written through
// its own byteOffset, and must not change when the pool's next slices are written.
import { describe, expect, it } from "vitest";
import { allocFrameBytes, encodeFrame, FrameDecoder } from "../../src/framing/frame.js";
import type { QuicStream } from "../../src/quic/engine/index.js";
import { FramedStream } from "../../src/quic/framed-stream.js";

const bytes = (n: number, seed: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

describe("frames in pooled memory", () => {
  it("allocFrameBytes gives plain Uint8Arrays of the asked length, small ones inside a shared pool", () => {
    const a = allocFrameBytes(100);
    const b = allocFrameBytes(100);
    expect(a.constructor).toBe(Uint8Array);
    expect([a.byteLength, b.byteLength]).toEqual([100, 100]);
    expect(a.buffer.byteLength).toBeGreaterThan(100);
    a.fill(1);
    b.fill(2);
    expect(a.every((x) => x === 1)).toBe(true);
    expect(allocFrameBytes(64 * 1024).byteLength).toBe(64 * 1024);
  });

  it("encodeFrame writes the length prefix at the frame's own offset in the pool", () => {
    const payloads = [bytes(258, 1), bytes(1, 2), bytes(0, 3), bytes(0x0304, 4)];
    const frames = payloads.map((p) => encodeFrame(p));
    expect(frames.some((f) => f.byteOffset > 0)).toBe(true);
    expect(Array.from(frames[0]!.subarray(0, 4))).toEqual([0, 0, 1, 2]);
    expect(Array.from(frames[3]!.subarray(0, 4))).toEqual([0, 0, 3, 4]);
    const decoder = new FrameDecoder();
    const out = frames.flatMap((f) => decoder.push(f));
    expect(out).toEqual(payloads);
  });

  it("FramedStream's copies keep their bytes when the shared receive buffer and the pool are reused", () => {
    const stream = { onData: undefined, onReadEnd: undefined, onWriteError: undefined, readFinished: false } as unknown as QuicStream;
    const s = new FramedStream(stream);
    const got: Uint8Array[] = [];
    s.onFrame = (p) => got.push(p);
    const shared = new Uint8Array(4096);
    const sent = [bytes(120, 5), bytes(7, 6), bytes(300, 7)];
    for (const p of sent) {
      const f = encodeFrame(p);
      shared.set(f);
      stream.onData!(shared.subarray(0, f.byteLength));
      shared.fill(0xee);
      allocFrameBytes(512).fill(0xdd);
    }
    expect(got).toEqual(sent);
    expect(got.every((p) => p.buffer !== shared.buffer)).toBe(true);
  });

  it("a header split across chunks is read from its bytes", () => {
    const decoder = new FrameDecoder();
    const f = encodeFrame(bytes(0x0102, 8));
    expect(decoder.push(f.subarray(0, 1))).toEqual([]);
    expect(decoder.push(f.subarray(1, 3))).toEqual([]);
    const out = decoder.push(f.subarray(3));
    expect(out).toEqual([bytes(0x0102, 8)]);
  });
});
