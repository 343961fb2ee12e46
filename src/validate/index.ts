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
import { CHUNK_BYTES, validateFile } from "./file.js";
import { ChunkProcessor } from "./chunk.js";
import { finishThreads, idleThreadsFor, InlinePool, MIN_CHUNKS_FOR_NEW_THREADS, runPipeline, startThreads, threadsWouldStart } from "./pipeline.js";
import { loadSchema, prepareValidators, type ValidatorSetup } from "./setup.js";
import { optionsForFile, ValidateUsageError, type FileSummary, type Finding, type ValidateOptions, type ValidateResult, type ValidateSummary } from "./types.js";

export * from "./types.js";
export { RULES, RULE_LIST, type RuleId, type RuleInfo } from "./rules.js";
export { LineSplitter } from "./lines.js";
export { closeIdleWorkers, IDLE_WORKERS_MS, MIN_CHUNKS_FOR_NEW_THREADS } from "./pipeline.js";
export { detectFormat } from "./readers/detect.js";
export { createReporter, renderReport, REPORT_FORMATS, type Reporter, type ReportFormat, type ReporterOptions } from "./report/index.js";

/**
 * Validates each of `paths` (`-` = `options.stdin` or process stdin) as its own session.
 *
 * Findings are collected into the result, or streamed to `options.onFinding` (then the result's
 * `findings` is empty). Files are processed in order; with `options.jobs > 1`, `jobs - 1` worker
 * threads and this thread parse and schema-check chunks of the inputs while this thread also
 * applies the session rules in order (see `pipeline.ts`); findings are the same and in the same
 * order as with one thread. The workers stay idle for the next call with the same options for
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
  // (the timeline needs every message's value, which --jobs rows do not carry)
  const jobs = options.onMessage !== undefined ? 1 : await usableJobs(paths, options);

  if (jobs > 1) {
    // The schema file is read once, here: the workers and this thread compile the same text even
    // if the file changes meanwhile. (Its path stays the label of the findings.)
    if (options.schemaPath !== undefined && options.schema === undefined) options = { ...options, schema: await loadSchema(options.schemaPath) };
    // Workers start loading their validators while this thread loads its own.
    const threads = startThreads(options, jobs);
    let setup: ValidatorSetup;
    try {
      setup = await prepareValidators(options); // rejects bad options before any input is read
    } catch (err) {
      await threads?.close();
      throw err;
    }
    threads?.useCallingThread(new ChunkProcessor(setup));
    try {
      const onFileDone = (file: FileSummary): void => {
        files.push(file);
        options.onFileDone?.(file);
      };
      await runPipeline(paths, options, setup, threads ?? new InlinePool(setup), jobs, onFinding, onFileDone, threads !== undefined);
    } finally {
      if (threads !== undefined) await finishThreads(threads);
    }
  } else {
    const setup = await prepareValidators(options); // rejects bad options before any input is read
    for (const [index, path] of paths.entries()) {
      const file = await validateFile(path, optionsForFile(options, index), setup, onFinding);
      files.push(file);
      options.onFileDone?.(file);
    }
  }
  return { findings, summary: summarize(files, performance.now() - started) };
}

/**
 * The threads worth starting for `options.jobs`: no more than the inputs have chunks (a regular
 * file of S bytes has at most ceil(S / chunkBytes); stdin, pipes and other streams count as
 * unbounded) and no more than `os.availableParallelism()`; at least 1. One when new worker
 * threads would have to be started for inputs of fewer than {@link MIN_CHUNKS_FOR_NEW_THREADS}
 * chunks (idle workers of an earlier run with the same options are used whatever the size).
 */
export async function usableJobs(paths: readonly string[], options: ValidateOptions): Promise<number> {
  const wanted = Math.max(1, Math.floor(options.jobs ?? 1));
  if (wanted === 1) return 1;
  const chunkBytes = Math.max(256, Math.floor(options.chunkBytes ?? CHUNK_BYTES));
  // Counted up to what decides: `wanted`, and whether new worker threads would pay off.
  const enough = Math.max(wanted, MIN_CHUNKS_FOR_NEW_THREADS);
  let chunks = 0;
  for (const path of paths) {
    if (chunks >= enough) break;
    if (path === "-") {
      chunks = enough;
      break;
    }
    try {
      const st = await stat(path);
      chunks += st.isFile() ? Math.max(1, Math.ceil(st.size / chunkBytes)) : wanted;
    } catch {
      chunks += 1; // unreadable: reported as such, nothing to share out
    }
  }
  const jobs = Math.max(1, Math.min(wanted, chunks, availableParallelism()));
  // New worker threads cost ~0.1 s of start-up and compile their code cold: for a smaller input
  // they make a one-shot run slower than one thread (BENCHMARKS.md, "validate"). Idle warm ones
  // (an earlier run in this process) are used whatever the size.
  if (jobs > 1 && chunks < MIN_CHUNKS_FOR_NEW_THREADS && threadsWouldStart(options, jobs) && !idleThreadsFor(options, jobs)) return 1;
  return jobs;
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
