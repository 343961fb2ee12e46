/**
 * Splits a byte stream into newline-delimited messages (MCP stdio transport: "messages are
 * delimited by newlines, and MUST NOT contain embedded newlines").
 *
 * Hand-written rather than `readline` so that the line length is bounded, CRLF and blank lines
 * are handled, and a line arriving across many chunks is joined once (chunks are kept in a list
 * and concatenated only when the terminating `\n` arrives, so a 16 MiB line costs O(n), not
 * O(n²)).
 */

/**
 * Default cap on one line, in bytes, excluding the terminator: 16 MiB, the Orchestra frame limit
 * (a larger message could not be forwarded anyway, so it is refused here with `-32600`).
 */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;

/** What the splitter hands to its consumer. */
export type LineEvent =
  /** One complete line without its `\n` (and without a trailing `\r`); never empty or blank. */
  | { kind: "line"; line: Buffer }
  /**
   * A line longer than the cap. Its bytes were discarded; `head` holds its first bytes (up to
   * 1 KiB) so the consumer can try to recover a request id, and `bytes` its full length, or
   * the length so far when `complete` is false (the stream ended inside it).
   */
  | { kind: "oversized"; head: Buffer; bytes: number; complete: boolean };

const LF = 0x0a;
/** UTF-8 byte order mark (U+FEFF), which some Windows clients write before their first message. */
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const CR = 0x0d;
const HEAD_BYTES = 1024;

/**
 * Incremental line splitter. Feed chunks with {@link LineSplitter.push}; call
 * {@link LineSplitter.end} at end of input to flush a final unterminated line.
 */
export class LineSplitter {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Set while discarding an oversized line: its head and length so far. */
  private discarding: { head: Buffer; bytes: number; last: number } | undefined;
  /** While the stream's first bytes may still be a BOM: those bytes, held until decided. */
  private bomHead: Buffer | undefined;

  /**
   * @param maxLineBytes cap on one line in bytes (default {@link DEFAULT_MAX_LINE_BYTES}).
   * @param skipBom drop a UTF-8 BOM at the very start of the stream (only there; one elsewhere
   *   is part of the line).
   */
  constructor(
    private readonly onEvent: (event: LineEvent) => void,
    readonly maxLineBytes: number = DEFAULT_MAX_LINE_BYTES,
    skipBom = false,
  ) {
    if (skipBom) this.bomHead = Buffer.alloc(0);
  }

  /** Consumes one chunk of input; emits zero or more events synchronously. */
  push(chunk: Buffer): void {
    if (this.bomHead) {
      const head = this.bomHead.length === 0 ? chunk : Buffer.concat([this.bomHead, chunk]);
      if (head.length < BOM.length && BOM.subarray(0, head.length).equals(head)) {
        this.bomHead = Buffer.from(head); // a BOM cut across chunks: wait for its rest
        return;
      }
      this.bomHead = undefined;
      chunk = head.subarray(0, BOM.length).equals(BOM) ? head.subarray(BOM.length) : head;
    }
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(LF, start);
      const end = nl === -1 ? chunk.length : nl;
      this.append(chunk, start, end);
      if (nl === -1) return;
      this.finishLine(true);
      start = nl + 1;
    }
  }

  /** Signals end of input: a final line without a terminator is emitted as a line. */
  end(): void {
    if (this.bomHead) {
      const held = this.bomHead; // the input ended inside what could have been a BOM: it was data
      this.bomHead = undefined;
      this.push(held);
    }
    if (this.buffered > 0 || this.discarding) this.finishLine(false);
  }

  private append(chunk: Buffer, start: number, end: number): void {
    if (end === start) return;
    const piece = chunk.subarray(start, end);
    if (this.discarding) {
      this.discarding.bytes += piece.length;
      this.discarding.last = piece[piece.length - 1]!;
      return;
    }
    // One byte over the cap is held: it may be the `\r` of a CRLF, which is not counted.
    if (this.buffered + piece.length > this.maxLineBytes + 1) {
      const head = Buffer.concat([...this.chunks, piece.subarray(0, HEAD_BYTES)]).subarray(0, HEAD_BYTES);
      this.discarding = { head: Buffer.from(head), bytes: this.buffered + piece.length, last: piece[piece.length - 1]! };
      this.chunks = [];
      this.buffered = 0;
      return;
    }
    // Copy only when the piece aliases a chunk we may not own for long: Node does not reuse
    // stream chunks, so keeping the view is safe and avoids a copy.
    this.chunks.push(piece);
    this.buffered += piece.length;
  }

  private finishLine(terminated: boolean): void {
    if (this.discarding) {
      const { head, bytes, last } = this.discarding;
      this.discarding = undefined;
      this.onEvent({ kind: "oversized", head, bytes: last === CR ? bytes - 1 : bytes, complete: terminated });
      return;
    }
    let line = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.buffered);
    this.chunks = [];
    this.buffered = 0;
    if (line.length > 0 && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1);
    if (line.length > this.maxLineBytes) {
      this.onEvent({ kind: "oversized", head: Buffer.from(line.subarray(0, HEAD_BYTES)), bytes: line.length, complete: terminated });
      return;
    }
    if (isBlank(line)) return;
    this.onEvent({ kind: "line", line });
  }
}

function isBlank(line: Buffer): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c !== 0x20 && c !== 0x09 && c !== CR) return false;
  }
  return true;
}
