/**
 * `--jobs N`: several inputs validated at once, one whole file per thread. The calling thread and
 * up to N − 1 worker threads (`worker.ts`) each run the one line path (`validateFile` in
 * `file.ts`) on the next input not yet taken, in input order; stdin (`-`) is always read by the
 * calling thread. A file is never split, so its findings are exactly those of a one-thread run.
 *
 * Findings and file summaries are handed on in input order ({@link InOrder}): the earliest
 * unfinished file's findings as they are found, a later file's held until every earlier file is
 * done (memory: the findings of the files finished ahead of their turn).
 *
 * Worker threads exist only for the compiled code (`dist/`, where `worker.js` sits next to this
 * module) and for validators a thread can rebuild (the built-in ones or a schema; injected
 * functions cannot be sent). Otherwise the files run one after the other on the calling thread.
 * Finished workers stay idle for {@link IDLE_WORKERS_MS} for the next run with the same set-up;
 * idle workers never keep the process alive ({@link closeIdleWorkers} stops them at once).
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { validateFile } from "./file.js";
import type { ValidatorSetup } from "./setup.js";
import { optionsForFile, ValidateUsageError, type FileOptions, type FileSummary, type Finding, type ProgressEvent, type ValidateOptions } from "./types.js";

/** What a worker is started with: the options that decide its validators and checks. */
export interface WorkerInit {
  protocolVersion?: string;
  schema?: object;
  schemaPath?: string;
  partial?: boolean;
  maxLineBytes?: number;
  maxIssuesPerMessage?: number;
  chunkBytes?: number;
  /** Whether to post {@link ProgressEvent}s. */
  progress?: boolean;
}

/** A file for a worker: its index in the run and its format and direction (the run's, or its own). */
export interface WorkerRequest {
  index: number;
  path: string;
  file: FileOptions;
}

/** What a worker posts back: findings (batched, in file order), progress, the summary or a failure. */
export type WorkerReply =
  | { type: "findings"; index: number; findings: Finding[] }
  | { type: "progress"; index: number; event: ProgressEvent }
  | { type: "done"; index: number; summary: FileSummary }
  | { type: "failed"; index: number; error: string; usage: boolean };

/** How long finished workers wait for the next run before they are stopped, ms. */
export const IDLE_WORKERS_MS = 5000;

/**
 * New worker threads are started only when the regular files after the first hold at least this
 * many bytes together (16 MiB): a thread's start-up (its code and validators compiled cold) costs
 * more than it saves on less. Idle warm workers are used whatever the size.
 */
export const MIN_BYTES_FOR_NEW_THREADS = 16 * 1024 * 1024;

/**
 * Diagnostics (tests, benchmarks): worker threads this process has started so far (idle ones are
 * reused), and how many files of the last run the workers validated.
 */
export const threadStats = { workersStarted: 0, filesOnWorkers: 0 };

/** The compiled worker script, when this module runs from `dist/`; undefined from sources. */
function workerScript(): URL | undefined {
  const script = new URL("./worker.js", import.meta.url);
  return import.meta.url.endsWith(".js") && existsSync(fileURLToPath(script)) ? script : undefined;
}

/** True when worker threads can serve `options` (compiled code; built-in or schema validators). */
export function threadsPossible(options: ValidateOptions): boolean {
  return options.validators === undefined && options.onMessage === undefined && workerScript() !== undefined;
}

/** The input format and direction of `options`, as a worker takes them per file. */
function fileOptions(options: ValidateOptions): FileOptions {
  const file: FileOptions = {};
  if (options.inputFormat !== undefined) file.inputFormat = options.inputFormat;
  if (options.direction !== undefined) file.direction = options.direction;
  return file;
}

/** The set-up a pool is started with; pools are kept idle only for the same one. */
function initFor(options: ValidateOptions): WorkerInit {
  const init: WorkerInit = {};
  for (const key of ["protocolVersion", "schema", "schemaPath", "partial", "maxLineBytes", "maxIssuesPerMessage", "chunkBytes"] as const) {
    if (options[key] !== undefined) (init as Record<string, unknown>)[key] = options[key];
  }
  if (options.onProgress !== undefined) init.progress = true;
  return init;
}

/** One worker thread and the file it is validating. */
interface Slot {
  worker: Worker;
  busy: number | undefined;
}

/** Worker threads started with one {@link WorkerInit}. */
class Pool {
  readonly slots: Slot[] = [];
  onReply: (reply: WorkerReply) => void = () => undefined;
  onExit: (err: Error) => void = () => undefined;

  constructor(
    readonly key: string,
    private readonly init: WorkerInit,
  ) {}

  /** Grows the pool to `n` workers. */
  grow(n: number): void {
    while (this.slots.length < n) {
      const worker = new Worker(workerScript()!, { workerData: this.init });
      threadStats.workersStarted++;
      const slot: Slot = { worker, busy: undefined };
      worker.on("message", (reply: WorkerReply) => {
        if (reply.type === "done" || reply.type === "failed") slot.busy = undefined;
        this.onReply(reply);
      });
      worker.on("error", (err) => this.onExit(err));
      worker.on("exit", (code) => {
        const i = this.slots.indexOf(slot);
        if (i >= 0) this.slots.splice(i, 1);
        this.onExit(new Error(`validate worker exited (code ${code})`));
      });
      this.slots.push(slot);
    }
  }

  ref(on: boolean): void {
    for (const s of this.slots) {
      if (on) s.worker.ref();
      else s.worker.unref();
    }
  }

  async close(): Promise<void> {
    const slots = this.slots.splice(0);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }
}

/** The workers of the last finished run, kept for the next one with the same set-up. */
let idle: { pool: Pool; timer: NodeJS.Timeout } | undefined;

/** Stops the idle workers of earlier runs now (otherwise they stop after {@link IDLE_WORKERS_MS}). */
export async function closeIdleWorkers(): Promise<void> {
  const was = idle;
  idle = undefined;
  if (was === undefined) return;
  clearTimeout(was.timer);
  await was.pool.close();
}

/** True when idle workers of an earlier run can serve a run with `options` now. */
export function idleWorkersFor(options: ValidateOptions): boolean {
  return idle !== undefined && idle.pool.key === JSON.stringify(initFor(options)) && idle.pool.slots.length > 0;
}

function takePool(options: ValidateOptions): Pool {
  const init = initFor(options);
  const key = JSON.stringify(init);
  if (idle !== undefined && idle.pool.key === key) {
    const { pool, timer } = idle;
    idle = undefined;
    clearTimeout(timer);
    pool.ref(true);
    return pool;
  }
  void closeIdleWorkers();
  return new Pool(key, init);
}

function keepIdle(pool: Pool): void {
  if (pool.slots.length === 0) return;
  void closeIdleWorkers();
  pool.ref(false);
  const timer = setTimeout(() => void closeIdleWorkers(), IDLE_WORKERS_MS);
  timer.unref();
  idle = { pool, timer };
}

/**
 * Hands findings and file summaries on in input order: those of file `head` at once, those of a
 * later file when every earlier one is done.
 */
class InOrder {
  private head = 0;
  private readonly held = new Map<number, { findings: Finding[]; summary?: FileSummary }>();

  constructor(
    private readonly onFinding: (f: Finding) => void,
    private readonly onFileDone: (file: FileSummary) => void,
  ) {}

  finding(index: number, f: Finding): void {
    if (index === this.head) this.onFinding(f);
    else this.heldOf(index).findings.push(f);
  }

  done(index: number, summary: FileSummary): void {
    if (index !== this.head) {
      this.heldOf(index).summary = summary;
      return;
    }
    this.onFileDone(summary);
    this.head++;
    for (let h = this.held.get(this.head); h !== undefined; h = this.held.get(this.head)) {
      for (const f of h.findings) this.onFinding(f);
      h.findings.length = 0;
      if (h.summary === undefined) return; // the new head is still running: its findings now flow
      this.held.delete(this.head);
      this.onFileDone(h.summary);
      this.head++;
    }
  }

  private heldOf(index: number): { findings: Finding[]; summary?: FileSummary } {
    let h = this.held.get(index);
    if (h === undefined) this.held.set(index, (h = { findings: [] }));
    return h;
  }
}

/** The worker threads a run of `paths` on `threads` threads uses: none from sources or with injected validators (the calling thread then takes every file). */
function workersFor(paths: readonly string[], options: ValidateOptions, threads: number): number {
  return threadsPossible(options) ? Math.min(threads - 1, paths.filter((p) => p !== "-").length) : 0;
}

/** Worker threads started ahead of a run ({@link startWorkers}), for {@link validateInParallel}. */
export interface StartedWorkers {
  readonly pool: Pool;
  /** Stops them (the run did not happen: its options were rejected). */
  close(): Promise<void>;
}

/**
 * Starts (or takes from the idle ones) the worker threads a run of `paths` on `threads` threads
 * will use, so that their start-up (loading the code and the validators) overlaps the calling
 * thread's own preparation; undefined when the run uses none. Pass the result to
 * {@link validateInParallel}, or close it.
 */
export function startWorkers(paths: readonly string[], options: ValidateOptions, threads: number): StartedWorkers | undefined {
  const workers = workersFor(paths, options, threads);
  if (workers === 0) return undefined;
  const pool = takePool(options);
  pool.grow(workers);
  return { pool, close: () => pool.close() };
}

/**
 * Validates `paths` on `threads` threads (the calling one included; 1: the files one after the
 * other on the calling thread), one file per thread at a time; findings go to `onFinding` and summaries to `onFileDone` in input order, as with one
 * thread. `started`: the workers {@link startWorkers} started for this run (else they are started
 * here). A worker that fails makes the run fail with its error (a {@link ValidateUsageError}
 * when it was one).
 */
export async function validateInParallel(
  paths: readonly string[],
  options: ValidateOptions,
  setup: ValidatorSetup,
  threads: number,
  onFinding: (f: Finding) => void,
  onFileDone: (file: FileSummary) => void,
  started: StartedWorkers | undefined = startWorkers(paths, options, threads),
): Promise<void> {
  if (started === undefined) {
    for (const [index, path] of paths.entries()) onFileDone(await validateFile(path, optionsForFile(options, index), setup, onFinding));
    return;
  }
  const order = new InOrder(onFinding, onFileDone);
  const pool = started.pool;
  threadStats.filesOnWorkers = 0;
  const taken = new Array<boolean>(paths.length).fill(false);
  let failure: Error | undefined;
  let wake: () => void = () => undefined;
  let running = 0;
  const settled = (): void => {
    running--;
    wake();
  };

  const dispatch = (): void => {
    for (const slot of pool.slots) {
      if (slot.busy !== undefined || failure !== undefined) continue;
      const index = paths.findIndex((p, i) => !taken[i] && p !== "-");
      if (index < 0) return;
      taken[index] = true;
      slot.busy = index;
      running++;
      threadStats.filesOnWorkers++;
      slot.worker.postMessage({ index, path: paths[index]!, file: fileOptions(optionsForFile(options, index)) } satisfies WorkerRequest);
    }
  };
  pool.onReply = (reply) => {
    if (reply.type === "findings") for (const f of reply.findings) order.finding(reply.index, f);
    else if (reply.type === "progress") options.onProgress?.(reply.event);
    else if (reply.type === "done") {
      order.done(reply.index, reply.summary);
      settled();
      dispatch();
    } else {
      failure ??= reply.usage ? new ValidateUsageError(reply.error) : new Error(reply.error);
      settled();
    }
  };
  pool.onExit = (err) => {
    failure ??= err;
    running = 0;
    wake();
  };
  dispatch();

  // The calling thread takes the next file no thread has taken (stdin always).
  for (;;) {
    if (failure !== undefined) break;
    const index = taken.findIndex((t) => !t);
    if (index < 0) break;
    taken[index] = true;
    const summary = await validateFile(paths[index]!, optionsForFile(options, index), setup, (f) => order.finding(index, f));
    order.done(index, summary);
    dispatch();
  }
  while (running > 0 && failure === undefined) await new Promise<void>((resolve) => (wake = resolve));
  if (failure !== undefined) {
    await pool.close();
    throw failure;
  }
  keepIdle(pool);
}
