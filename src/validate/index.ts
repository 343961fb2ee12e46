/**
 * The offline MCP traffic validator as a library.
 *
 *   const { findings, summary } = await validateFiles(["session.capture.jsonl"], { format... });
 *   process.exitCode = exitCodeFor(summary);
 *
 * Each input file is its own session (Claude logs: one per server). Inputs, rules and reporters
 * are described in `readers/`, `rules.ts` and `report/`.
 */
import { stat } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { performance } from "node:perf_hooks";
import { idleWorkersFor, MIN_BYTES_FOR_NEW_THREADS, startWorkers, threadsPossible, validateInParallel } from "./jobs.js";
import { loadSchema, prepareValidators } from "./setup.js";
import { ValidateUsageError, type FileSummary, type Finding, type ValidateOptions, type ValidateResult, type ValidateSummary } from "./types.js";

export * from "./types.js";
export { RULES, RULE_LIST, type RuleId, type RuleInfo } from "./rules.js";
export { textLineSplitter, VALIDATE_MAX_LINE_BYTES } from "./lines.js";
export { closeIdleWorkers, IDLE_WORKERS_MS, MIN_BYTES_FOR_NEW_THREADS } from "./jobs.js";
export { detectFormat } from "./readers/detect.js";
export { createReporter, renderReport, REPORT_FORMATS, type Reporter, type ReportFormat, type ReporterOptions } from "./report/index.js";

/**
 * Validates each of `paths` (`-` = `options.stdin` or process stdin) as its own session.
 *
 * Findings are collected into the result, or streamed to `options.onFinding` (then the result's
 * `findings` is empty). Files are reported in input order; with `options.jobs > 1`, up to that
 * many files are validated at once, one per thread (see `jobs.ts`), with the same findings in the
 * same order as with one thread. The workers stay idle for the next call with the same options for
 * `IDLE_WORKERS_MS` without keeping the process alive (`closeIdleWorkers` stops them).
 *
 * @returns all findings (unless streamed) and the run's summary.
 * @throws ValidateUsageError for an unsupported `protocolVersion`, an unusable schema, or `-`
 *   given more than once. I/O
 *   errors on inputs never throw: they become `input/unreadable` findings (exit code 2).
 */
export async function validateFiles(paths: readonly string[], given: ValidateOptions = {}): Promise<ValidateResult> {
  const started = performance.now();
  let options = given;
  const findings: Finding[] = [];
  const onFinding = options.onFinding ?? ((f: Finding) => void findings.push(f));
  const files: FileSummary[] = [];
  // A second `-` would read an exhausted stdin and report it as an empty input.
  if (paths.filter((p) => p === "-").length > 1) throw new ValidateUsageError("- (stdin) can be given only once");
  const onFileDone = (file: FileSummary): void => {
    files.push(file);
    options.onFileDone?.(file);
  };
  const jobs = await usableJobs(paths, options);
  // The schema file is read once, here: the workers and this thread compile the same text even if
  // the file changes meanwhile. (Its path stays the label of the findings.)
  if (jobs > 1 && options.schemaPath !== undefined && options.schema === undefined) options = { ...options, schema: await loadSchema(options.schemaPath) };
  // The workers start loading while this thread prepares its validators.
  const workers = startWorkers(paths, options, jobs);
  let setup;
  try {
    setup = await prepareValidators(options); // rejects bad options before any input is read
  } catch (err) {
    await workers?.close();
    throw err;
  }
  await validateInParallel(paths, options, setup, jobs, onFinding, onFileDone, workers);
  return { findings, summary: summarize(files, performance.now() - started) };
}

/**
 * The threads worth using for `options.jobs`: no more than there are inputs (a file is never
 * split) and than `os.availableParallelism()`, at least 1; and 1 when new worker threads would
 * have to be started (see `threadsPossible`) for fewer than `options.minThreadBytes`
 * ({@link MIN_BYTES_FOR_NEW_THREADS}) bytes of regular files after the first (idle warm workers
 * of an earlier run are used whatever the size).
 */
export async function usableJobs(paths: readonly string[], options: ValidateOptions): Promise<number> {
  const wanted = Math.max(1, Math.floor(options.jobs ?? 1));
  const jobs = Math.max(1, Math.min(wanted, paths.length, availableParallelism()));
  if (jobs === 1 || !threadsPossible(options) || idleWorkersFor(options)) return jobs;
  const minBytes = options.minThreadBytes ?? MIN_BYTES_FOR_NEW_THREADS;
  let bytes = 0;
  for (const path of paths.slice(1)) {
    if (path === "-" || bytes >= minBytes) continue;
    try {
      const st = await stat(path);
      if (st.isFile()) bytes += st.size;
    } catch {
      // unreadable: reported as such, nothing to share out
    }
  }
  return bytes >= minBytes ? jobs : 1;
}

/** Adds up per-file summaries. */
export function summarize(files: FileSummary[], durationMs: number): ValidateSummary {
  const s: ValidateSummary = { files, errors: 0, warnings: 0, messages: 0, bytes: 0, unreadable: 0, durationMs };
  for (const f of files) {
    s.errors += f.errors;
    s.warnings += f.warnings;
    s.messages += f.messages;
    s.bytes += f.bytes;
    if (f.unreadable !== undefined) s.unreadable++;
  }
  return s;
}

/** The CLI exit code for a run: 2 if any input was unreadable, else 1 if any error, else 0. */
export function exitCodeFor(summary: ValidateSummary): 0 | 1 | 2 {
  if (summary.unreadable > 0) return 2;
  return summary.errors > 0 ? 1 : 0;
}
