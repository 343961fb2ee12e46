/**
 * {@link FramedStream} (src/quic/framed-stream.ts) over a fake engine stream: frames out of raw
 * chunks, the 16 MiB cap stops reading without buffering the body, a FIN inside a frame is
 * truncation, and a small frame goes out with its FIN in one write. The same adapter over the
 * real engine: test/unit/quic-engine.test.ts.
 */
import { describe, expect, it } from "vitest";
import { encodeFrame, encodeFrameHeader, FRAME_COALESCE_BYTES, FrameTooLargeError, FrameTruncatedError } from "../../src/framing/frame.js";
import type { QuicStream } from "../../src/quic/engine/index.js";
import { FramedStream } from "../../src/quic/framed-stream.js";

/** The part of a {@link QuicStream} the adapter uses, recording what it is asked to do. */
class FakeStream {
  onData: ((chunk: Uint8Array) => void) | undefined;
  onReadEnd: ((error?: Error) => void) | undefined;
  onWriteError: ((error: Error) => void) | undefined;
  readFinished = false;
  writeFinished = false;
  abandoned = 0;
  writes: Array<{ bytes: Uint8Array; fin: boolean }> = [];
  write(bytes: Uint8Array, fin: boolean): void {
    this.writes.push({ bytes, fin });
  }
  abandonRead(): void {
    this.abandoned++;
    this.readFinished = true;
  }
  /** Delivers `bytes` as the engine does: a view into a shared buffer, overwritten afterwards. */
  deliver(bytes: Uint8Array): void {
    const shared = new Uint8Array(bytes.byteLength + 8);
    shared.set(bytes, 8);
    this.onData!(shared.subarray(8));
    shared.fill(0xee);
  }
}

function framed(): { fake: FakeStream; s: FramedStream; frames: Uint8Array[]; ends: Array<Error | undefined> } {
  const fake = new FakeStream();
  const s = new FramedStream(fake as unknown as QuicStream);
  const frames: Uint8Array[] = [];
  const ends: Array<Error | undefined> = [];
  s.onFrame = (p) => frames.push(p);
  s.onReadEnd = (e) => ends.push(e);
  return { fake, s, frames, ends };
}

describe("FramedStream", () => {
  it("cuts chunks into frames (several per chunk, one across chunks) and copies them out of the shared buffer", () => {
    const { fake, s, frames, ends } = framed();
    const a = encodeFrame(new Uint8Array([1, 2]));
    const b = encodeFrame(new Uint8Array([3, 4, 5]));
    const c = encodeFrame(new Uint8Array(100).fill(9));
    fake.deliver(new Uint8Array([...a, ...b, ...c.subarray(0, 50)]));
    fake.deliver(c.subarray(50));
    fake.onReadEnd!(undefined);
    expect(frames).toEqual([new Uint8Array([1, 2]), new Uint8Array([3, 4, 5]), new Uint8Array(100).fill(9)]);
    expect(s.framesRead).toBe(3);
    expect(ends).toEqual([undefined]);
  });

  it("a header over maxFrameBytes ends reading at once (abandonRead) with FrameTooLargeError", () => {
    const { fake, s, frames, ends } = framed();
    s.maxFrameBytes = 10;
    fake.deliver(new Uint8Array([...encodeFrameHeader(11), 1, 2, 3]));
    expect(fake.abandoned).toBe(1);
    expect(frames).toEqual([]);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toBeInstanceOf(FrameTooLargeError);
    expect((ends[0] as FrameTooLargeError).length).toBe(11);
  });

  it("a FIN inside a frame is FrameTruncatedError; the stream's own errors pass through", () => {
    const t = framed();
    t.fake.deliver(encodeFrame(new Uint8Array(10)).subarray(0, 7));
    t.fake.onReadEnd!(undefined);
    expect(t.ends).toHaveLength(1);
    expect(t.ends[0]).toBeInstanceOf(FrameTruncatedError);
    const r = framed();
    const reset = new Error("peer reset");
    r.fake.onReadEnd!(reset);
    expect(r.ends).toEqual([reset]);
    const stopped = new Error("peer stopped");
    const writeErrors: Error[] = [];
    r.s.onWriteError = (e) => writeErrors.push(e);
    r.fake.onWriteError!(stopped);
    expect(writeErrors).toEqual([stopped]);
  });

  it("stops handing out frames once a callback ended the read side", () => {
    const { fake, s, frames } = framed();
    s.onFrame = (p) => {
      frames.push(p);
      fake.readFinished = true; // e.g. the callback reset the stream
    };
    fake.deliver(new Uint8Array([...encodeFrame(new Uint8Array([1])), ...encodeFrame(new Uint8Array([2]))]));
    expect(frames).toEqual([new Uint8Array([1])]);
  });

  it("writes a small frame and its FIN in one write, a large one as header + payload (no copy)", () => {
    const { fake, s } = framed();
    const small = new Uint8Array(FRAME_COALESCE_BYTES).fill(1);
    s.writeFrame(small, true);
    expect(fake.writes).toHaveLength(1);
    expect(fake.writes[0]!.fin).toBe(true);
    expect(fake.writes[0]!.bytes).toEqual(encodeFrame(small));
    const large = new Uint8Array(FRAME_COALESCE_BYTES + 1);
    s.writeFrame(large, true);
    expect(fake.writes.slice(1).map((w) => [w.bytes.byteLength, w.fin])).toEqual([
      [4, false],
      [FRAME_COALESCE_BYTES + 1, true],
    ]);
    expect(fake.writes[2]!.bytes).toBe(large);
    expect(() => s.writeFrame(new Uint8Array(16 * 1024 * 1024 + 1), true)).toThrow(FrameTooLargeError);
    expect(fake.writes).toHaveLength(3);
  });
});
