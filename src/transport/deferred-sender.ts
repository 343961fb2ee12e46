/**
 * A {@link Sender} whose real sender does not exist yet: `serve` hands one to the bridge at once,
 * so that stdin is read and `initialize` (answered by the bridge itself) is answered while the
 * embedded orchestrator starts, or, with `--orchestrator-addr`, before the transport's code (the
 * QUIC engine and its native binding, protobuf decoding) is even loaded: `open` makes the real
 * sender on the first call. Calls that need the orchestrator wait until
 * {@link DeferredSender.ready} gives the real sender, then go to it.
 *
 * Waiting is bounded: at most `maxWaiting` calls wait (one more fails at once with `connect`),
 * each waits no longer than its own `timeoutMs` (the rest of the deadline goes to the real call)
 * and leaves the queue when its `signal` aborts. {@link DeferredSender.fail} fails every waiting
 * and later call with `connect` and the start-up error. Errors: `SenderError` (./errors.ts).
 */
import type { PluginRequest, PluginResponse } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { type SenderError, StreamUnsupportedError, senderError } from "./errors.js";
import { canStream, type FrameHandler, type SendOptions, type Sender, type StreamingSender } from "./sender.js";

/** Default bound on calls waiting for the orchestrator to start. */
export const DEFAULT_MAX_WAITING = 1024;

export interface DeferredSenderOptions {
  /** Named in errors until the real sender is ready (e.g. `the embedded orchestrator`). */
  address: string;
  /** Whether the real sender will carry streams (known before it exists: it decides `initialize`'s capabilities). */
  streams: boolean;
  /** Calls that may wait at once (default {@link DEFAULT_MAX_WAITING}). */
  maxWaiting?: number;
  /**
   * Makes the real sender, called once, by the first call (then {@link DeferredSender.ready} or,
   * if it throws, {@link DeferredSender.fail} follow by themselves). Absent: the owner calls them.
   */
  open?: () => Promise<Sender>;
}

interface Waiter {
  resolve(sender: Sender): void;
  reject(error: SenderError): void;
}

export class DeferredSender implements StreamingSender {
  readonly streams: boolean;
  private real: Sender | undefined;
  private failure: SenderError | undefined;
  private closed = false;
  private opening = false;
  private readonly waiters = new Set<Waiter>();

  constructor(private readonly options: DeferredSenderOptions) {
    this.streams = options.streams;
  }

  /** The real sender's address once ready, the placeholder before. */
  get address(): string {
    return this.real?.address ?? this.options.address;
  }

  /** Calls now waiting for the orchestrator. */
  get waiting(): number {
    return this.waiters.size;
  }

  /** The orchestrator is up: waiting and later calls go to `sender` (closed at once if this sender was closed). */
  ready(sender: Sender): void {
    if (this.real || this.failure) throw new Error("DeferredSender settled twice");
    this.real = sender;
    if (this.closed) void sender.close();
    for (const w of [...this.waiters]) w.resolve(sender);
  }

  /** The orchestrator could not start: waiting and later calls fail with `connect` and `detail`. */
  fail(detail: string, cause?: unknown): void {
    if (this.real || this.failure) throw new Error("DeferredSender settled twice");
    this.failure = senderError(this.options.address, "connect", detail, cause);
    for (const w of [...this.waiters]) w.reject(this.failure);
  }

  async send(request: PluginRequest, options: SendOptions = {}): Promise<PluginResponse> {
    // Once the real sender exists, a call goes straight to it (no wait, no deadline arithmetic).
    if (this.real) return this.real.send(request, options);
    const { sender, rest } = await this.acquire(options);
    return sender.send(request, rest);
  }

  async stream(request: PluginRequest, onFrame: FrameHandler, options: SendOptions = {}): Promise<void> {
    const { sender, rest } = await this.acquire(options);
    if (!canStream(sender)) throw new StreamUnsupportedError(`orchestrator ${sender.address}: the transport carries unary RPCs only`);
    return sender.stream(request, onFrame, rest);
  }

  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      const error = senderError(this.options.address, "closed", "the bridge closed before the orchestrator started");
      for (const w of [...this.waiters]) w.reject(error);
    }
    await this.real?.close();
  }

  /** The real sender, once ready, and the options left for the call (the deadline minus the wait). */
  private async acquire(options: SendOptions): Promise<{ sender: Sender; rest: SendOptions }> {
    if (this.real) return { sender: this.real, rest: options };
    const started = performance.now();
    const waited = this.wait(options);
    const { open } = this.options;
    if (open && !this.opening && !this.failure && !this.closed) {
      this.opening = true;
      open().then(
        (sender) => this.ready(sender),
        (err: unknown) => this.fail(err instanceof Error ? err.message : String(err), err),
      );
    }
    const sender = await waited;
    if (options.timeoutMs === undefined || options.timeoutMs <= 0) return { sender, rest: options };
    const left = Math.max(1, Math.round(options.timeoutMs - (performance.now() - started)));
    return { sender, rest: { ...options, timeoutMs: left } };
  }

  private wait(options: SendOptions): Promise<Sender> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(senderError(this.options.address, "closed", "the bridge closed before the orchestrator started"));
    const { signal, timeoutMs } = options;
    if (signal?.aborted) return Promise.reject(senderError(this.options.address, "aborted", "call aborted before it was sent", signal.reason));
    const max = this.options.maxWaiting ?? DEFAULT_MAX_WAITING;
    if (this.waiters.size >= max) return Promise.reject(senderError(this.options.address, "connect", `still starting, and ${max} calls are already waiting for it`));
    return new Promise<Sender>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => settle(() => reject(senderError(this.options.address, "aborted", "call aborted", signal?.reason)));
      const settle = (done: () => void) => {
        this.waiters.delete(waiter);
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        done();
      };
      const waiter: Waiter = {
        resolve: (sender) => settle(() => resolve(sender)),
        reject: (error) => settle(() => reject(error)),
      };
      this.waiters.add(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (timeoutMs !== undefined && timeoutMs > 0 && timeoutMs < 2 ** 31) {
        timer = setTimeout(() => settle(() => reject(senderError(this.options.address, "timeout", `not ready within ${timeoutMs} ms`))), timeoutMs);
      }
    });
  }
}
