/**
 * The stdio transport of `orchestra-stdio serve` (MCP 2025-06-18 "Transports / stdio"):
 * newline-delimited JSON-RPC on stdin/stdout, logs on stderr only.
 *
 * stdin bytes → {@link stdioLineSplitter} → {@link McpHandler} → {@link MessageWriter} → stdout.
 * A UTF-8 BOM at the very start of stdin is skipped. Backpressure: while the bytes of stdout
 * lines not yet handed to the OS plus the bytes of input lines whose requests are in flight
 * exceed `queueBudgetBytes`, stdin is not read (docs/reliability.md).
 * On stdin EOF the in-flight requests are given `shutdownGraceMs` to finish; what remains is
 * failed with `-32603`; everything is flushed before {@link StdioBridge.run} resolves.
 */
import type { Readable, Writable } from "node:stream";
import { stdioLineSplitter, STDIO_MAX_LINE_BYTES, type LineSplitter } from "../framing/line-splitter.js";
import { MessageWriter } from "../jsonrpc/message-writer.js";
import { fitOutboundLine } from "../jsonrpc/outbound-limit.js";
import { serialize } from "../jsonrpc/serialize.js";
import { childLogger } from "../log.js";
import type { OutboundLine } from "../jsonrpc/message.js";
import { McpHandler, type HandlerOptions } from "./handler.js";
import type { CaptureWriter } from "./capture.js";

export interface StdioBridgeOptions extends Omit<HandlerOptions, "sink"> {
  input: Readable;
  output: Writable;
  /**
   * Cap on one line in bytes, both ways (default {@link STDIO_MAX_LINE_BYTES}): a longer inbound
   * line gets `-32600`; a longer outbound response is replaced by `-32603` for its id, a longer
   * notification is dropped.
   */
  maxLineBytes?: number;
  /** On stdin EOF, how long in-flight requests may still take, ms (default 30 000). */
  shutdownGraceMs?: number;
  /** Records both directions when set (`serve --capture`). */
  capture?: CaptureWriter;
  /**
   * Backpressure budget, bytes (default {@link DEFAULT_QUEUE_BUDGET_BYTES}): stdin is not read
   * while queued stdout bytes plus the input bytes of in-flight requests exceed it.
   */
  queueBudgetBytes?: number;
}

/**
 * Default backpressure budget: 8 MiB. Each in-flight byte of a request costs several times that
 * in memory until it is answered (its parsed form, the protobuf frames, the answer and its
 * JSON), so the budget is kept small; one line over it still gets through (a 16 MiB request is
 * read, then nothing more until it is answered and written).
 */
export const DEFAULT_QUEUE_BUDGET_BYTES = 8 * 1024 * 1024;

const log = childLogger("stdio-bridge");

export class StdioBridge {
  readonly handler: McpHandler;
  private readonly writer: MessageWriter;
  private readonly splitter: LineSplitter;

  constructor(private readonly options: StdioBridgeOptions) {
    this.writer = new MessageWriter(options.output);
    this.writer.onProgress = () => this.regulate();
    this.budget = options.queueBudgetBytes ?? DEFAULT_QUEUE_BUDGET_BYTES;
    const capture = options.capture;
    const maxLineBytes = options.maxLineBytes ?? STDIO_MAX_LINE_BYTES;
    this.handler = new McpHandler({
      ...options,
      onSettled: () => this.regulate(),
      sink: (message: OutboundLine) => {
        const fitted = fitOutboundLine(message, serialize(message), maxLineBytes);
        if (fitted.oversizedBytes !== undefined) {
          log.warn({ bytes: fitted.oversizedBytes, maxLineBytes, replaced: fitted.message !== undefined }, "outgoing line over the line limit");
        }
        if (fitted.message === undefined || fitted.text === undefined) return;
        capture?.record("s2c", fitted.text);
        this.writer.write(fitted.message, fitted.text);
        this.regulate();
      },
    });
    this.splitter = stdioLineSplitter(
      (event) => {
        if (event.kind === "line") {
          if (capture) capture.record("c2s", event.line.toString("utf8"));
          this.handler.handleLine(event.line);
        } else {
          capture?.dropped("c2s", event.bytes, maxLineBytes); // before the -32600 reply it explains
          this.handler.handleOversizedLine(event.head, event.bytes, maxLineBytes);
        }
        this.regulate();
      },
      maxLineBytes,
      true,
    );
  }

  private readonly budget: number;
  /** Whether stdin reading is paused for backpressure. */
  private paused = false;

  /** Bytes counted against the backpressure budget. */
  get queuedBytes(): number {
    return this.writer.queuedBytes + this.handler.unansweredBytes;
  }

  /** Pauses stdin past the budget, resumes it once back under. */
  private regulate(): void {
    const over = this.queuedBytes > this.budget;
    if (over === this.paused) return;
    this.paused = over;
    const { input } = this.options;
    if (over) {
      input.pause();
      log.debug({ queuedBytes: this.queuedBytes, budget: this.budget }, "stdout backed up: not reading stdin");
    } else {
      input.resume();
      log.debug({ queuedBytes: this.queuedBytes }, "stdout drained: reading stdin again");
    }
  }

  /**
   * Serves until the input ends, then drains: resolves once every request was answered (or
   * failed after the grace period) and every response was handed to the output.
   */
  /** Set by {@link StdioBridge.interrupt}: why the bridge stops without waiting for its calls. */
  private interruption: string | undefined;
  private wake: (() => void) | undefined;

  /**
   * Stops serving at once (e.g. on SIGTERM): input is no longer read, every in-flight request is
   * answered with `-32603` naming `reason`, and {@link StdioBridge.run} resolves after the flush.
   */
  interrupt(reason: string): void {
    this.interruption ??= reason;
    this.wake?.();
  }

  async run(): Promise<void> {
    const { input } = this.options;
    await new Promise<void>((resolve) => {
      this.wake = resolve;
      if (this.interruption || input.destroyed || input.readableEnded) return resolve(); // already stopped (e.g. a signal during start-up)
      input.on("data", (chunk: Buffer | string) => {
        this.splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
      });
      input.once("end", resolve);
      input.once("close", resolve);
      input.once("error", resolve);
    });
    this.splitter.end();
    this.handler.close(); // no more background work (tool-change subscription) once input ended
    await this.drain();
  }

  private async drain(): Promise<void> {
    const graceMs = this.options.shutdownGraceMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<"expired">((resolve) => {
      timer = setTimeout(() => resolve("expired"), graceMs);
    });
    const interrupted = new Promise<"interrupted">((resolve) => {
      this.wake = () => resolve("interrupted");
      if (this.interruption) resolve("interrupted");
    });
    const outcome = await Promise.race([this.handler.idle().then(() => "idle" as const), expired, interrupted]);
    clearTimeout(timer);
    if (outcome === "interrupted") {
      this.handler.failAll(`Internal error: the bridge is stopping (${this.interruption}) and the request did not finish`);
    } else if (outcome === "expired") {
      this.handler.failAll(`Internal error: the bridge is shutting down (stdin closed) and the request did not finish within ${graceMs} ms`);
    }
    await this.writer.flush();
  }
}
