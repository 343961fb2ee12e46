/**
 * Writes JSON-RPC messages as newline-delimited JSON to a byte stream (MCP stdio transport).
 *
 * One message = one {@link serialize} + `\n`; lines never interleave and leave in the order they
 * were enqueued. Lines enqueued during one event-loop turn (its synchronous work and the promise
 * jobs that follow, e.g. every response completed by one batch of QUIC reads) are written
 * together at the end of it (`process.nextTick`), as one `write` of up to
 * {@link BATCH_BYTES}: one system call for them all. A line of {@link BATCH_BYTES} or more is
 * written on its own (the text, then the terminator: no concatenated copy of a large line).
 *
 * Backpressure-aware: when the destination's buffer is full, further messages wait in order for
 * `drain` instead of growing Node's internal buffer without bound, and
 * {@link MessageWriter.queuedBytes} says how much is waiting (the stdio bridge stops reading
 * input past a budget).
 */
import type { Writable } from "node:stream";
import { serialize } from "./serialize.js";

/** Lines shorter than this (UTF-8 bytes, with the terminator) are joined into one `write` of at most this size. */
export const BATCH_BYTES = 64 * 1024;

export class MessageWriter {
  private queue: Array<{ text: string; bytes: number }> = [];
  private blocked = false;
  private closed = false;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];
  private pendingWrites = 0;
  private bytes = 0;

  /** @param out destination stream (stdout in `serve`). */
  constructor(private readonly out: Writable) {
    out.on("drain", () => {
      this.blocked = false;
      this.pump();
    });
    out.on("error", () => {
      // EPIPE and friends: the reader went away. Nothing more can be delivered.
      this.closed = true;
      this.queue = [];
      this.pendingWrites = 0;
      this.bytes = 0;
      this.notifyIdle();
      this.onProgress?.();
    });
  }

  /** Called whenever queued bytes were handed to the OS (or dropped because the stream failed). */
  onProgress: (() => void) | undefined;

  /**
   * UTF-8 bytes of the lines written and not yet handed to the OS: those waiting here plus those
   * in the stream's own buffer.
   */
  get queuedBytes(): number {
    return this.bytes;
  }

  /**
   * Serializes and enqueues one message; it is written at the end of the current turn. `text`
   * may be given when the caller already serialized it (e.g. to measure its size); it must be
   * the JSON of `message` with no newline.
   */
  write(message: unknown, text?: string): void {
    if (this.closed) return;
    const line = text ?? serialize(message);
    const bytes = Buffer.byteLength(line) + 1;
    this.bytes += bytes;
    this.queue.push({ text: line, bytes });
    if (this.scheduled) return;
    this.scheduled = true;
    process.nextTick(this.endOfTurn);
  }

  /** Resolves once every enqueued message has been handed to the OS (or the stream failed). */
  flush(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private isIdle(): boolean {
    return this.closed || (this.queue.length === 0 && this.pendingWrites === 0);
  }

  private readonly endOfTurn = (): void => {
    this.scheduled = false;
    this.pump();
  };

  private pump(): void {
    const queue = this.queue;
    while (!this.blocked && !this.closed && queue.length > 0) {
      const first = queue.shift()!;
      let text = first.text;
      let bytes = first.bytes;
      if (bytes >= BATCH_BYTES) {
        this.out.write(text);
        text = "\n";
      } else {
        text += "\n";
        while (queue.length > 0 && bytes + queue[0]!.bytes <= BATCH_BYTES) {
          const next = queue.shift()!;
          text += next.text + "\n";
          bytes += next.bytes;
        }
      }
      this.pendingWrites++;
      const ok = this.out.write(text, () => {
        if (this.closed) return;
        this.pendingWrites = Math.max(0, this.pendingWrites - 1);
        this.bytes -= bytes;
        this.notifyIdle();
        this.onProgress?.();
      });
      if (!ok) this.blocked = true;
    }
  }

  private notifyIdle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}
