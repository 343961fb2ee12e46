/**
 * Cancellation of one call: {@link CancelSignal}, the part of the DOM `AbortSignal` that senders
 * and method handlers use (an `AbortSignal` is one), and {@link Cancellation}, the bridge's own
 * signal of one request: the same observable behaviour as an `AbortController`'s signal for
 * that part, without an `EventTarget` per request (docs/quic-performance.md § 7).
 */

/** What a cancellable call reads of its signal; an `AbortSignal` satisfies it. */
export interface CancelSignal {
  /** True once cancelled. */
  readonly aborted: boolean;
  /** Why it was cancelled (an `AbortError` `DOMException` when no reason was given); undefined before. */
  readonly reason: unknown;
  /** `listener` runs once when the signal is cancelled (never when it already was). */
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/**
 * A {@link CancelSignal} and its `abort`, for one request. Listeners run once, in the order they
 * were added, when {@link abort} is first called; one added twice runs once. A listener that
 * throws does not stop the others: its error is rethrown on a later tick, as an `EventTarget`
 * reports it (an uncaught exception).
 */
export class Cancellation implements CancelSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | undefined = undefined;

  addEventListener(_type: "abort", listener: () => void): void {
    if (this.aborted) return;
    const listeners = (this.listeners ??= []);
    if (!listeners.includes(listener)) listeners.push(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const listeners = this.listeners;
    if (listeners === undefined) return;
    const i = listeners.indexOf(listener);
    if (i >= 0) listeners.splice(i, 1);
  }

  /** Cancels (once; later calls do nothing): sets {@link reason} (default an `AbortError`) and runs the listeners. */
  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason === undefined ? new DOMException("This operation was aborted", "AbortError") : reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners === undefined) return;
    for (const listener of listeners) {
      try {
        listener();
      } catch (err) {
        process.nextTick(() => {
          throw err;
        });
      }
    }
  }
}
