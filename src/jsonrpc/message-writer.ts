/**
 * Writes JSON-RPC messages as newline-delimited JSON to a byte stream (MCP stdio transport).
 *
 * One message = one `JSON.stringify` + `\n`, written with one `write()` call so lines never
 * interleave. Backpressure-aware: when the destination's buffer is full, further messages wait
 * in order for `drain` instead of growing Node's internal buffer without bound.
 */
import type { Writable } from "node:stream";

export class MessageWriter {
  private queue: string[] = [];
  private blocked = false;
  private closed = false;
  private idleWaiters: Array<() => void> = [];
  private pendingWrites = 0;

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
      this.notifyIdle();
    });
  }

  /**
   * Serializes and enqueues one message. `text` may be given when the caller already
   * serialized it (e.g. to measure its size); it must be the JSON of `message` with no newline.
   */
  write(message: unknown, text?: string): void {
    if (this.closed) return;
    this.queue.push((text ?? JSON.stringify(message)) + "\n");
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
      const line = this.queue.shift()!;
      this.pendingWrites++;
      const ok = this.out.write(line, () => {
        this.pendingWrites = Math.max(0, this.pendingWrites - 1);
        this.notifyIdle();
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
