/**
 * Writes JSON-RPC messages as newline-delimited JSON to a byte stream (MCP stdio transport).
 *
 * One message = one {@link serialize} + `\n`, written back to back (the text, then the
 * terminator: no concatenated copy of a large line) so lines never interleave. Backpressure-aware: when the destination's buffer is full, further messages wait
 * in order for `drain` instead of growing Node's internal buffer without bound, and
 * {@link MessageWriter.queuedBytes} says how much is waiting (the stdio bridge stops reading
 * input past a budget).
 */
import type { Writable } from "node:stream";
import { serialize } from "./serialize.js";

export class MessageWriter {
  private queue: Array<{ text: string; bytes: number }> = [];
  private blocked = false;
  private closed = false;
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
   * Serializes and enqueues one message. `text` may be given when the caller already
   * serialized it (e.g. to measure its size); it must be the JSON of `message` with no newline.
   */
  write(message: unknown, text?: string): void {
    if (this.closed) return;
    const line = text ?? serialize(message);
    const bytes = Buffer.byteLength(line) + 1;
    this.bytes += bytes;
    this.queue.push({ text: line, bytes });
    this.pump();
  }

  /** Resolves once every enqueued message has been handed to the OS (or the stream failed). */
  flush(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private isIdle(): boolean {
    return this.closed || (this.queue.length === 0 && this.pendingWrites === 0);
  }

  private pump(): void {
    while (!this.blocked && !this.closed && this.queue.length > 0) {
      const { text, bytes } = this.queue.shift()!;
      this.pendingWrites++;
      this.out.write(text);
      const ok = this.out.write("\n", () => {
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
