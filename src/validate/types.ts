/**
 * Shared shapes of the offline validator (`orchestra-stdio validate`): findings, options and
 * summaries. Protocol shapes (directions, schema issues, validators) come from the MCP validation
 * facade in `src/mcp/validation.ts`; nothing here re-declares an MCP message shape.
 */
import type { Direction, ProtocolValidators } from "../mcp/validation.js";

export type { Direction, ProtocolValidators };

/** `error` breaks a MUST of the spec (or the file cannot be read); `warning` a SHOULD or a doubt. */
export type Severity = "error" | "warning";

/** Input formats the readers understand; `auto` sniffs each file's head (see `readers/detect.ts`). */
export type InputFormat = "capture" | "jsonl" | "claude-log" | "har";

/** A JSON-RPC request id as it appeared on the wire (`null` only for malformed traffic). */
export type WireId = string | number | null;

/**
 * One problem found in a traffic file.
 *
 * - `file`: the path as given (`-` for stdin);
 * - `line`: 1-based line of the file the message came from. For HAR input this is the 1-based
 *   entry index in `log.entries` (the HAR is parsed whole) and `location` says which part;
 *   0 for file-level findings (`input/unreadable`);
 * - `direction`: `c2s` (client→server) or `s2c`; absent for file-level findings;
 * - `id` / `method`: of the message concerned, when known (for a response, `method` is the
 *   method of the request it answers);
 * - `rule`: stable rule id, see {@link RULES} in `rules.ts`;
 * - `pointer`: RFC 6901 JSON pointer into the JSON-RPC message (not into the capture record);
 * - `session`: the server name for Claude Desktop logs (one session per `[server-name]`), the
 *   `Mcp-Session-Id` for HAR input that has one, and
 *   `#2`, `#3`... suffixes when a session restarts with a new `initialize`.
 */
export interface Finding {
  file: string;
  line: number;
  direction?: Direction;
  id?: WireId;
  method?: string;
  rule: string;
  severity: Severity;
  pointer?: string;
  message: string;
  session?: string;
  location?: string;
}

/**
 * One message as the HTML report's timeline shows it (`ValidateOptions.onMessage`): where it is
 * (`file`, `session`, `line`, `location`, `batch`: the element's pointer in a batch), its
 * direction, what it is (`kind`; `invalid`: not a JSON-RPC message or not JSON), the `method` of a
 * request or notification, its `id`, the time the input gives it (`ts`, ISO-8601, when known) and
 * its JSON `text` (the raw text for a line that is not JSON).
 */
export interface TimelineMessage {
  file: string;
  session?: string;
  line: number;
  location?: string;
  batch?: string;
  direction: Direction;
  kind: "request" | "notification" | "result" | "error" | "invalid";
  method?: string;
  id?: WireId;
  ts?: string;
  text: string;
  /** A response: the request the checker paired it with (its line, HAR location and batch pointer). */
  answers?: { line: number; location?: string; batch?: string };
}

/** Per-file totals, reported after the file's last finding. */
export interface FileSummary {
  file: string;
  /** The format actually used (after auto-detection). Absent when the file could not be read. */
  format?: InputFormat;
  /** Bytes read from the file. */
  bytes: number;
  /** Physical lines seen (HAR: entries seen). */
  lines: number;
  /** JSON-RPC messages checked (a batch counts each element). */
  messages: number;
  /** Lines ignored by the reader: non-message log lines, blank lines, non-MCP HAR entries. */
  skipped: number;
  errors: number;
  warnings: number;
  /** Protocol version(s) the file was checked against, in order of sessions. */
  protocolVersions: string[];
  /** Number of sessions seen (Claude logs: per server and restart; others: restarts + 1). */
  sessions: number;
  /** Set when the file could not be read; the text of the I/O error. */
  unreadable?: string;
  /**
   * Set (without `partial`) when the file looks like an excerpt of a longer session: it starts
   * after the initialize request, answers requests it does not hold, or its first line is cut
   * short. The text report then suggests `--partial`.
   */
  excerpt?: true;
}

/** Totals over all files of one run. */
export interface ValidateSummary {
  files: FileSummary[];
  errors: number;
  warnings: number;
  messages: number;
  bytes: number;
  /** Files that could not be read (exit code 2). */
  unreadable: number;
  /** Wall-clock duration of the run, milliseconds. */
  durationMs: number;
}

/** Result of {@link validateFiles}. `findings` is empty when `onFinding` was given. */
export interface ValidateResult {
  findings: Finding[];
  summary: ValidateSummary;
}

/** Progress of reading one file; `totalBytes` is undefined for stdin. */
export interface ProgressEvent {
  file: string;
  bytesRead: number;
  totalBytes: number | undefined;
}

/** Maps a protocol version to its validators; undefined when the version is unknown. */
export type ValidatorResolver = (version: string) => ProtocolValidators | undefined;

/**
 * Options of {@link validateFiles}. All optional.
 *
 * - `inputFormat`: force a format for every file instead of sniffing;
 * - `direction`: direction of plain JSONL input (default: `c2s`, or, when the format is
 *   detected, `s2c` with an `input/direction-guessed` warning when the file's first message is
 *   a response, or a request or notification only a server sends);
 * - `perFile`: per input (same index as `paths`), an `inputFormat` and/or `direction` that
 *   replace the run-wide ones for that file (the CLI's `file.jsonl:s2c`);
 * - `onMessage`: called for every message checked, in order (the HTML report's timeline); costs
 *   a `JSON.stringify` per message, and runs on one thread (`jobs` is then 1);
 * - `partial`: the inputs are excerpts that may begin and end mid-session (see
 *   `CheckerContext.partial`); a first or last line cut short is an `input/cut-short` warning;
 * - `protocolVersion`: check against this version whatever the initialize exchange says
 *   (a differing negotiated version gives `session/version-mismatch`); also used when no
 *   initialize exchange is seen. Must be a supported version (or any label with `schema`);
 * - `schema`: an MCP `schema.json` object, compiled at run time and used for every version;
 * - `schemaPath`: same, read from a file (used by `--jobs`, whose workers reload it);
 * - `validators`: dependency injection for tests and embedding: a resolver and the version to
 *   assume before the initialize exchange; overrides the MCP validation facade;
 * - `onFinding`: stream findings instead of collecting them into `ValidateResult.findings`;
 * - `onFileDone`: called once per file, in input order, after the file's last finding;
 * - `onProgress`: called after each chunk read (about every 1 MiB);
 * - `stdin`: the stream read for the path `-` (default `process.stdin`);
 * - `maxLineBytes`: longer lines become `input/line-too-long` and are skipped (default 64 MiB);
 * - `maxIssuesPerMessage`: schema issues reported per message (default 20);
 * - `jobs`: threads that validate inputs at once — the calling thread and up to `jobs - 1` worker
 *   threads — one whole file per thread, taken in input order (stdin on the calling thread);
 *   findings and summaries come out in input order, the same as with one thread (see
 *   `jobs.ts`). Worker threads are used from the compiled code only and not with injected
 *   `validators` or `onMessage`; otherwise the files run one after the other. Capped at the number
 *   of inputs and at `os.availableParallelism()`; new worker threads only for inputs of at least
 *   `minThreadBytes` (see `usableJobs`). Finished workers stay idle for `IDLE_WORKERS_MS` for the
 *   next call with the same options (they never keep the process alive; `closeIdleWorkers`);
 * - `minThreadBytes`: the regular files after the first must hold this many bytes together for
 *   new worker threads to be started (default `MIN_BYTES_FOR_NEW_THREADS`, 16 MiB); a tuning and
 *   testing knob;
 * - `chunkBytes`: size of the reads from an input file (default 1 MiB, at least 256 bytes); a
 *   tuning and testing knob.
 */
export interface ValidateOptions {
  inputFormat?: InputFormat;
  direction?: Direction;
  perFile?: ReadonlyArray<FileOptions | undefined>;
  partial?: boolean;
  onMessage?: (message: TimelineMessage) => void;
  protocolVersion?: string;
  schema?: object;
  schemaPath?: string;
  validators?: { resolve: ValidatorResolver; latest: string };
  onFinding?: (finding: Finding) => void;
  onFileDone?: (file: FileSummary) => void;
  onProgress?: (event: ProgressEvent) => void;
  stdin?: NodeJS.ReadableStream;
  maxLineBytes?: number;
  maxIssuesPerMessage?: number;
  jobs?: number;
  minThreadBytes?: number;
  chunkBytes?: number;
}

/** Options of one input that replace the run-wide ones (`ValidateOptions.perFile`). */
export interface FileOptions {
  inputFormat?: InputFormat;
  direction?: Direction;
}

/** `options` with the per-file options of input `index` applied (and `perFile` left out). */
export function optionsForFile(options: ValidateOptions, index: number): ValidateOptions {
  const own = options.perFile?.[index];
  if (own === undefined) return options;
  return { ...options, ...own };
}

/** A thrown error for bad options (unknown protocol version, unreadable schema): exit code 2. */
export class ValidateUsageError extends Error {
  override readonly name = "ValidateUsageError";
}
