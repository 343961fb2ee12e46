/**
 * The lines of a traffic file for `validate`: the one line splitter (src/framing/line-splitter.ts)
 * with UTF-8 text on top.
 *
 * Bytes go in with `push` in chunks of any size; complete lines come out synchronously through
 * `onLine` as UTF-8 strings, with their 1-based line number, empty lines included. Line
 * terminators are `\n` and `\r\n` (the `\r` is dropped). Memory stays flat: a line longer than
 * `maxLineBytes` (counting its bytes without the `\n`, a trailing `\r` included) is dropped while
 * it is read and reported through `onTooLong`. A UTF-8 byte order mark at the very start is
 * skipped. A line that is not valid UTF-8 is decoded with U+FFFD for the bad bytes and reported
 * through `onBadUtf8` first (the check costs nothing for lines without U+FFFD in their decoded
 * text).
 */
import { isUtf8 } from "node:buffer";
import { LineSplitter, type LineSink } from "../framing/line-splitter.js";

/** Default cap on one line of a traffic file, bytes (`ValidateOptions.maxLineBytes`): 64 MiB. */
export const VALIDATE_MAX_LINE_BYTES = 64 * 1024 * 1024;

/** Receives one complete line (without terminator) and its 1-based number. */
export type LineHandler = (text: string, lineNo: number) => void;

/** Receives the number and byte length (so far) of a line that exceeded the limit. */
export type TooLongHandler = (lineNo: number, bytes: number) => void;

/** Receives the number of a line that is not valid UTF-8 (before the line itself). */
export type BadUtf8Handler = (lineNo: number) => void;

/**
 * Reads a line itself from its bytes, `bytes[start, end)` without terminator, before it is
 * decoded (the long-line reader of `bigline.ts`, a format's `LineConsumer.bytes`); returns true
 * when it did, and the line is then not decoded nor given to `onLine`.
 */
export type ByteLineReader = (bytes: Buffer, start: number, end: number, lineNo: number) => boolean;

/** True when `text`, decoded from `bytes[start, end)`, came from bytes that are not valid UTF-8. */
export function badUtf8(text: string, bytes: Buffer, start: number, end: number): boolean {
  return text.includes("\ufffd") && !isUtf8(bytes.subarray(start, end));
}

/** The sink that decodes the splitter's lines to text. */
class TextLines implements LineSink {
  constructor(
    private readonly onLine: LineHandler,
    private readonly onTooLong: TooLongHandler | undefined,
    private readonly onBadUtf8: BadUtf8Handler | undefined,
    private readonly byteLines: ByteLineReader | undefined,
  ) {}

  line(bytes: Buffer, start: number, end: number, lineNo: number): void {
    if (this.byteLines !== undefined && this.byteLines(bytes, start, end, lineNo)) return;
    const text = bytes.toString("utf8", start, end);
    if (this.onBadUtf8 !== undefined && badUtf8(text, bytes, start, end)) this.onBadUtf8(lineNo);
    this.onLine(text, lineNo);
  }

  oversized(lineNo: number, bytes: number): void {
    this.onTooLong?.(lineNo, bytes);
  }
}

/**
 * A splitter of a traffic file into UTF-8 lines; see the module comment. Its `lineNo` is the
 * number of the last line emitted or dropped.
 * @param onLine called for every complete line, including empty ones.
 * @param maxLineBytes lines longer than this (bytes, without `\n`) are dropped.
 * @param onTooLong called once per dropped line, when its end is reached.
 * @param onBadUtf8 called before `onLine` for a line that is not valid UTF-8.
 * @param byteLines offered every line as bytes first (see {@link ByteLineReader}).
 */
export function textLineSplitter(
  onLine: LineHandler,
  maxLineBytes: number = VALIDATE_MAX_LINE_BYTES,
  onTooLong?: TooLongHandler,
  onBadUtf8?: BadUtf8Handler,
  byteLines?: ByteLineReader,
): LineSplitter {
  return new LineSplitter(new TextLines(onLine, onTooLong, onBadUtf8, byteLines), { maxLineBytes, countCr: true, skipBom: true });
}
