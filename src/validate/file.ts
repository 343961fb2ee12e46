/**
 * Validates one input (a path, or `-` for stdin) on the calling thread: opens it, sniffs the
 * format, streams it through the line splitter ({@link textLineSplitter}) and the format's reader into
 * {@link SessionChecker}s, and returns the file's {@link FileSummary}. Line formats are read in
 * 1 MiB chunks with flat memory; HAR files are read whole (see `readers/har.ts`).
 * This is the one path every line takes, on the calling thread or in a `--jobs` worker (one file
 * per thread, `jobs.ts`).
 */
import { open, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { SessionChecker } from "./checker.js";
import { openFailure } from "./open-failure.js";
import { LEGACY_PROTOCOL_VERSIONS } from "../mcp/versions.js";
import { verifiedBase64 } from "../mcp/formats.js";
import { BIG_LINE_BYTES, BigLineConsumer } from "./bigline.js";
import type { LineSplitter } from "../framing/line-splitter.js";
import { textLineSplitter, VALIDATE_MAX_LINE_BYTES, type ByteLineReader } from "./lines.js";
import { IDLE_INPUT_MS, settlesWithin } from "./live.js";
import { captureReader } from "./readers/capture.js";
import { claudeLogReader } from "./readers/claude-log.js";
import { detectFormat, detectFormatEarly, notTextReason, SNIFF_BYTES } from "./readers/detect.js";
import type { Origin } from "./checker.js";
import type { Dispatch, LineConsumer } from "./readers/dispatch.js";
import { harText, harTooLarge, MAX_HAR_BYTES, readHar } from "./readers/har.js";
import { jsonlReader, serverSideFirstLine } from "./readers/jsonl.js";
import { defsFor } from "./defs.js";
import { RULES } from "./rules.js";
import type { ValidatorSetup } from "./setup.js";
import type { Direction, FileSummary, Finding, InputFormat, ValidateOptions } from "./types.js";

/** Chunk size for file reads, bytes. */
export const CHUNK_BYTES = 1 << 20;

/** The line consumer of a line-oriented format (`har` is not one). */
export function lineReader(format: Exclude<InputFormat, "har">, out: Dispatch, dir: Direction): LineConsumer {
  return format === "capture" ? captureReader(out) : format === "claude-log" ? claudeLogReader(out) : jsonlReader(out, dir);
}

/**
 * The reading of undecoded lines for a format (see `ByteLineReader` in `lines.ts`): long lines with
 * base64 payloads parsed without decoding the payloads (`bigline.ts`; capture and JSONL), then the
 * format reader's own fast path (`consumer.bytes`). Undefined when the format has neither.
 */
export function byteLineReader(format: Exclude<InputFormat, "har">, consumer: LineConsumer, out: Dispatch, dir: Direction): ByteLineReader | undefined {
  const big = format === "capture" || format === "jsonl" ? new BigLineConsumer((o) => lineReader(format, o, dir), out) : undefined;
  const fast = consumer.bytes === undefined ? undefined : consumer;
  if (big === undefined && fast === undefined) return undefined;
  return (bytes, start, end, lineNo) => {
    // The payloads the long-line reader declared checked belong to the previous line, whose
    // checks are done: let them go now (held longer, every payload would outlive a young-space GC
    // and be promoted, and the old space would fill with them: many more full GCs).
    verifiedBase64(undefined);
    return (big !== undefined && end - start >= BIG_LINE_BYTES && big.line(bytes, start, end, lineNo)) || (fast !== undefined && fast.bytes!(bytes, start, end, lineNo));
  };
}

/**
 * The splitter of a line-format file validated on the calling thread: lines into `consumer` (the
 * format's reader over `state`'s dispatch), undecoded lines to {@link byteLineReader} first,
 * over-long and invalid UTF-8 lines reported through `state`.
 */
export function fileLineSplitter(state: FileState, consumer: LineConsumer, format: Exclude<InputFormat, "har">, dir: Direction, maxLine: number): LineSplitter {
  return textLineSplitter(
    (text, no) => consumer.line(text, no),
    maxLine,
    (no, bytes) => state.dispatch.problem("input/line-too-long", { line: no }, tooLongMessage(bytes, maxLine)),
    (no) => state.dispatch.problem("input/invalid-utf8", { line: no }, BAD_UTF8_MESSAGE),
    byteLineReader(format, consumer, state.dispatch, dir),
  );
}

/** The `input/invalid-utf8` message. */
export const BAD_UTF8_MESSAGE = "line is not valid UTF-8; checked with the invalid bytes replaced by U+FFFD";

/** The `input/line-too-long` message for a dropped line of `bytes` bytes. */
export function tooLongMessage(bytes: number, maxLine: number): string {
  return `line of ${bytes} bytes exceeds the ${maxLine}-byte limit; skipped`;
}

/** The direction of a plain JSONL file, and the line of the message it was guessed from. */
export interface DirectionChoice {
  direction: Direction;
  guessedAt?: number;
}

/**
 * The direction of a plain JSONL file from its head: the one given, else server→client when the
 * first message is a response, or a request or notification only a server sends (in the default
 * version's schema or the newest initialize-based one: `sampling/createMessage`, `roots/list`...),
 * else client→server.
 */
export function jsonlDirection(head: string, options: ValidateOptions, setup: ValidatorSetup): DirectionChoice {
  if (options.direction !== undefined) return { direction: options.direction };
  const versions = [setup.defaultVersion, LEGACY_PROTOCOL_VERSIONS[0]!];
  const defs = versions.flatMap((version) => {
    const v = setup.resolve(version);
    return v === undefined ? [] : [defsFor(v)];
  });
  const serverOnly = (m: string): boolean => defs.some((d) => d.method("s2c", m).def !== undefined && d.method("c2s", m).def === undefined);
  const line = serverSideFirstLine(head, serverOnly);
  return line === undefined ? { direction: "c2s" } : { direction: "s2c", guessedAt: line };
}

/**
 * The state of one input file being validated: its summary, one {@link SessionChecker} per
 * session (Claude logs: per server), and the {@link Dispatch} that readers feed. Findings go to
 * `emit` in the order they are found and are counted into the summary.
 */
export class FileState {
  readonly summary: FileSummary;
  readonly dispatch: Dispatch;
  readonly checkers = new Map<string, SessionChecker>();
  /** The format in use; set before messages are dispatched. */
  format: InputFormat = "jsonl";
  private readonly count: (f: Finding) => void;
  private lastKey = "";
  private lastChecker: SessionChecker | undefined;
  private lostLines = 0;
  /** `partial`: a line that did not parse, held until the next line says whether it was the input's last. */
  private held: { origin: Origin; report: () => void; messages: number } | undefined;
  /** A line that did not parse before any message: the input may begin mid-message. */
  private cutFirst = false;
  /** The first line of a format with no message bodies (`input/unsupported-format`), reported at the end. */
  private unsupported: { origin: Origin; message: string } | undefined;

  constructor(
    path: string,
    private readonly options: ValidateOptions,
    private readonly setup: ValidatorSetup,
    emit: (finding: Finding) => void,
  ) {
    const summary: FileSummary = {
      file: path,
      bytes: 0,
      lines: 0,
      messages: 0,
      skipped: 0,
      errors: 0,
      warnings: 0,
      protocolVersions: [],
      sessions: 0,
    };
    this.summary = summary;
    this.count = (f) => {
      if (f.severity === "error") summary.errors++;
      else summary.warnings++;
      emit(f);
    };
    this.dispatch = {
      message: (value, origin, dir, session) => this.checkerFor(session).message(value, origin, dir),
      unparsable: (raw, error, origin, dir, session) => this.checkerFor(session).unparsable(raw, error, origin, dir),
      problem: (rule, origin, message) => {
        if (rule === "input/line-too-long" || rule === "input/dropped-message") this.lost();
        if (rule === "input/unsupported-format") {
          // Decided at the end: the file's one finding when nothing else in it is a message.
          this.unsupported ??= { origin, message };
          return;
        }
        const f: Finding = { file: path, line: origin.line, rule, severity: RULES[rule].severity, message };
        if (origin.location !== undefined) f.location = origin.location;
        this.count(f);
      },
      skip: () => {
        summary.skipped++;
      },
    };
    if (options.onMessage !== undefined) this.dispatch.times = true;
    if (options.partial === true) this.holdCutLines();
    else this.noticeCutFirst();
  }

  /** Messages checked so far in all sessions of the file. */
  private messagesSoFar(): number {
    let n = 0;
    for (const c of this.checkers.values()) n += c.messages;
    return n;
  }

  /**
   * `partial`: a line that does not parse (or a malformed capture record) before any message is
   * the excerpt's first line cut short, and one after the last message its last line: each an
   * `input/cut-short` warning instead, not checked. A failed line is held until the next line
   * arrives (or the input ends) to know which it is.
   */
  private holdCutLines(): void {
    const d = this.dispatch;
    const { unparsable, problem } = d;
    const failed = (origin: Origin, report: () => void): void => {
      this.flushHeld();
      if (this.messagesSoFar() === 0 && !this.cutFirst) {
        this.cutFirst = true;
        this.cutShort(origin, "begins");
        return;
      }
      this.held = { origin, report, messages: this.messagesSoFar() };
    };
    d.unparsable = (raw, error, origin, dir, session) => failed(origin, () => unparsable(raw, error, origin, dir, session));
    d.problem = (rule, origin, text) => {
      if (rule === "input/malformed-record") failed(origin, () => problem(rule, origin, text));
      else {
        this.flushHeld();
        problem(rule, origin, text);
      }
    };
  }

  /** Without `partial`: a first line that does not parse is a sign of an excerpt. */
  private noticeCutFirst(): void {
    const d = this.dispatch;
    const { unparsable, problem } = d;
    d.unparsable = (raw, error, origin, dir, session) => {
      if (!this.cutFirst && this.messagesSoFar() === 0) this.cutFirst = true;
      unparsable(raw, error, origin, dir, session);
    };
    d.problem = (rule, origin, text) => {
      if (rule === "input/malformed-record" && !this.cutFirst && this.messagesSoFar() === 0) this.cutFirst = true;
      problem(rule, origin, text);
    };
  }

  /** Reports the held failed line as it is (a message came after it). */
  private flushHeld(): void {
    const h = this.held;
    if (h === undefined) return;
    this.held = undefined;
    h.report();
  }

  private cutShort(origin: Origin, where: "begins" | "ends"): void {
    this.dispatch.problem("input/cut-short", origin, `line ${origin.line} does not parse: taken as cut short where the excerpt ${where} (--partial); not checked`);
  }

  /** A line was dropped unread: every session (and any started later) may miss a request. */
  private lost(): void {
    this.lostLines++;
    for (const c of this.checkers.values()) c.lost();
  }

  /** The checker of `session` (undefined: the file's only session), created on first use. */
  checkerFor(session: string | undefined): SessionChecker {
    // A message follows a held line (`partial`): that line was not the last.
    if (this.held !== undefined) this.flushHeld();
    const key = session ?? "";
    if (key === this.lastKey && this.lastChecker !== undefined) return this.lastChecker;
    let c = this.checkers.get(key);
    if (c === undefined) {
      const setup = this.setup;
      c = new SessionChecker({
        file: this.summary.file,
        bidirectional: this.format !== "jsonl",
        restartsExpected: this.format === "claude-log" || this.format === "har",
        defaultVersion: setup.defaultVersion,
        resolve: setup.resolve,
        maxIssues: this.options.maxIssuesPerMessage ?? 20,
        partial: this.options.partial === true,
        ...(this.options.onMessage === undefined ? {} : { onMessage: this.options.onMessage }),
        emit: this.count,
        ...(setup.forcedVersion === undefined ? {} : { forcedVersion: setup.forcedVersion }),
        ...(setup.schemaName === undefined ? {} : { schemaName: setup.schemaName }),
        ...(session === undefined ? {} : { session }),
      });
      for (let i = 0; i < this.lostLines; i++) c.lost();
      this.checkers.set(key, c);
    }
    this.lastKey = key;
    this.lastChecker = c;
    return c;
  }

  /** Uses the direction {@link jsonlDirection} chose, reporting a guess (`input/direction-guessed`). */
  useDirection(choice: DirectionChoice): Direction {
    if (choice.guessedAt !== undefined) {
      this.dispatch.problem(
        "input/direction-guessed",
        { line: choice.guessedAt },
        "plain JSONL without --direction whose first message is a response or a server-only request or notification: read as server→client (say it with --direction or FILE:s2c)",
      );
    }
    return choice.direction;
  }

  /** Records that the input could not be read (`input/unreadable`, exit code 2). */
  unreadable(err: unknown): void {
    const text = err instanceof Error ? err.message : String(err);
    this.summary.unreadable = text;
    this.count({ file: this.summary.file, line: 0, rule: "input/unreadable", severity: "error", message: `cannot read input: ${text}` });
  }

  /** Dispatches the messages of a whole HAR document; an input that is not HAR is unreadable. */
  har(text: string): void {
    const result = readHar(text, this.dispatch);
    this.summary.lines = result.entries;
    if (result.error !== undefined) this.unreadable(new Error(result.error));
  }

  /**
   * Ends the file: when `complete` (the input was read to its end), each session's end-of-session
   * findings; then the message, session and version totals. Returns the summary.
   */
  finish(complete: boolean): FileSummary {
    const summary = this.summary;
    const held = this.held;
    if (held !== undefined) {
      this.held = undefined;
      // Nothing parsed after it: the excerpt's last line, cut short.
      if (complete && held.messages === this.messagesSoFar()) this.cutShort(held.origin, "ends");
      else held.report();
    }
    for (const c of this.checkers.values()) {
      if (complete) c.finish();
      summary.messages += c.messages;
      summary.sessions += c.sessions;
      // (a session in which nothing parsed was checked against no version)
      if (c.parsed > 0) summary.protocolVersions.push(...(complete ? c.versions : [c.protocolVersion]));
    }
    summary.protocolVersions = [...new Set(summary.protocolVersions)];
    if (this.options.partial !== true && [...this.checkers.values()].some((c) => c.parsed > 0) && (this.cutFirst || [...this.checkers.values()].some((c) => c.looksLikeExcerpt)))
      summary.excerpt = true;
    const unsupported = this.unsupported;
    if (complete && unsupported !== undefined && summary.messages === 0 && summary.unreadable === undefined) {
      summary.unreadable = unsupported.message; // exit code 2
      this.count({ file: summary.file, line: unsupported.origin.line, rule: "input/unsupported-format", severity: "error", message: unsupported.message });
    }
    if (complete && summary.unreadable === undefined && summary.messages === 0) this.noMessages();
    return summary;
  }

  /**
   * An input read to its end that yielded no message: empty, only blank lines, or nothing in its
   * (forced or detected) format (only malformed capture records, only non-message log lines, a
   * HAR without MCP bodies). Reported as `input/no-messages` and counted as unreadable (exit
   * code 2), so that a wrong `--input-format` or an empty capture never passes.
   */
  private noMessages(): void {
    const s = this.summary;
    const how = this.options.inputFormat !== undefined ? "forced by --input-format" : "detected";
    let text: string;
    if (s.bytes === 0) text = "empty input";
    else if (s.format !== "har" && s.skipped >= s.lines && s.errors + s.warnings === 0) {
      text =
        this.format === "claude-log" ? `none of the ${s.lines} lines is a "Message from client/server" line of the claude-log format (${how})` : `only blank lines (${s.lines})`;
    } else if (s.format === "har") text = `no MCP request or response body in the ${s.lines} HAR entries (format ${how})`;
    else text = `nothing in the ${this.format} format (${how})`;
    const message = `no MCP messages found: ${text}`;
    s.unreadable = message;
    this.count({ file: s.file, line: 0, rule: "input/no-messages", severity: "error", message });
  }
}

interface Input {
  size: number | undefined;
  /** Not a regular file (stdin, a FIFO): a writer may pause in it (live.ts). */
  live: boolean;
  chunks: AsyncIterable<Buffer | string>;
}

/** What every input must be, for the `input/unreadable` messages of a path that names none. */
const INPUT_EXPECTED = "expected a capture, JSONL, Claude Desktop log or HAR file, or - for stdin";

/**
 * Opens an input (`-`: `stdin`).
 * @throws Error whose message names `path` and what is wrong with it ({@link openFailure}; a
 *   directory with a hint at the files in it)
 */
async function openInput(path: string, stdin: NodeJS.ReadableStream | undefined, chunkBytes: number): Promise<Input> {
  if (path === "-") return { size: undefined, live: true, chunks: (stdin ?? process.stdin) as AsyncIterable<Buffer | string> };
  let fh: FileHandle;
  try {
    fh = await open(path, "r");
  } catch (err) {
    throw new Error(openFailure(path, err, INPUT_EXPECTED), { cause: err });
  }
  try {
    const st = await fh.stat();
    if (st.isDirectory()) throw new Error(`${path} is a directory: ${INPUT_EXPECTED} (the files in it, e.g. ${join(path, "*.jsonl")})`);
    return { size: st.size, live: !st.isFile(), chunks: fh.createReadStream({ highWaterMark: chunkBytes }) };
  } catch (err) {
    await fh.close();
    throw err;
  }
}

/**
 * Whether a plain JSONL input (format detected) is one JSON document printed over several lines
 * (`jq .`, an editor, a message pasted from a log): its first non-blank line is `{` or `[` alone.
 * Its line ends are then read as what they are in JSON text, white space between tokens (a JSON
 * string holds no raw line end): the document is one message (or batch), on line 1.
 */
function prettyPrinted(head: string): boolean {
  const first = head
    .split("\n", 200)
    .find((l) => l.trim() !== "")
    ?.trim();
  return first === "{" || first === "[";
}

/** `chunk` with its CR and LF bytes as spaces (a copy). */
function oneLine(chunk: Buffer): Buffer {
  const out = Buffer.from(chunk);
  for (let i = 0; i < out.length; i++) if (out[i] === 0x0a || out[i] === 0x0d) out[i] = 0x20;
  return out;
}

const toBuffer = (c: Buffer | string): Buffer => (typeof c === "string" ? Buffer.from(c, "utf8") : c);

/**
 * Validates `path` on the calling thread. Findings go to `emit` as found (in file order,
 * end-of-session findings last). Never throws for I/O problems: an unreadable input yields an
 * `input/unreadable` finding and a summary with `unreadable` set (so does a schema definition
 * that turns out to be unusable half-way through).
 */
export async function validateFile(path: string, options: ValidateOptions, setup: ValidatorSetup, emit: (finding: Finding) => void): Promise<FileSummary> {
  const state = new FileState(path, options, setup, emit);
  const summary = state.summary;

  let input: Input;
  try {
    input = await openInput(path, options.stdin, Math.max(256, Math.floor(options.chunkBytes ?? CHUNK_BYTES)));
  } catch (err) {
    state.unreadable(err);
    return summary;
  }

  const progress = options.onProgress;
  const report = (): void => progress?.({ file: path, bytesRead: summary.bytes, totalBytes: input.size });
  let ok = true;
  let splitter: LineSplitter | undefined;
  let consumer: LineConsumer | undefined;
  try {
    const iter = input.chunks[Symbol.asyncIterator]();
    const head: Buffer[] = [];
    let headLen = 0;
    let ended = false;
    /** The next piece of the input, asked for already (the head loop may stop while it waits). */
    let next: Promise<IteratorResult<Buffer | string>> | undefined;
    // The format comes from the first 64 KiB, or from the whole lines of a live input that pauses
    // before that (live.ts); none is needed when it is given.
    let early: InputFormat | undefined;
    if (options.inputFormat === undefined || options.inputFormat === "har") {
      while (headLen < SNIFF_BYTES) {
        next = iter.next();
        if (input.live && headLen > 0 && !(await settlesWithin(next, IDLE_INPUT_MS))) {
          early = detectFormatEarly(Buffer.concat(head).toString("utf8"), path);
          if (early !== undefined) break;
        }
        const r = await next;
        next = undefined;
        if (r.done === true) {
          ended = true;
          break;
        }
        const b = toBuffer(r.value);
        head.push(b);
        headLen += b.length;
        summary.bytes += b.length;
        report();
      }
    }
    const format = options.inputFormat ?? early ?? detectFormat(Buffer.concat(head).toString("utf8", 0, Math.min(headLen, SNIFF_BYTES)), path);
    const notText = headLen > 0 ? notTextReason(Buffer.concat(head)) : undefined;
    if (notText !== undefined && format !== "har") throw new Error(notText); // (a HAR's size limit is checked first)
    state.format = format;
    summary.format = format;

    if (format === "har") {
      // A HAR is parsed as one string: refuse one over the limit before buffering all of it.
      if (input.size !== undefined && input.size > MAX_HAR_BYTES) throw harTooLarge(input.size);
      const parts = head;
      while (!ended) {
        const r = await (next ?? iter.next());
        next = undefined;
        if (r.done === true) break;
        const b = toBuffer(r.value);
        parts.push(b);
        summary.bytes += b.length;
        report();
        if (summary.bytes > MAX_HAR_BYTES) throw harTooLarge(summary.bytes, true);
      }
      state.har(harText(parts, summary.bytes));
      ok = summary.unreadable === undefined;
    } else {
      // (a direction is guessed only with the format detected, from the same head)
      const guess = format === "jsonl" && options.inputFormat === undefined;
      const headText = guess ? Buffer.concat(head).toString("utf8", 0, Math.min(headLen, SNIFF_BYTES)) : "";
      const pretty = guess && prettyPrinted(headText);
      const direction = guess ? state.useDirection(jsonlDirection(pretty ? headText.replace(/[\r\n]/g, " ") : headText, options, setup)) : (options.direction ?? "c2s");
      consumer = lineReader(format, state.dispatch, direction);
      const lines = fileLineSplitter(state, consumer, format, direction, options.maxLineBytes ?? VALIDATE_MAX_LINE_BYTES);
      splitter = lines;
      const push = pretty ? (b: Buffer): void => lines.push(oneLine(b)) : (b: Buffer): void => lines.push(b);
      for (const b of head) push(b);
      head.length = 0;
      if (!ended) {
        for (;;) {
          const r = await (next ?? iter.next());
          next = undefined;
          if (r.done === true) break;
          const b = toBuffer(r.value);
          summary.bytes += b.length;
          push(b);
          report();
        }
      }
      splitter.end();
      consumer.end?.();
      summary.lines = splitter.lineNo;
    }
  } catch (err) {
    // The lines read before the error were checked: they are counted.
    if (splitter !== undefined) summary.lines = splitter.lineNo;
    state.unreadable(err);
    ok = false;
  }
  return state.finish(ok);
}
