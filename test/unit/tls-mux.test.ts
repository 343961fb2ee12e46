/**
 * The TLS transport's multiplex framing (src/tls/mux.ts): cancellation and per-request error
 * messages, frame writing with backpressure, and matching responses to requests by request_id.
 */
import { Writable } from "node:stream";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { PluginRequestSchema, PluginResponseSchema, type PluginResponse } from "../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { FrameDecoder, FrameTooLargeError, MAX_FRAME_BYTES } from "../../src/framing/frame.js";
import { cancelRequest, cancelTarget, FrameWriter, RequestErrorCode, requestErrorOf, requestErrorResponse, ResponseRouter } from "../../src/tls/mux.js";

function toolResponse(requestId: string, text: string): PluginResponse {
  return create(PluginResponseSchema, {
    requestId,
    response: { case: "toolCall", value: { success: true, result: { text } } },
  });
}

function bytesOf(n: number, fill: number): Uint8Array {
  return new Uint8Array(n).fill(fill);
}

/** A Writable that records every byte and completes each write only when `release()` is called. */
class SlowSink extends Writable {
  readonly chunks: Buffer[] = [];
  private pending: Array<() => void> = [];
  constructor(highWaterMark: number) {
    super({ highWaterMark });
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    this.chunks.push(Buffer.from(chunk));
    this.pending.push(() => cb());
  }
  /** Completes every write accepted so far. */
  release(): void {
    const p = this.pending;
    this.pending = [];
    for (const f of p) f();
  }
  get bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
  /** Completes writes until the writer has nothing queued and the stream nothing buffered. */
  async drainAll(writer: FrameWriter): Promise<void> {
    for (let i = 0; i < 100 && (writer.queued > 0 || this.writableLength > 0); i++) {
      this.release();
      await new Promise((r) => setImmediate(r));
    }
  }
}

/** A Writable that accepts everything at once. */
class FastSink extends Writable {
  readonly chunks: Buffer[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    this.chunks.push(Buffer.from(chunk));
    cb();
  }
  get bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

function decodeAll(bytes: Uint8Array): Uint8Array[] {
  const d = new FrameDecoder();
  const out = d.push(bytes);
  d.end();
  return out;
}

describe("cancellation and per-request error messages", () => {
  it("a cancel names the request in request_id and stream_cancel.stream_id and survives the wire", () => {
    const wire = toBinary(PluginRequestSchema, cancelRequest("0190-abc"));
    const back = fromBinary(PluginRequestSchema, wire);
    expect(back.requestId).toBe("0190-abc");
    expect(back.request.case).toBe("streamCancel");
    expect(cancelTarget(back)).toBe("0190-abc");
  });

  it("cancelTarget falls back to request_id, and is undefined for other kinds", () => {
    const bare = create(PluginRequestSchema, { requestId: "r1", request: { case: "streamCancel", value: {} } });
    expect(cancelTarget(bare)).toBe("r1");
    const health = create(PluginRequestSchema, { requestId: "r2", request: { case: "health", value: {} } });
    expect(cancelTarget(health)).toBeUndefined();
  });

  it("a per-request error is a failed stream_end carrying code and message", () => {
    const r = fromBinary(PluginResponseSchema, toBinary(PluginResponseSchema, requestErrorResponse("r3", RequestErrorCode.UNSUPPORTED, "no storage here")));
    expect(r.requestId).toBe("r3");
    expect(r.response.case).toBe("streamEnd");
    expect(requestErrorOf(r)).toEqual({ code: "unsupported_request", message: "no storage here" });
  });

  it("other responses are not errors", () => {
    expect(requestErrorOf(toolResponse("r", "x"))).toBeUndefined();
    const ok = create(PluginResponseSchema, { requestId: "r", response: { case: "streamEnd", value: { success: true } } });
    expect(requestErrorOf(ok)).toBeUndefined();
  });
});

describe("FrameWriter", () => {
  it("writes each payload as [u32 BE length][payload], in order", () => {
    const sink = new FastSink();
    const w = new FrameWriter(sink);
    const payloads = [bytesOf(0, 0), bytesOf(3, 1), bytesOf(70_000, 2), bytesOf(5, 3)];
    for (const p of payloads) w.enqueue(p);
    expect(w.queued).toBe(0);
    const bytes = sink.bytes;
    expect(bytes.readUInt32BE(0)).toBe(0);
    expect(bytes.readUInt32BE(4)).toBe(3);
    expect(decodeAll(bytes).map((p) => Buffer.from(p))).toEqual(payloads.map((p) => Buffer.from(p)));
  });

  it("holds frames back while the stream needs draining and resumes on drain, never splitting a frame", async () => {
    const sink = new SlowSink(1024);
    const w = new FrameWriter(sink);
    const written: number[] = [];
    const payloads = Array.from({ length: 6 }, (_, i) => bytesOf(600 + i, i + 1));
    payloads.forEach((p, i) => w.enqueue(p, { onWritten: () => written.push(i) }));
    // 604 bytes < 1024 fit; the second frame takes the buffer past the mark; the rest wait.
    expect(written).toEqual([0, 1]);
    expect(w.queued).toBe(4);
    expect(w.queuedBytes).toBe(payloads.slice(2).reduce((n, p) => n + 4 + p.byteLength, 0));
    await sink.drainAll(w);
    expect(w.queued).toBe(0);
    expect(written).toEqual([0, 1, 2, 3, 4, 5]);
    expect(decodeAll(sink.bytes).map((p) => Buffer.from(p))).toEqual(payloads.map((p) => Buffer.from(p)));
  });

  it("withdraw removes a waiting frame but not a written one; urgent frames jump the queue", async () => {
    const sink = new SlowSink(16);
    const w = new FrameWriter(sink);
    const first = w.enqueue(bytesOf(32, 1)); // written at once, then the sink needs draining
    const second = w.enqueue(bytesOf(8, 2));
    const third = w.enqueue(bytesOf(8, 3));
    w.enqueue(bytesOf(4, 9), { urgent: true });
    expect(first.written).toBe(true);
    expect(first.withdraw()).toBe(false);
    expect(second.withdraw()).toBe(true);
    expect(second.withdraw()).toBe(false);
    await sink.drainAll(w);
    expect(third.written).toBe(true);
    const frames = decodeAll(sink.bytes);
    expect(frames.map((f) => f[0])).toEqual([1, 9, 3]);
  });

  it("refuses a payload over 16 MiB without queueing anything", () => {
    const sink = new FastSink();
    const w = new FrameWriter(sink);
    expect(() => w.enqueue(new Uint8Array(MAX_FRAME_BYTES + 1))).toThrow(FrameTooLargeError);
    expect(w.queued).toBe(0);
    expect(sink.chunks).toHaveLength(0);
  });

  it("close drops waiting frames and later ones", async () => {
    const sink = new SlowSink(8);
    const w = new FrameWriter(sink);
    w.enqueue(bytesOf(16, 1));
    const waiting = w.enqueue(bytesOf(16, 2));
    w.close();
    expect(w.queued).toBe(0);
    expect(waiting.withdraw()).toBe(false);
    const late = w.enqueue(bytesOf(4, 3));
    expect(late.written).toBe(false);
    await sink.drainAll(w);
    expect(decodeAll(sink.bytes)).toHaveLength(1);
  });
});

describe("ResponseRouter: matching responses to requests by request_id", () => {
  it("routes responses arriving in any order, across arbitrary chunk boundaries, to their requests", () => {
    const router = new ResponseRouter<{ n: number }>();
    const ids = Array.from({ length: 50 }, (_, i) => `id-${i}`);
    ids.forEach((id, n) => expect(router.add(id, { n })).toBe(true));
    // The server answers in reverse order on one byte stream.
    const sink = new FastSink();
    const w = new FrameWriter(sink);
    for (const id of [...ids].reverse()) w.enqueue(toBinary(PluginResponseSchema, toolResponse(id, `answer ${id}`)));
    const stream = sink.bytes;
    const decoder = new FrameDecoder();
    const matched: Array<{ n: number; text: unknown; id: string }> = [];
    for (let pos = 0; pos < stream.length;) {
      const size = 1 + ((pos * 7919) % 37); // irregular chunk sizes, some splitting headers
      for (const payload of decoder.push(stream.subarray(pos, pos + size))) {
        const r = router.route(payload);
        expect(r.kind).toBe("matched");
        if (r.kind !== "matched") continue;
        const v = r.response.response.case === "toolCall" ? r.response.response.value.result?.text : undefined;
        matched.push({ n: r.entry.n, text: v, id: r.response.requestId });
      }
      pos += size;
    }
    expect(matched).toHaveLength(50);
    for (const m of matched) {
      expect(m.id).toBe(ids[m.n]);
      expect(m.text).toBe(`answer ${ids[m.n]}`);
    }
    expect(router.size).toBe(0);
  });

  it("reports a response for no pending request as unknown (a late answer after cancel)", () => {
    const router = new ResponseRouter<string>();
    router.add("a", "A");
    expect(router.delete("a", "not-A")).toBe(false);
    expect(router.delete("a", "A")).toBe(true);
    const r = router.route(toBinary(PluginResponseSchema, toolResponse("a", "late")));
    expect(r.kind).toBe("unknown");
  });

  it("refuses empty and duplicate ids", () => {
    const router = new ResponseRouter<number>();
    expect(router.add("", 1)).toBe(false);
    expect(router.add("x", 1)).toBe(true);
    expect(router.add("x", 2)).toBe(false);
    expect(router.has("x")).toBe(true);
    expect(router.drain()).toEqual([1]);
    expect(router.size).toBe(0);
  });

  it("reports undecodable bytes", () => {
    const router = new ResponseRouter<number>();
    const r = router.route(Uint8Array.of(0xff, 0xff, 0xff));
    expect(r.kind).toBe("undecodable");
  });
});
