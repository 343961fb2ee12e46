/**
 * The one line splitter: newline-delimited byte streams into lines.
 *
 * Used for the MCP stdio transport ("messages are delimited by newlines, and MUST NOT contain
 * embedded newlines", MCP spec, Transports, stdio), through {@link stdioLineSplitter}, and for
 * line-oriented traffic files in `validate` (src/validate/lines.ts).
 *
 * One byte-level core, {@link LineSplitter}:
 * - the terminator is `\n`; a `\r` before it is dropped (CRLF);
 * - a line in one chunk is handed over as a view of that chunk (no copy); a line across chunks is
 *   kept as a list of views and joined once, when its `\n` arrives (O(n) for any chunking);
 * - a line longer than the cap is dropped while it is read (flat memory whatever its length),
 *   keeping only its first `headBytes` bytes, and reported once its end is reached;
 * - with `skipBom`, a UTF-8 byte order mark (EF BB BF) at the very start of the stream is dropped,
 *   also when it is cut across chunks (one anywhere else is data);
 * - lines are numbered from 1, over every line (empty and dropped ones included).
 */
import { MAX_FRAME_BYTES } from "./frame.js";

/**
 * Cap on one MCP stdio line, bytes, without terminator: the Orchestra frame limit (a larger
 * message could not be forwarded anyway, so the bridge refuses it with `-32600`). The line cap
 * of `validate` is its own policy: `VALIDATE_MAX_LINE_BYTES` (src/validate/lines.ts).
 */
export const STDIO_MAX_LINE_BYTES = MAX_FRAME_BYTES;

/** Bytes of an oversized stdio line kept for the recovery of its request id. */
export const STDIO_HEAD_BYTES = 1024;

/** Receives the lines of a {@link LineSplitter}. */
export interface LineSink {
  /**
   * One line, `bytes[start, end)`, without its `\n` (and without a trailing `\r`); `lineNo` is
   * 1-based. The bytes may be a view of an input chunk: copy what must outlive the call if the
   * input chunks are reused.
   */
  line(bytes: Buffer, start: number, end: number, lineNo: number): void;
  /**
   * A line longer than the cap, already discarded: its number, its length in bytes (how the cap
   * counts it; only the length so far when `complete` is false, the input having ended inside
   * it), and its first bytes (up to `headBytes`, a copy).
   */
  oversized(lineNo: number, bytes: number, head: Buffer, complete: boolean): void;
}

/** How a {@link LineSplitter} splits. */
export interface LineSplitterOptions {
  /** Cap on one line, bytes, without the `\n`. */
  maxLineBytes: number;
  /**
   * Whether a trailing `\r` counts against the cap and in an oversized line's length. False for
   * stdio (the cap is on the message); true for `validate` (the cap is on the line as stored).
   */
  countCr?: boolean;
  /** Bytes of an oversized line kept as its head (default 0: none). */
  headBytes?: number;
  /** Drop a UTF-8 byte order mark at the very start of the stream (default false). */
  skipBom?: boolean;
}

const LF = 0x0a;
const CR = 0x0d;
/** UTF-8 byte order mark (U+FEFF), which some Windows tools write before their first line. */
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const EMPTY = Buffer.alloc(0);

/**
 * Incremental line splitter. Feed chunks with {@link LineSplitter.push} (a chunk must not change
 * afterwards: an open line keeps views of it); call {@link LineSplitter.end} at end of input to
 * flush a final unterminated line. Events go to the sink synchronously.
 */
export class LineSplitter {
  /** Number of the last line emitted or dropped. */
  lineNo = 0;
  private readonly max: number;
  /** What the cap may be exceeded by while a line is open: 1 when a trailing `\r` is not counted. */
  private readonly slack: number;
  private readonly countCr: boolean;
  private readonly headBytes: number;
  /** The open line: views of the chunks it came in, and their total length. */
  private carry: Buffer[] = [];
  private carryLen = 0;
  /** True while discarding an oversized line; its length so far, last byte and head. */
  private skipping = false;
  private skippedBytes = 0;
  private skippedLast = 0;
  private skippedHead: Buffer = EMPTY;
  /** While the stream's first bytes may still be a BOM: those bytes, held until decided. */
  private bomHead: Buffer | undefined;

  constructor(
    private readonly sink: LineSink,
    options: LineSplitterOptions,
  ) {
    this.max = options.maxLineBytes;
    this.countCr = options.countCr ?? false;
    this.slack = this.countCr ? 0 : 1;
    this.headBytes = options.headBytes ?? 0;
    if (options.skipBom) this.bomHead = EMPTY;
  }

  /** Consumes one chunk; emits the lines it completes. */
  push(chunk: Buffer): void {
    if (this.bomHead !== undefined) {
      const head = this.bomHead.length === 0 ? chunk : Buffer.concat([this.bomHead, chunk]);
      if (head.length < BOM.length && BOM.subarray(0, head.length).equals(head)) {
        this.bomHead = Buffer.from(head); // a BOM cut across chunks: wait for its rest
        return;
      }
      this.bomHead = undefined;
      chunk = head.subarray(0, BOM.length).equals(BOM) ? head.subarray(BOM.length) : head;
    }
    let start = 0;
    const len = chunk.length;
    while (start < len) {
      const nl = chunk.indexOf(LF, start);
      if (nl === -1) {
        this.keep(chunk, start, len);
        return;
      }
      if (this.skipping) {
        this.keep(chunk, start, nl);
        this.finishSkip(true);
      } else if (this.carryLen === 0) {
        const end = nl > start && chunk[nl - 1] === CR ? nl - 1 : nl;
        const counted = this.countCr ? nl - start : end - start;
        this.lineNo++;
        if (counted > this.max) this.sink.oversized(this.lineNo, counted, this.headOf([], chunk, start, nl), true);
        else this.sink.line(chunk, start, end, this.lineNo);
      } else {
        this.keep(chunk, start, nl);
        if (this.skipping) this.finishSkip(true);
        else this.emitCarry(true);
      }
      start = nl + 1;
    }
  }

  /** Signals end of input: a final line without a terminator is emitted (or reported). */
  end(): void {
    if (this.bomHead !== undefined) {
      const held = this.bomHead; // the input ended inside what could have been a BOM: it was data
      this.bomHead = undefined;
      this.push(held);
    }
    if (this.skipping) this.finishSkip(false);
    else if (this.carryLen > 0) this.emitCarry(false);
  }

  /** Adds `chunk[start, end)` to the open line, switching to discarding once over the cap. */
  private keep(chunk: Buffer, start: number, end: number): void {
    const n = end - start;
    if (n === 0) return;
    if (this.skipping) {
      this.skippedBytes += n;
      this.skippedLast = chunk[end - 1]!;
      return;
    }
    if (this.carryLen + n > this.max + this.slack) {
      this.skipping = true;
      this.skippedBytes = this.carryLen + n;
      this.skippedLast = chunk[end - 1]!;
      this.skippedHead = this.headOf(this.carry, chunk, start, end);
      this.carry = [];
      this.carryLen = 0;
      return;
    }
    // A view, not a copy (the line is copied once, when complete): it pins the chunk while the
    // line stays open, which costs at most the two partly used chunks at the ends of a long line.
    this.carry.push(chunk.subarray(start, end));
    this.carryLen += n;
  }

  private finishSkip(complete: boolean): void {
    const bytes = !this.countCr && this.skippedLast === CR ? this.skippedBytes - 1 : this.skippedBytes;
    const head = this.skippedHead;
    this.skipping = false;
    this.skippedBytes = 0;
    this.skippedHead = EMPTY;
    this.lineNo++;
    this.sink.oversized(this.lineNo, bytes, head, complete);
  }

  private emitCarry(complete: boolean): void {
    const buf = this.carry.length === 1 ? this.carry[0]! : Buffer.concat(this.carry, this.carryLen);
    this.carry = [];
    this.carryLen = 0;
    const end = buf.length > 0 && buf[buf.length - 1] === CR ? buf.length - 1 : buf.length;
    const counted = this.countCr ? buf.length : end;
    this.lineNo++;
    if (counted > this.max) this.sink.oversized(this.lineNo, counted, this.headOf([], buf, 0, end), complete);
    else this.sink.line(buf, 0, end, this.lineNo);
  }

  /** A copy of the first `headBytes` bytes of `parts` followed by `chunk[start, end)`. */
  private headOf(parts: Buffer[], chunk: Buffer, start: number, end: number): Buffer {
    if (this.headBytes === 0) return EMPTY;
    const tail = chunk.subarray(start, Math.min(end, start + this.headBytes));
    return Buffer.from(Buffer.concat([...parts, tail]).subarray(0, this.headBytes));
  }
}

/** What {@link stdioLineSplitter} hands to its consumer. */
export type LineEvent =
  /** One complete line without its `\n` (and without a trailing `\r`); never empty or blank. */
  | { kind: "line"; line: Buffer }
  /**
   * A line longer than the cap. Its bytes were discarded; `head` holds its first bytes (up to
   * {@link STDIO_HEAD_BYTES}) so the consumer can try to recover a request id, and `bytes` its
   * full length, or the length so far when `complete` is false (the stream ended inside it).
   */
  | { kind: "oversized"; head: Buffer; bytes: number; complete: boolean };

/**
 * The splitter of an MCP stdio stream: blank lines (spaces, tabs) are skipped, an oversized line
 * keeps a {@link STDIO_HEAD_BYTES} head, a trailing `\r` does not count against the cap.
 * @param maxLineBytes cap on one line, bytes (default {@link STDIO_MAX_LINE_BYTES}).
 * @param skipBom drop a UTF-8 BOM at the very start of the stream (only there).
 */
export function stdioLineSplitter(onEvent: (event: LineEvent) => void, maxLineBytes: number = STDIO_MAX_LINE_BYTES, skipBom = false): LineSplitter {
  return new LineSplitter(
    {
      line(bytes, start, end) {
        if (!isBlank(bytes, start, end)) onEvent({ kind: "line", line: start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end) });
      },
      oversized(_lineNo, bytes, head, complete) {
        onEvent({ kind: "oversized", head, bytes, complete });
      },
    },
    { maxLineBytes, headBytes: STDIO_HEAD_BYTES, skipBom },
  );
}

function isBlank(bytes: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = bytes[i];
    if (c !== 0x20 && c !== 0x09 && c !== CR) return false;
  }
  return true;
}
