/**
 * MessageWriter (src/jsonrpc/message-writer.ts): the lines enqueued in one event-loop turn leave
 * in one `write`, in order; a large line is written on its own; a full destination makes the
 * next lines wait for `drain`; `queuedBytes` and `flush` follow what reached the destination.
 */
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { BATCH_BYTES, MessageWriter } from "../../src/jsonrpc/message-writer.js";

/** A destination that records each `write` call's chunk; `full` makes every write report a full buffer. */
class RecordingOut extends Writable {
  readonly chunks: string[] = [];
  constructor(highWaterMark = 16 * 1024) {
    super({ highWaterMark, decodeStrings: false });
  }
  override _write(chunk: string | Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.chunks.push(chunk.toString());
    callback();
  }
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const lines = (chunks: string[]): unknown[] =>
  chunks
    .join("")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as unknown);

describe("MessageWriter", () => {
  it("writes the messages of one turn in one write, in order, and nothing before the turn ends", async () => {
    const out = new RecordingOut();
    const writer = new MessageWriter(out);
    for (let id = 1; id <= 64; id++) writer.write({ jsonrpc: "2.0", id, result: {} });
    writer.write({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "after 64" } });
    expect(out.chunks).toEqual([]);
    expect(writer.queuedBytes).toBeGreaterThan(0);
    await writer.flush();
    expect(out.chunks).toHaveLength(1);
    const written = lines(out.chunks) as Array<{ id?: number; method?: string }>;
    expect(written.map((m) => m.id ?? m.method)).toEqual([...Array.from({ length: 64 }, (_, i) => i + 1), "notifications/message"]);
    expect(writer.queuedBytes).toBe(0);
  });

  it("writes each turn's messages in a write of its own", async () => {
    const out = new RecordingOut();
    const writer = new MessageWriter(out);
    writer.write({ jsonrpc: "2.0", id: 1, result: {} });
    writer.write({ jsonrpc: "2.0", id: 2, result: {} });
    await turn();
    writer.write({ jsonrpc: "2.0", id: 3, result: {} });
    await writer.flush();
    expect(out.chunks).toEqual(['{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","id":2,"result":{}}\n', '{"jsonrpc":"2.0","id":3,"result":{}}\n']);
  });

  it(`joins at most ${BATCH_BYTES} bytes per write and writes a longer line and its terminator on their own`, async () => {
    const out = new RecordingOut(64 * 1024 * 1024);
    const writer = new MessageWriter(out);
    const small = (id: number) => ({ jsonrpc: "2.0", id, result: { text: "s".repeat(1000) } });
    for (let id = 1; id <= 100; id++) writer.write(small(id));
    writer.write({ jsonrpc: "2.0", id: 101, result: { text: "b".repeat(BATCH_BYTES) } });
    writer.write(small(102));
    await writer.flush();
    for (const chunk of out.chunks) expect(chunk.length <= BATCH_BYTES || !chunk.includes("\n")).toBe(true);
    const big = out.chunks.findIndex((c) => c.includes('"id":101'));
    expect(out.chunks[big]!.endsWith("}")).toBe(true);
    expect(out.chunks[big + 1]).toBe("\n");
    expect(out.chunks.length).toBeLessThan(10);
    expect((lines(out.chunks) as Array<{ id: number }>).map((m) => m.id)).toEqual(Array.from({ length: 102 }, (_, i) => i + 1));
  });

  it("waits for drain once the destination is full, keeping the order and counting what waits", async () => {
    let release: (() => void) | undefined;
    const chunks: string[] = [];
    // A destination whose first write does not complete until released: its buffer is full.
    const out = new Writable({
      highWaterMark: 1,
      decodeStrings: false,
      write(chunk: string, _encoding, callback) {
        chunks.push(chunk);
        if (chunks.length === 1) release = () => callback();
        else callback();
      },
    });
    const writer = new MessageWriter(out);
    writer.write({ jsonrpc: "2.0", id: 1, result: {} });
    await turn();
    writer.write({ jsonrpc: "2.0", id: 2, result: {} });
    writer.write({ jsonrpc: "2.0", id: 3, result: {} });
    await turn();
    expect(chunks).toHaveLength(1);
    const waiting = Buffer.byteLength('{"jsonrpc":"2.0","id":2,"result":{}}\n') * 2;
    expect(writer.queuedBytes).toBe(Buffer.byteLength('{"jsonrpc":"2.0","id":1,"result":{}}\n') + waiting);
    let flushed = false;
    void writer.flush().then(() => (flushed = true));
    await turn();
    expect(flushed).toBe(false);
    release!();
    await writer.flush();
    expect((lines(chunks) as Array<{ id: number }>).map((m) => m.id)).toEqual([1, 2, 3]);
    expect(chunks).toHaveLength(2);
    expect(writer.queuedBytes).toBe(0);
  });
});
