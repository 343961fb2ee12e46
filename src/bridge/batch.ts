/**
 * JSON-RPC 2.0 batches (§6) for the session (./session.ts): where one request's response goes
 * ({@link Responder}), and the collector that answers a batch with one array once every request
 * in it has been answered or dropped.
 */
import type { JSONRPCError, JSONRPCResponse, OutboundBatch } from "../jsonrpc/message.js";

/** Where one request's response goes: straight to the sink, or into a batch answer. */
export interface Responder {
  send(message: JSONRPCResponse | JSONRPCError): void;
  /** The request ends without a response (cancelled). */
  drop(): void;
}

/**
 * Collects the responses of one batch and emits them as one array when every request element
 * has been answered or dropped and the batch was fully read.
 */
export class BatchCollector {
  private readonly answers: OutboundBatch = [];
  private pending = 0;
  private sealed = false;
  private emitted = false;

  constructor(private readonly emit: (answer: OutboundBatch) => void) {}

  slot(): Responder {
    this.pending++;
    let used = false;
    return {
      send: (message) => {
        if (used) return;
        used = true;
        this.answers.push(message);
        this.settle();
      },
      drop: () => {
        if (used) return;
        used = true;
        this.settle();
      },
    };
  }

  seal(): void {
    this.sealed = true;
    this.maybeEmit();
  }

  private settle(): void {
    this.pending--;
    this.maybeEmit();
  }

  private maybeEmit(): void {
    if (!this.sealed || this.pending > 0 || this.emitted) return;
    this.emitted = true;
    if (this.answers.length > 0) this.emit(this.answers);
  }
}
