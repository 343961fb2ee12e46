/**
 * Validates one input (a path, or `-` for stdin): opens it, sniffs the format, streams it through
 * the {@link LineSplitter} and the format's reader into {@link SessionChecker}s, and returns the
 * file's {@link FileSummary}. Line formats are read in 1 MiB chunks with flat memory; HAR files are
 * read whole (see `readers/har.ts`).
 */
import { open } from "node:fs/promises";
import { SessionChecker } from "./checker.js";
import { LineSplitter } from "./lines.js";
import { captureReader } from "./readers/capture.js";
import { claudeLogReader } from "./readers/claude-log.js";
import { detectFormat, SNIFF_BYTES } from "./readers/detect.js";
import type { Dispatch, LineConsumer } from "./readers/dispatch.js";
import { readHar } from "./readers/har.js";
import { jsonlReader } from "./readers/jsonl.js";
import { RULES } from "./rules.js";
import type { ValidatorSetup } from "./setup.js";
import type { FileSummary, Finding, InputFormat, ValidateOptions } from "./types.js";

/** Chunk size for file reads, bytes. */
export const CHUNK_BYTES = 1 << 20;

interface Input {
  size: number | undefined;
  chunks: AsyncIterable<Buffer | string>;
}

async function openInput(path: string, stdin: NodeJS.ReadableStream | undefined): Promise<Input> {
  if (path === "-") return { size: undefined, chunks: (stdin ?? process.stdin) as AsyncIterable<Buffer | string> };
  const fh = await open(path, "r");
  try {
    const st = await fh.stat();
    if (st.isDirectory()) throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${path}'`), { code: "EISDIR" });
    return { size: st.size, chunks: fh.createReadStream({ highWaterMark: CHUNK_BYTES }) };
  } catch (err) {
    await fh.close();
    throw err;
  }
}

const toBuffer = (c: Buffer | string): Buffer => (typeof c === "string" ? Buffer.from(c, "utf8") : c);

/**
 * Validates `path`. Findings go to `emit` as found (in file order, end-of-session findings last).
 * Never throws for I/O problems: an unreadable input yields an `input/unreadable` finding and a
 * summary with `unreadable` set.
 */
export async function validateFile(
  path: string,
  options: ValidateOptions,
  setup: ValidatorSetup,
  emit: (finding: Finding) => void,
): Promise<FileSummary> {
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
  const count = (f: Finding): void => {
    if (f.severity === "error") summary.errors++;
    else summary.warnings++;
    emit(f);
  };

  let input: Input;
  try {
    input = await openInput(path, options.stdin);
  } catch (err) {
    unreadable(summary, err, count);
    return summary;
  }

  const checkers = new Map<string, SessionChecker>();
  let format: InputFormat = "jsonl";
  const checkerFor = (session: string | undefined): SessionChecker => {
    const key = session ?? "";
    let c = checkers.get(key);
    if (c === undefined) {
      const ctx = {
        file: path,
        bidirectional: format !== "jsonl",
        restartsExpected: format === "claude-log" || format === "har",
        defaultVersion: setup.defaultVersion,
        resolve: setup.resolve,
        maxIssues: options.maxIssuesPerMessage ?? 20,
        emit: count,
        ...(setup.forcedVersion === undefined ? {} : { forcedVersion: setup.forcedVersion }),
        ...(session === undefined ? {} : { session }),
      };
      c = new SessionChecker(ctx);
      checkers.set(key, c);
    }
    return c;
  };
  const dispatch: Dispatch = {
    message: (value, origin, dir, session) => checkerFor(session).message(value, origin, dir),
    unparsable: (raw, error, origin, dir, session) => checkerFor(session).unparsable(raw, error, origin, dir),
    problem: (rule, origin, message) => {
      const f: Finding = { file: path, line: origin.line, rule, severity: RULES[rule].severity, message };
      if (origin.location !== undefined) f.location = origin.location;
      count(f);
    },
    skip: () => {
      summary.skipped++;
    },
  };

  const progress = options.onProgress;
  const report = (): void => progress?.({ file: path, bytesRead: summary.bytes, totalBytes: input.size });
  let ok = true;
  try {
    const iter = input.chunks[Symbol.asyncIterator]();
    const head: Buffer[] = [];
    let headLen = 0;
    let ended = false;
    while (headLen < SNIFF_BYTES) {
      const r = await iter.next();
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
    format = options.inputFormat ?? detectFormat(Buffer.concat(head).toString("utf8", 0, Math.min(headLen, SNIFF_BYTES)), path);
    summary.format = format;

    if (format === "har") {
      const parts = head;
      while (!ended) {
        const r = await iter.next();
        if (r.done === true) break;
        const b = toBuffer(r.value);
        parts.push(b);
        summary.bytes += b.length;
        report();
      }
      const result = readHar(Buffer.concat(parts).toString("utf8"), dispatch);
      summary.lines = result.entries;
      if (result.error !== undefined) {
        unreadable(summary, new Error(result.error), count);
        ok = false;
      }
    } else {
      const dir = options.direction ?? "c2s";
      const consumer: LineConsumer =
        format === "capture" ? captureReader(dispatch) : format === "claude-log" ? claudeLogReader(dispatch) : jsonlReader(dispatch, dir);
      const maxLine = options.maxLineBytes ?? 64 * 1024 * 1024;
      const splitter = new LineSplitter(
        (text, no) => consumer.line(text, no),
        maxLine,
        (no, bytes) => dispatch.problem("input/line-too-long", { line: no }, `line of ${bytes} bytes exceeds the ${maxLine}-byte limit; skipped`),
      );
      for (const b of head) splitter.push(b);
      head.length = 0;
      if (!ended) {
        for (;;) {
          const r = await iter.next();
          if (r.done === true) break;
          const b = toBuffer(r.value);
          summary.bytes += b.length;
          splitter.push(b);
          report();
        }
      }
      splitter.end();
      summary.lines = splitter.lineNo;
    }
  } catch (err) {
    unreadable(summary, err, count);
    ok = false;
  }

  for (const c of checkers.values()) {
    if (ok) c.finish();
    summary.messages += c.messages;
    summary.sessions += c.sessions;
    summary.protocolVersions.push(...(ok ? c.versions : [c.protocolVersion]));
  }
  summary.protocolVersions = [...new Set(summary.protocolVersions)];
  return summary;
}

function unreadable(summary: FileSummary, err: unknown, count: (f: Finding) => void): void {
  const text = err instanceof Error ? err.message : String(err);
  summary.unreadable = text;
  count({ file: summary.file, line: 0, rule: "input/unreadable", severity: "error", message: `cannot read input: ${text}` });
}
