/**
 * A chunked line splitter for arbitrarily large traffic files.
 *
 * Bytes go in with {@link LineSplitter.push} in chunks of any size; complete lines come out
 * synchronously through the `onLine` callback as UTF-8 strings, with their 1-based line number.
 * Line terminators are `\n` and `\r\n` (the `\r` is dropped). Memory stays flat: only the
 * unfinished tail of the last chunk is kept, and a line longer than `maxLineBytes` (counting its
 * bytes without the `\n`, a trailing `\r` included) is dropped while it is read (reported through
 * `onTooLong`) instead of being buffered whole, whatever the chunk boundaries.
 * A UTF-8 byte-order mark at the very start is skipped. A line that is not valid UTF-8 is decoded
 * with U+FFFD for the bad bytes and reported through `onBadUtf8` first (the check costs nothing
 * for lines without U+FFFD in their decoded text).
 */
import { isUtf8 } from "node:buffer";

/** Receives one complete line (without terminator) and its 1-based number. */
export type LineHandler = (text: string, lineNo: number) => void;

/** Receives the number and byte length (so far) of a line that exceeded the limit. */
export type TooLongHandler = (lineNo: number, bytes: number) => void;

/** Receives the number of a line that is not valid UTF-8 (before the line itself). */
export type BadUtf8Handler = (lineNo: number) => void;

/** True when `text`, decoded from `bytes[start, end)`, came from bytes that are not valid UTF-8. */
export function badUtf8(text: string, bytes: Buffer, start: number, end: number): boolean {
  return text.includes("\ufffd") && !isUtf8(bytes.subarray(start, end));
}

const LF = 0x0a;
const CR = 0x0d;

/** Splits a byte stream into UTF-8 lines with flat memory; see the module comment. */
export class LineSplitter {
  /** Number of the last line emitted or dropped. */
  lineNo = 0;
  private carry: Buffer[] = [];
  private carryLen = 0;
  /** True while discarding the rest of an over-long line. */
  private skipping = false;
  private skippedBytes = 0;

  /**
   * @param onLine called for every complete line, including empty ones.
   * @param maxLineBytes lines longer than this (bytes, without terminator) are dropped.
   * @param onTooLong called once per dropped line, when its end is reached.
   * @param onBadUtf8 called before `onLine` for a line that is not valid UTF-8.
   */
  constructor(
    private readonly onLine: LineHandler,
    private readonly maxLineBytes: number = 64 * 1024 * 1024,
    private readonly onTooLong: TooLongHandler = () => {},
    private readonly onBadUtf8?: BadUtf8Handler,
  ) {}

  /**
   * Optional: offered every line but line 1 (which may open with a byte-order mark) as bytes,
   * `bytes[start, end)` without terminator, before it is decoded; returns true when it has read
   * the line itself (the long-line reader of `bigline.ts`, a format's `LineConsumer.bytes`), which
   * `onLine` (and `onBadUtf8`) then do not get.
   */
  byteLines: ((bytes: Buffer, start: number, end: number, lineNo: number) => boolean) | undefined;

  /**
   * Feeds one chunk. Calls `onLine` for every line the chunk completes. The chunk must not be
   * changed afterwards (a line left open keeps a view of it).
   */
  push(chunk: Buffer): void {
    let start = 0;
    const len = chunk.length;
    while (start < len) {
      const nl = chunk.indexOf(LF, start);
      if (nl === -1) {
        this.keep(chunk, start, len);
        return;
      }
      if (this.skipping) {
        this.finishSkip(nl - start);
      } else if (this.carryLen === 0) {
        if (nl - start > this.maxLineBytes) {
          this.skippedBytes = nl - start;
          this.finishSkip(0);
        } else {
          const end = nl > start && chunk[nl - 1] === CR ? nl - 1 : nl;
          this.lineNo++;
          if (!this.offer(chunk, start, end)) {
            const text = chunk.toString("utf8", start, end);
            if (this.onBadUtf8 !== undefined && badUtf8(text, chunk, start, end)) this.onBadUtf8(this.lineNo);
            this.emit(text);
          }
        }
      } else {
        const total = this.carryLen + (nl - start);
        if (total > this.maxLineBytes) {
          this.carry = [];
          this.carryLen = 0;
          this.skippedBytes = total;
          this.finishSkip(0);
        } else {
          this.carry.push(chunk.subarray(start, nl));
          this.emitCarry();
        }
      }
      start = nl + 1;
    }
  }

  /** Flushes the last line when the input does not end with a newline. */
  end(): void {
    if (this.skipping) this.finishSkip(0);
    else if (this.carryLen > 0) this.emitCarry();
  }

  private keep(chunk: Buffer, start: number, end: number): void {
    const n = end - start;
    if (this.skipping) {
      this.skippedBytes += n;
      return;
    }
    if (this.carryLen + n > this.maxLineBytes) {
      this.skipping = true;
      this.skippedBytes = this.carryLen + n;
      this.carry = [];
      this.carryLen = 0;
      return;
    }
    // A view, not a copy (the line is copied once, when complete): it pins the chunk while the
    // line stays open, which costs at most the two partly used chunks at the ends of a long line.
    this.carry.push(chunk.subarray(start, end));
    this.carryLen += n;
  }

  private finishSkip(extra: number): void {
    this.lineNo++;
    this.onTooLong(this.lineNo, this.skippedBytes + extra);
    this.skipping = false;
    this.skippedBytes = 0;
  }

  private emitCarry(): void {
    let buf = this.carry.length === 1 ? this.carry[0]! : Buffer.concat(this.carry);
    this.carry = [];
    this.carryLen = 0;
    if (buf.length > 0 && buf[buf.length - 1] === CR) buf = buf.subarray(0, buf.length - 1);
    this.lineNo++;
    if (this.offer(buf, 0, buf.length)) return;
    const text = buf.toString("utf8");
    if (this.onBadUtf8 !== undefined && badUtf8(text, buf, 0, buf.length)) this.onBadUtf8(this.lineNo);
    this.emit(text);
  }

  /** Offers line `lineNo` (not line 1, which may open with a BOM) to {@link byteLines}. */
  private offer(bytes: Buffer, start: number, end: number): boolean {
    return this.byteLines !== undefined && this.lineNo > 1 && this.byteLines(bytes, start, end, this.lineNo);
  }

  private emit(text: string): void {
    // A UTF-8 byte-order mark can only open line 1 (and may span chunks, so test the text).
    if (this.lineNo === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    this.onLine(text, this.lineNo);
  }
}
