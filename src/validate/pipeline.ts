/**
 * `--jobs N`: validation of one or more inputs by N threads working on chunks of lines: N − 1
 * worker threads and the main thread, which also applies the session rules.
 *
 * Regular files are shared by chunk index (1 MiB byte ranges; a chunk is the lines that start in
 * its range): the main thread goes through the chunks in order, validating each free one itself
 * exactly as without `--jobs` (no rows) and applying the rows of each one a worker took; the
 * workers take chunks a few ahead of the main thread, and near the end from the back, each claim
 * one atomic operation on a shared table (see `RangeJob` in `chunk.ts`). The split thus follows
 * the threads' real speeds (a worker still loading takes part when it is ready, or not at all in
 * a small file), and the main thread rarely waits.
 *
 * Streams (stdin, pipes) go through two loops on the main thread: the producer cuts them into
 * 1 MiB buffers at their last newline (transferred, not copied) and hands them to a ready worker
 * with room, or to the main thread when its event loop is free (see {@link ThreadPool}); at most
 * `2N + 2` chunks are in flight, so memory stays flat. (A pool without the main thread's help
 * treats regular files that way too, by byte ranges the workers read themselves.) A chunk is
 * decoded, parsed and schema-checked into one row of numbers per line (see `chunk.ts`). The
 * consumer takes the chunks back in file order and runs the session rules on the rows, so
 * findings come out in the same order, with the same content, as without `--jobs`; the rare
 * lines the rows cannot describe are re-read and checked on the main thread.
 *
 * Worker threads outlive a run: {@link finishThreads} keeps them idle (unreferenced, so they
 * never hold the process) for the next run with the same set-up, for {@link IDLE_WORKERS_MS}.
 *
 * HAR inputs are one JSON document: they are validated on the main thread. Inputs are consumed
 * in the order given, but the producer reads ahead across file boundaries, so many small files
 * are spread over the workers too.
 *
 * Workers exist only for the compiled code (`dist/`), where `worker.js` sits next to this
 * module, and when the validators come from the MCP facade or a schema (functions cannot be
 * sent to a thread). Otherwise (tests from TypeScript sources, injected validators) the same
 * chunk processing runs in-process ({@link InlinePool}), with identical results.
 */
import { existsSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import {
  ChunkProcessor,
  ChunkView,
  claimFront,
  LOOKAHEAD_CHUNKS,
  RangeClaims,
  KIND_COMPACT,
  KIND_LOCAL,
  KIND_TOOLONG,
  type ChunkFileContext,
  type ChunkRange,
  type ChunkResult,
  type ChunkTask,
  rangeTask,
  readRange,
  releaseRows,
  type RangeJob,
} from "./chunk.js";
import { newFacts } from "./facts.js";
import { BAD_UTF8_MESSAGE, CHUNK_BYTES, DEFAULT_MAX_LINE_BYTES, FileState, fileLineSplitter, jsonlDirection, lineReader, tooLongMessage, type DirectionChoice } from "./file.js";
import { IDLE_INPUT_MS, settlesWithin } from "./live.js";
import { detectFormat, detectFormatEarly, notTextReason, SNIFF_BYTES } from "./readers/detect.js";
import type { Dispatch, LineConsumer } from "./readers/dispatch.js";
import { harText, harTooLarge, MAX_HAR_BYTES } from "./readers/har.js";
import type { ValidatorSetup } from "./setup.js";
import { optionsForFile, ValidateUsageError, type FileSummary, type Finding, type InputFormat, type ValidateOptions } from "./types.js";

/** Runs chunk tasks somewhere: worker threads, or in-process. */
export interface ChunkPool {
  /** Processes `task`; its buffer is transferred (unusable by the caller until the result returns it). */
  run(task: ChunkTask): Promise<ChunkResult>;
  /** Stops the workers. */
  close(): Promise<void>;
  /**
   * Shares out a regular file's chunks ({@link RangeJob}: the calling thread in order, the workers
   * ahead of it); only when {@link sharesRanges}, else every chunk goes through {@link run}.
   */
  shareRanges(job: RangeJob): RangeShare;
  /** True when {@link shareRanges} may be used: the calling thread takes part. */
  sharesRanges(): boolean;
}

/** The workers' side of a {@link RangeJob}, as the calling thread sees it. */
export interface RangeShare {
  /** The result of chunk `k`, which a worker has claimed. @throws (rejects with) a worker failure. */
  result(k: number): Promise<ChunkResult>;
  /** In-process pools: claim and process one chunk now, as a worker would; threads: nothing. */
  step(): void;
  /** The job is over (every claimed result was taken). */
  close(): void;
}

/** Results of a {@link RangeJob} by chunk index, awaited in any order, resolved in any order. */
class RangeResults implements RangeShare {
  private readonly entries = new Map<
    number,
    { promise: Promise<ChunkResult>; resolve: (r: ChunkResult) => void; reject: (e: Error) => void; taken: boolean; settled: boolean }
  >();
  private failure: Error | undefined;

  constructor(private readonly onClose: () => void = () => {}) {}

  private entry(k: number) {
    let e = this.entries.get(k);
    if (e === undefined) {
      let resolve!: (r: ChunkResult) => void;
      let reject!: (e: Error) => void;
      const promise = new Promise<ChunkResult>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      promise.catch(() => {}); // observed by `result`; no unhandled rejection meanwhile
      e = { promise, resolve, reject, taken: false, settled: false };
      if (this.failure !== undefined) reject(this.failure);
      this.entries.set(k, e);
    }
    return e;
  }

  result(k: number): Promise<ChunkResult> {
    const e = this.entry(k);
    if (e.settled) this.entries.delete(k);
    else e.taken = true;
    return e.promise;
  }

  resolve(k: number, r: ChunkResult): void {
    const e = this.entry(k);
    e.resolve(r);
    if (e.taken) this.entries.delete(k);
    else e.settled = true;
  }

  fail(err: Error): void {
    this.failure ??= err;
    for (const e of this.entries.values()) e.reject(this.failure);
  }

  step(): void {}

  close(): void {
    this.onClose();
  }
}

/** Options a worker thread receives (structured-cloneable). */
export interface WorkerInit {
  protocolVersion?: string;
  schema?: object;
  schemaPath?: string;
}

/** Main → worker messages. */
export type WorkerRequest = { type: "chunk"; task: ChunkTask } | { type: "ranges"; job: RangeJob };

/** Worker → main messages. */
export type WorkerReply =
  | { type: "ready" }
  | { type: "result"; result: ChunkResult }
  | { type: "range-result"; job: number; result: ChunkResult }
  | { type: "failed"; id: number; error: string; usage: boolean; job?: number };

/** The chunk processing on the calling thread (tests from sources, injected validators). */
export class InlinePool implements ChunkPool {
  private readonly processor: ChunkProcessor;
  constructor(setup: ValidatorSetup) {
    this.processor = new ChunkProcessor(setup);
  }
  run(task: ChunkTask): Promise<ChunkResult> {
    try {
      return Promise.resolve(this.processor.process(task));
    } catch (err) {
      return Promise.reject(err);
    }
  }
  async close(): Promise<void> {}
  sharesRanges(): boolean {
    return true;
  }
  /** Emulates one worker: {@link RangeShare.step} takes and processes one chunk as a worker would. */
  shareRanges(job: RangeJob): RangeShare {
    const results = new RangeResults();
    const claims = new RangeClaims(job);
    results.step = () => {
      const k = claims.next();
      if (k >= 0) results.resolve(k, this.processor.process(rangeTask(job, k)));
    };
    return results;
  }
}

interface WorkerSlot {
  worker: Worker;
  /** Set once the worker has loaded its validators. */
  ready: boolean;
  outstanding: number;
}

interface Job {
  task: ChunkTask;
  resolve: (r: ChunkResult) => void;
  reject: (e: Error) => void;
}

/** Most tasks queued at a worker (one running, the others waiting, so that it never idles). */
const PER_WORKER = 3;

/**
 * Worker threads running `worker.js`, plus, optionally, the calling thread itself: a task goes to
 * a ready worker with room, else it waits; when tasks wait, the calling thread processes one
 * whenever its event loop is free (between the consumer's work). So the calling thread, which is
 * mostly idle while it only applies session rules, validates too, and it covers the workers'
 * start-up (loading the validators) instead of waiting for it.
 */
export class ThreadPool implements ChunkPool {
  private readonly slots: WorkerSlot[] = [];
  private readonly queued: Job[] = [];
  private readonly running = new Map<number, { job: Job; slot: WorkerSlot }>();
  private broken: Error | undefined;
  private closed = false;
  private inlineScheduled = false;

  private inline: ChunkProcessor | undefined;
  private readonly shares = new Map<number, RangeResults>();

  /** Starts `workers` threads at once (they load their validators meanwhile). */
  constructor(script: URL, workers: number, init: WorkerInit) {
    for (let i = 0; i < workers; i++) this.spawn(script, init);
  }

  /** Lets the calling thread process tasks too, with `processor` (see the class comment); undefined: no more. */
  useCallingThread(processor: ChunkProcessor | undefined): void {
    this.inline = processor;
  }

  /** True when the pool can take more work: no worker failed, not closed, nothing running or queued. */
  get reusable(): boolean {
    return this.broken === undefined && !this.closed && this.running.size === 0 && this.queued.length === 0 && this.shares.size === 0;
  }

  /** Whether the workers keep the process alive (`Worker.ref`/`unref`): only while in use. */
  hold(ref: boolean): void {
    for (const s of this.slots) {
      if (ref) s.worker.ref();
      else s.worker.unref();
    }
  }

  run(task: ChunkTask): Promise<ChunkResult> {
    if (this.broken !== undefined) return Promise.reject(this.broken);
    if (this.closed) return Promise.reject(new Error("validate worker pool is closed"));
    return new Promise<ChunkResult>((resolve, reject) => {
      this.queued.push({ task, resolve, reject });
      this.pump();
    });
  }

  /** True once the calling thread takes part ({@link useCallingThread}). */
  sharesRanges(): boolean {
    return this.inline !== undefined && this.slots.length > 0;
  }

  /** Sends `job` to every worker (one still loading takes part once ready). */
  shareRanges(job: RangeJob): RangeShare {
    const results = new RangeResults(() => this.shares.delete(job.id));
    if (this.broken !== undefined) results.fail(this.broken);
    this.shares.set(job.id, results);
    for (const s of this.slots) s.worker.postMessage({ type: "ranges", job } satisfies WorkerRequest);
    return results;
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = this.slots.splice(0);
    await Promise.all(all.map((s) => s.worker.terminate()));
  }

  /** Hands queued tasks to ready workers with room; leaves the rest to the calling thread. */
  private pump(): void {
    while (this.queued.length > 0 && this.broken === undefined) {
      let best: WorkerSlot | undefined;
      for (const s of this.slots) if (s.ready && s.outstanding < PER_WORKER && (best === undefined || s.outstanding < best.outstanding)) best = s;
      if (best === undefined) break;
      const job = this.queued.shift()!;
      best.outstanding++;
      this.running.set(job.task.id, { job, slot: best });
      best.worker.postMessage({ type: "chunk", task: job.task } satisfies WorkerRequest, job.task.buffer === undefined ? [] : [job.task.buffer]);
    }
    if (this.queued.length > 0 && this.inline !== undefined && !this.inlineScheduled && this.broken === undefined) {
      this.inlineScheduled = true;
      setImmediate(() => this.runInline());
    }
  }

  private runInline(): void {
    this.inlineScheduled = false;
    const job = this.queued.shift();
    if (job !== undefined && !this.closed) {
      try {
        job.resolve(this.inline!.process(job.task));
      } catch (err) {
        job.reject(err instanceof Error ? err : new Error(String(err)));
      }
    }
    this.pump();
  }

  private spawn(script: URL, init: WorkerInit): void {
    const worker = new Worker(script, { workerData: init });
    threadStats.workersStarted++;
    const slot: WorkerSlot = { worker, ready: false, outstanding: 0 };
    this.slots.push(slot);
    worker.on("message", (reply: WorkerReply) => {
      if (reply.type === "ready") {
        slot.ready = true;
        this.pump();
        return;
      }
      if (reply.type === "range-result") {
        this.shares.get(reply.job)?.resolve(reply.result.id, reply.result);
        return;
      }
      if (reply.type === "failed" && reply.job !== undefined) {
        this.fail(reply.usage ? new ValidateUsageError(reply.error) : new Error(reply.error));
        return;
      }
      const id = reply.type === "result" ? reply.result.id : reply.id;
      const r = this.running.get(id);
      if (r === undefined) return;
      this.running.delete(id);
      r.slot.outstanding--;
      if (reply.type === "result") r.job.resolve(reply.result);
      else this.fail(reply.usage ? new ValidateUsageError(reply.error) : new Error(reply.error));
      this.pump();
    });
    worker.on("error", (err) => this.fail(err));
    worker.on("exit", (code) => {
      if (!this.closed) this.fail(new Error(`validate worker exited with code ${code}`));
    });
  }

  /** A worker failed: every running, queued and later task fails with `err`. */
  private fail(err: Error): void {
    this.broken ??= err;
    const jobs = [...[...this.running.values()].map((r) => r.job), ...this.queued.splice(0)];
    this.running.clear();
    for (const j of jobs) j.reject(this.broken);
    for (const share of this.shares.values()) share.fail(this.broken);
  }
}

/** Numbers {@link RangeJob}s (one per shared file). */
let rangeJobs = 0;

/**
 * Diagnostics (tests, benchmarks): how the last file shared out by chunk index was split — chunks
 * the calling thread validated itself (`front`) and chunks the workers did (`back`) — and how many
 * worker threads this process has started for `--jobs` so far (idle ones are reused).
 */
export const threadStats = { front: 0, back: 0, workersStarted: 0 };

/** Session key → protocol version of a file's checkers so far (the workers' version guesses). */
function hintsOf(state: FileState): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [key, c] of state.checkers) out.push([key, c.protocolVersion]);
  return out;
}

/** The compiled worker script, when this module runs from `dist/`; undefined from sources. */
export function workerScript(): URL | undefined {
  const script = new URL("./worker.js", import.meta.url);
  return import.meta.url.endsWith(".js") && existsSync(fileURLToPath(script)) ? script : undefined;
}

/**
 * Inputs of fewer chunks than this (160 MiB with the default 1 MiB chunks) run on one thread
 * rather than start worker threads: measured on the 2-vCPU benchmark machine, a one-shot
 * `--jobs 2` run was slower than `--jobs 1` up to ~100 MB and faster from ~200 MB.
 */
export const MIN_CHUNKS_FOR_NEW_THREADS = 160;

/** True when a `jobs`-thread run with `options` would use worker threads (compiled code, built-in or schema validators). */
export function threadsWouldStart(options: ValidateOptions, jobs: number): boolean {
  return jobs > 1 && workerScript() !== undefined && options.validators === undefined;
}

/** True when idle workers of an earlier run can serve a `jobs`-thread run with `options` now. */
export function idleThreadsFor(options: ValidateOptions, jobs: number): boolean {
  const key = poolKey(options, jobs);
  return key !== undefined && idle !== undefined && idle.key === key && idle.pool.reusable;
}

/** The key under which a pool for `options` is kept idle; undefined: not kept (a schema was read). */
function poolKey(options: ValidateOptions, jobs: number): string | undefined {
  return options.schema === undefined && options.schemaPath === undefined ? `${jobs - 1} ${options.protocolVersion ?? ""}` : undefined;
}

/** How long finished workers wait for the next run before they are stopped, ms. */
export const IDLE_WORKERS_MS = 5000;

/** The workers of the last finished run, kept for the next one with the same set-up. */
let idle: { key: string; pool: ThreadPool; timer: NodeJS.Timeout } | undefined;
/** The set-up key of each pool handed out by {@link startThreads} (undefined: not to be kept). */
const poolKeys = new WeakMap<ThreadPool, string>();

/**
 * The pool of a `jobs`-thread run when worker threads can be used (see the module comment):
 * `jobs - 1` workers, started at once, or the idle workers of the previous run when it had the
 * same set-up (warm: their validators are loaded and their code is compiled); the caller adds
 * itself with {@link ThreadPool.useCallingThread} once its validators are loaded, and hands the
 * pool back with {@link finishThreads}. Undefined when the chunks must be processed in-process
 * only ({@link InlinePool}).
 */
export function startThreads(options: ValidateOptions, jobs: number): ThreadPool | undefined {
  if (!threadsWouldStart(options, jobs)) return undefined;
  const script = workerScript()!;
  const init: WorkerInit = {};
  if (options.protocolVersion !== undefined) init.protocolVersion = options.protocolVersion;
  if (options.schema !== undefined) init.schema = options.schema;
  if (options.schemaPath !== undefined) init.schemaPath = options.schemaPath;
  // Workers that read a schema keep what they read: not kept for another run.
  const key = poolKey(options, jobs);
  if (idle !== undefined && idle.key === key) {
    const { pool, timer } = idle;
    idle = undefined;
    clearTimeout(timer);
    if (pool.reusable) {
      pool.hold(true);
      return pool;
    }
    void pool.close(); // a worker died while idle
  }
  const pool = new ThreadPool(script, jobs - 1, init);
  if (key !== undefined) poolKeys.set(pool, key);
  return pool;
}

/**
 * Hands back a pool from {@link startThreads} after its run: kept idle for the next run (for
 * {@link IDLE_WORKERS_MS}, without keeping the process alive) when it is reusable, else closed.
 */
export async function finishThreads(pool: ThreadPool): Promise<void> {
  const key = poolKeys.get(pool);
  pool.useCallingThread(undefined);
  if (key === undefined || !pool.reusable) {
    await pool.close();
    return;
  }
  const previous = idle;
  pool.hold(false);
  const timer = setTimeout(() => {
    if (idle?.pool === pool) idle = undefined;
    void pool.close();
  }, IDLE_WORKERS_MS);
  timer.unref();
  idle = { key, pool, timer };
  if (previous !== undefined) {
    clearTimeout(previous.timer);
    await previous.pool.close();
  }
}

/** Stops the idle workers kept from the last `--jobs` run now (they stop by themselves after {@link IDLE_WORKERS_MS}). */
export async function closeIdleWorkers(): Promise<void> {
  const kept = idle;
  idle = undefined;
  if (kept === undefined) return;
  clearTimeout(kept.timer);
  await kept.pool.close();
}

// ---------------------------------------------------------------------------------------------
// producer → consumer sequence

type Item =
  | { type: "open"; index: number; path: string; format?: InputFormat; direction?: DirectionChoice; error?: unknown; bytes?: number }
  | { type: "har"; text: string }
  | { type: "chunk"; result: Promise<ChunkResult>; consumed?: () => void; progress?: { bytes: number; total: number }; fd?: number }
  | { type: "toolong"; bytes: number }
  | { type: "ranges"; fh: FileHandle; size: number; file: ChunkFileContext; done: () => void }
  | { type: "end"; bytes: number; error?: unknown; close?: () => Promise<void> };

/** An unbounded FIFO with one consumer that awaits items; closing ends (or fails) it. */
class Queue<T> {
  private items: T[] = [];
  private head = 0;
  private waiter: { resolve: (v: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
  private end: { failed: boolean; error: unknown } | undefined;

  push(item: T): void {
    const w = this.waiter;
    if (w !== undefined) {
      this.waiter = undefined;
      w.resolve({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }

  /** No more items; with `failed`, the consumer's next `next()` after the last item rejects with `error`. */
  close(failed = false, error?: unknown): void {
    this.end = { failed, error };
    const w = this.waiter;
    if (w !== undefined) {
      this.waiter = undefined;
      if (failed) w.reject(error);
      else w.resolve({ value: undefined, done: true });
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.head < this.items.length) {
      const value = this.items[this.head++]!;
      if (this.head === this.items.length) {
        this.items = [];
        this.head = 0;
      }
      return Promise.resolve({ value, done: false });
    }
    const end = this.end;
    if (end !== undefined) return end.failed ? Promise.reject(end.error) : Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }
}

/** A counting semaphore for chunks in flight. */
class Slots {
  private waiters: Array<() => void> = [];
  constructor(private free: number) {}
  acquire(): Promise<void> | undefined {
    if (this.free > 0) {
      this.free--;
      return undefined;
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }
  release(): void {
    const w = this.waiters.shift();
    if (w !== undefined) w();
    else this.free++;
  }
  /** Wakes every waiter (shutdown). */
  drain(): void {
    const all = this.waiters;
    this.waiters = [];
    for (const w of all) w();
  }
}

/** A stream the producer copies into chunk buffers (stdin, pipes, other non-regular files). */
interface StreamSource {
  kind: "stream";
  /** True when {@link read} can answer without waiting (bytes have arrived, or the end). */
  ready(): boolean;
  /** Resolves once {@link ready} (rejects with the read error, if any). */
  available(): Promise<void>;
  /** Reads up to `length` bytes into `into` at `offset`; 0 at the end. */
  read(into: Buffer, offset: number, length: number): Promise<number>;
  close(): Promise<void>;
}

/** A regular file: workers read their byte ranges of it themselves. */
interface FileSource {
  kind: "file";
  fh: FileHandle;
  size: number;
}

async function openSource(path: string, stdin: NodeJS.ReadableStream | undefined): Promise<StreamSource | FileSource> {
  if (path === "-") return streamSource(stdin ?? process.stdin, async () => {});
  const fh: FileHandle = await open(path, "r");
  try {
    const st = await fh.stat();
    if (st.isDirectory()) throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${path}'`), { code: "EISDIR" });
    if (st.isFile()) return { kind: "file", fh, size: st.size };
    return streamSource(fh.createReadStream({ highWaterMark: CHUNK_BYTES, autoClose: false }), () => fh.close());
  } catch (err) {
    await fh.close();
    throw err;
  }
}

function streamSource(stream: NodeJS.ReadableStream, close: () => Promise<void>): StreamSource {
  const iter = (stream as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]();
  let pending: Buffer | undefined;
  let pos = 0;
  let done = false;
  let arriving: Promise<void> | undefined;
  /** A read error, given again to every later call (the iterator would then just say "done"). */
  let failed: { error: unknown } | undefined;
  /** Bytes are waiting to be read. */
  const buffered = (): boolean => pending !== undefined && pos < pending.length;
  const available = (): Promise<void> => {
    if (failed !== undefined) return Promise.reject(failed.error);
    if (done || buffered()) return Promise.resolve();
    arriving ??= (async () => {
      try {
        while (!done && !buffered()) {
          const r = await iter.next();
          if (r.done === true) done = true;
          else {
            pending = typeof r.value === "string" ? Buffer.from(r.value, "utf8") : r.value;
            pos = 0;
          }
        }
      } catch (error) {
        failed = { error };
        throw error;
      } finally {
        arriving = undefined;
      }
    })();
    return arriving;
  };
  return {
    kind: "stream",
    ready: () => failed === undefined && (done || buffered()),
    available,
    async read(into, offset, length) {
      await available();
      if (!buffered()) return 0; // the end
      const n = Math.min(length, pending!.length - pos);
      pending!.copy(into, offset, pos, pos + n);
      pos += n;
      return n;
    },
    close,
  };
}

const LF = 0x0a;
/** Smallest `chunkBytes` honoured. */
const MIN_CHUNK_BYTES = 256;

/**
 * Validates `paths` with `pool` (see the module comment). `emit` gets every finding in file order;
 * `onFileDone` each file's summary after its last finding. Closes `pool` at the end unless
 * `keepPool` (it is closed on a failure in any case). Returns the summaries in input order.
 * @throws the first worker failure (a ValidateUsageError stays one).
 */
export async function runPipeline(
  paths: readonly string[],
  options: ValidateOptions,
  setup: ValidatorSetup,
  pool: ChunkPool,
  jobs: number,
  emit: (finding: Finding) => void,
  onFileDone: (file: FileSummary) => void,
  keepPool = false,
): Promise<FileSummary[]> {
  const chunkBytes = Math.max(MIN_CHUNK_BYTES, Math.floor(options.chunkBytes ?? CHUNK_BYTES));
  /** Regular files are shared out by chunk index (`consumeRanges`) when the calling thread takes part. */
  const shared = pool.sharesRanges();
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const queue = new Queue<Item>();
  const slots = new Slots(2 * jobs + 2);
  const free: ArrayBuffer[] = [];
  let aborted = false;
  let taskId = 0;
  /** Files whose ranges the workers may still read; closed by the consumer (or on abort). */
  const openFiles = new Set<FileHandle>();
  // The file the consumer is in, for the producer's version hints.
  let current: { index: number; state: FileState } | undefined;

  const take = (size: number): Buffer => {
    if (size <= chunkBytes) {
      const ab = free.pop();
      if (ab !== undefined) return Buffer.from(ab);
      return Buffer.from(new ArrayBuffer(chunkBytes));
    }
    return Buffer.from(new ArrayBuffer(size));
  };
  const recycle = (ab: ArrayBuffer): void => {
    if (ab.byteLength === chunkBytes && free.length < 4 * jobs + 4) free.push(ab);
  };
  const hints = (index: number): Array<[string, string]> => (current === undefined || current.index !== index ? [] : hintsOf(current.state));

  // ---- producer ----
  // The first chunk of a file usually holds the initialize exchange, which fixes the protocol
  // version: the second chunk is only sent once the consumer has seen the first, so that the
  // workers' version hints are right from then on.
  let firstPending: Promise<void> | undefined;
  let releaseFirst: (() => void) | undefined;
  const dispatch = async (
    index: number,
    body: { buffer: ArrayBuffer; length: number } | { range: ChunkRange },
    first: boolean,
    file: ChunkFileContext,
  ): Promise<void> => {
    if (firstPending !== undefined) {
      await firstPending;
      firstPending = undefined;
    }
    const wait = slots.acquire();
    if (wait !== undefined) await wait;
    if (aborted) return;
    const task: ChunkTask = { id: taskId++, ...body, first, file, hints: hints(index) };
    const result = pool.run(task);
    result.catch(() => {}); // observed by the consumer; avoid an unhandled rejection meanwhile
    const progress = "range" in body ? { bytes: body.range.end, total: body.range.size } : undefined;
    const fd = "range" in body ? body.range.fd : undefined;
    if (first) {
      let consumed!: () => void;
      firstPending = new Promise<void>((resolve) => (consumed = resolve));
      releaseFirst = consumed;
      queue.push({ type: "chunk", result, consumed, progress, fd });
    } else {
      queue.push({ type: "chunk", result, progress, fd });
    }
  };

  const produceFile = async (index: number, path: string): Promise<void> => {
    let source: StreamSource | FileSource;
    try {
      source = await openSource(path, options.stdin);
    } catch (err) {
      queue.push({ type: "open", index, path, error: err });
      return;
    }
    const own = optionsForFile(options, index);
    if (source.kind === "file") await produceRanges(index, path, source, own);
    else await produceStream(index, path, source, own);
  };

  /** A regular file: sniff its head here, then hand out byte ranges (workers read them). */
  const produceRanges = async (index: number, path: string, source: FileSource, own: ValidateOptions): Promise<void> => {
    const { fh, size } = source;
    openFiles.add(fh);
    const close = (): Promise<void> => {
      openFiles.delete(fh);
      return fh.close().catch(() => {});
    };
    let format: InputFormat;
    let direction: DirectionChoice = { direction: own.direction ?? "c2s" };
    try {
      const head = Buffer.alloc(Math.min(size, SNIFF_BYTES));
      const { bytesRead } = await fh.read(head, 0, head.length, 0);
      format = own.inputFormat ?? detectFormat(head.toString("utf8", 0, bytesRead), path);
      const notText = notTextReason(head.subarray(0, bytesRead));
      if (notText !== undefined && format !== "har") throw new Error(notText); // (a HAR's size limit is checked first)
      if (format === "jsonl" && own.inputFormat === undefined) direction = jsonlDirection(head.toString("utf8", 0, bytesRead), own, setup);
      if (format === "har") {
        if (size > MAX_HAR_BYTES) throw harTooLarge(size);
        const all = await fh.readFile();
        options.onProgress?.({ file: path, bytesRead: all.length, totalBytes: size });
        const text = harText([all], all.length);
        queue.push({ type: "open", index, path, format });
        queue.push({ type: "har", text });
        queue.push({ type: "end", bytes: all.length, close });
        return;
      }
    } catch (err) {
      queue.push({ type: "open", index, path, error: err });
      await close();
      return;
    }
    queue.push({ type: "open", index, path, format, direction });
    const file: ChunkFileContext = { format, direction: direction.direction, maxLineBytes };
    if (shared) {
      // The consumer validates this file itself with the workers (`consumeRanges`); the next
      // input is produced once it is done.
      await new Promise<void>((done) => queue.push({ type: "ranges", fh, size, file, done }));
      queue.push({ type: "end", bytes: size, close });
      return;
    }
    for (let start = 0; start < size && !aborted; start += chunkBytes) {
      await dispatch(index, { range: { fd: fh.fd, start, end: Math.min(size, start + chunkBytes), size } }, start === 0, file);
    }
    // The consumer closes the file once the workers are done with it.
    queue.push({ type: "end", bytes: size, close });
  };

  /** A stream: copy it into buffers cut at line ends. */
  const produceStream = async (index: number, path: string, source: StreamSource, own: ValidateOptions): Promise<void> => {
    let bytes = 0;
    const progress = options.onProgress;
    let opened = false;
    /** After a read error: sends the whole lines read before it (as without --jobs). */
    let flush: (() => Promise<void>) | undefined;
    try {
      let buf = take(Math.max(chunkBytes, SNIFF_BYTES)); // the format is sniffed from the first 64 KiB
      let used = 0;
      let eof = false;
      /**
       * Reads more into `buf`. With `idle`: when nothing arrives within IDLE_INPUT_MS, `idle()`
       * runs first (it may replace `buf`); then the read waits on, unless it returned true.
       */
      const fill = async (idle?: () => Promise<boolean>): Promise<void> => {
        if (idle !== undefined && !source.ready()) {
          const arriving = source.available();
          if (!(await settlesWithin(arriving, IDLE_INPUT_MS)) && (await idle())) return;
        }
        const n = await source.read(buf, used, buf.length - used);
        if (n === 0) {
          eof = true;
          return;
        }
        used += n;
        bytes += n;
        progress?.({ file: path, bytesRead: bytes, totalBytes: undefined });
      };
      // The format comes from the first 64 KiB, or from the whole lines of a live input that
      // pauses before that (none is needed when it is given).
      let early: InputFormat | undefined = own.inputFormat === "har" ? undefined : own.inputFormat;
      const enough = async (): Promise<boolean> => (early = detectFormatEarly(buf.toString("utf8", 0, used), path)) !== undefined;
      while (used < SNIFF_BYTES && !eof && early === undefined) await fill(used > 0 ? enough : undefined);
      const format = own.inputFormat ?? early ?? detectFormat(buf.toString("utf8", 0, Math.min(used, SNIFF_BYTES)), path);
      const notText = notTextReason(buf.subarray(0, used));
      if (notText !== undefined && format !== "har") throw new Error(notText); // (a HAR's size limit is checked first)
      const direction: DirectionChoice = format === "jsonl" && own.inputFormat === undefined ? jsonlDirection(buf.toString("utf8", 0, Math.min(used, SNIFF_BYTES)), own, setup) : { direction: own.direction ?? "c2s" };
      if (format === "har") {
        // Opened first, so that a read error (or a HAR over the size limit) ends it as unreadable.
        queue.push({ type: "open", index, path, format });
        opened = true;
        const parts: Buffer[] = [Buffer.from(buf.subarray(0, used))];
        while (!eof) {
          used = 0;
          await fill();
          if (used > 0) parts.push(Buffer.from(buf.subarray(0, used)));
          if (bytes > MAX_HAR_BYTES) throw harTooLarge(bytes, true);
        }
        queue.push({ type: "har", text: harText(parts, bytes) });
        queue.push({ type: "end", bytes });
        return;
      }
      queue.push({ type: "open", index, path, format, direction });
      opened = true;
      const file: ChunkFileContext = { format, direction: direction.direction, maxLineBytes };
      const send = (b: Buffer, length: number, first: boolean): Promise<void> =>
        dispatch(index, { buffer: b.buffer as ArrayBuffer, length }, first, file);
      let first = true;
      let skipping = false;
      let skipped = 0;
      flush = async () => {
        const last = skipping || used === 0 ? -1 : buf.lastIndexOf(LF, used - 1);
        if (last >= 0) await send(buf, last + 1, first);
      };
      /** Sends `buf[0, last]` (whole lines, `buf[last]` an LF); the rest moves to a new `buf`. */
      const sendThrough = async (last: number): Promise<void> => {
        const tail = used - (last + 1);
        const next = take(Math.max(chunkBytes, tail * 2));
        buf.copy(next, 0, last + 1, used);
        await send(buf, last + 1, first);
        first = false;
        buf = next;
        used = tail;
      };
      /** A live input paused: the whole lines read so far go out now (the rest stays in `buf`). */
      const sendWholeLines = async (): Promise<boolean> => {
        const last = used === 0 ? -1 : buf.lastIndexOf(LF, used - 1);
        if (last >= 0) await sendThrough(last);
        return false;
      };
      for (;;) {
        if (aborted) {
          await source.close().catch(() => {});
          return;
        }
        if (!eof && used < buf.length) await fill(skipping ? undefined : sendWholeLines);
        if (skipping) {
          const nl = used > 0 ? buf.indexOf(LF) : -1;
          if (nl === -1 || nl >= used) {
            skipped += used;
            used = 0;
            if (eof) {
              queue.push({ type: "toolong", bytes: skipped });
              break;
            }
            continue;
          }
          queue.push({ type: "toolong", bytes: skipped + nl });
          first = false;
          skipping = false;
          buf.copy(buf, 0, nl + 1, used);
          used -= nl + 1;
        }
        if (eof) {
          if (used > 0) await send(buf, used, first);
          else recycle(buf.buffer as ArrayBuffer);
          break;
        }
        if (used < buf.length) continue;
        const last = buf.lastIndexOf(LF, used - 1);
        if (last === -1) {
          // One line fills the buffer: drop it if it is already too long, else make room.
          if (used > maxLineBytes) {
            skipping = true;
            skipped = used;
            used = 0;
          } else {
            const grown = take(buf.length * 2);
            buf.copy(grown, 0, 0, used);
            recycle(buf.buffer as ArrayBuffer);
            buf = grown;
          }
          continue;
        }
        await sendThrough(last);
      }
    } catch (err) {
      const close = (): Promise<void> => source.close().catch(() => {});
      if (!opened) {
        // While sniffing the format: unreadable from the start, as without --jobs.
        queue.push({ type: "open", index, path, error: err, bytes });
        await close();
        return;
      }
      try {
        await flush?.();
      } catch {
        // aborted meanwhile: the consumer is gone
      }
      queue.push({ type: "end", bytes, error: err, close });
      return;
    }
    queue.push({ type: "end", bytes, close: () => source.close().catch(() => {}) });
  };

  const producing = (async () => {
    try {
      for (let i = 0; i < paths.length && !aborted; i++) {
        firstPending = undefined; // a new file's first chunk needs no wait
        await produceFile(i, paths[i]!);
      }
      queue.close();
    } catch (err) {
      queue.close(true, err);
    }
  })();

  // ---- consumer ----
  const summaries: FileSummary[] = [];
  const facts = newFacts();
  let state: FileState | undefined;
  let consumer: LineConsumer | undefined;
  let lineBase = 0;
  let ok = true;
  let reread: ((text: string, line: number) => unknown) | undefined;

  const applyChunk = (view: ChunkView): void => {
    const st = state!;
    const count = view.result.count;
    for (let r = 0; r < count; r++) {
      const kind = view.kind(r);
      const line = lineBase + view.line(r);
      if (kind === KIND_COMPACT) {
        view.fill(r, facts);
        st.checkerFor(view.session(r)).apply(facts, { line }, view.direction(r));
      } else if (kind === KIND_LOCAL) {
        const text = view.text(r);
        if (text.includes("\ufffd") && view.badUtf8(r)) st.dispatch.problem("input/invalid-utf8", { line }, BAD_UTF8_MESSAGE);
        consumer!.line(text, line);
      } else if (kind === KIND_TOOLONG) {
        st.dispatch.problem("input/line-too-long", { line }, tooLongMessage(view.tooLongBytes(r), maxLineBytes));
      }
    }
    st.summary.skipped += view.result.skipped;
    lineBase += view.result.lines;
  };

  /**
   * Validates a regular file with the workers (see {@link RangeJob}): this thread goes through the
   * chunks in order, validating each free one the single-threaded way (`fileLineSplitter` into
   * the file's reader, no rows) and applying the rows of each one a worker took; the workers take
   * chunks {@link LOOKAHEAD_CHUNKS} ahead of this thread, and near the end from the back, so that
   * this thread rarely waits for them and both are busy to the end. Rows are built only for what a
   * worker did, and the split follows the threads' real speeds (a worker still loading its
   * validators takes part when ready, or not at all in a small file). Returns false when the file
   * became unreadable.
   */
  const consumeRanges = async (item: Extract<Item, { type: "ranges" }>): Promise<boolean> => {
    const st = state!;
    const { fh, size, file } = item;
    const count = Math.ceil(size / chunkBytes);
    const claims = new Int32Array(new SharedArrayBuffer(4 * Math.max(1, count)));
    const position = new Int32Array(new SharedArrayBuffer(4));
    const splitter = fileLineSplitter(st, consumer!, file.format, file.direction, maxLineBytes);
    let share: RangeShare | undefined;
    let scratch: Buffer | undefined;
    let readable = true;
    let mine = 0;
    let theirs = 0;
    const progress = (): void => {
      options.onProgress?.({ file: st.summary.file, bytesRead: Math.min(size, (mine + theirs) * chunkBytes), totalBytes: size });
    };
    try {
      for (let k = 0; k < count; k++) {
        Atomics.store(position, 0, k);
        if (claimFront(claims, k)) {
          if (!readable) continue; // taken only to keep the workers off the rest of the file
          let read;
          try {
            read = readRange({ fd: fh.fd, start: k * chunkBytes, end: Math.min(size, (k + 1) * chunkBytes), size }, maxLineBytes, scratch);
          } catch (err) {
            st.unreadable(err);
            readable = false;
            continue;
          }
          scratch = read.buffer;
          if (read.length > 0) splitter.push(read.buffer.subarray(0, read.length));
          // A chunk is whole lines: this only reads the input's last line when it has no LF (or a
          // line of a file that changed under us), so no line is left open in the reused buffer.
          splitter.end();
          if (read.tooLong >= 0) {
            splitter.lineNo++;
            st.dispatch.problem("input/line-too-long", { line: splitter.lineNo }, tooLongMessage(read.tooLong, maxLineBytes));
          }
          mine++;
          // After the first chunk (which usually fixes the protocol version: the workers' hints).
          if (k === 0 && count > 1) {
            const job: RangeJob = { id: rangeJobs++, fd: fh.fd, size, chunkBytes, count, file, hints: hintsOf(st), lookahead: LOOKAHEAD_CHUNKS, claims: claims.buffer as SharedArrayBuffer, position: position.buffer as SharedArrayBuffer };
            share = pool.shareRanges(job);
          }
          progress();
          share?.step();
          // Let the workers' results (and progress output) through.
          await new Promise<void>((resolve) => setImmediate(resolve));
        } else {
          // A worker's chunk (it read the file: awaited even when the rest is not used).
          const result = await share!.result(k);
          theirs++;
          if (readable && result.readError !== undefined) {
            st.unreadable(new Error(result.readError));
            readable = false;
          }
          if (readable) {
            lineBase = splitter.lineNo;
            try {
              applyChunk(new ChunkView(result, reread!, fh.fd));
            } catch (err) {
              st.unreadable(err);
              readable = false;
            }
            splitter.lineNo = lineBase;
          }
          releaseRows(result);
          progress();
        }
      }
      lineBase = splitter.lineNo;
    } finally {
      share?.close();
      threadStats.front = mine;
      threadStats.back = theirs;
    }
    return readable;
  };

  try {
    for (;;) {
      const next = await queue.next();
      if (next.done === true) break;
      const item = next.value;
      switch (item.type) {
        case "open": {
          state = new FileState(item.path, optionsForFile(options, item.index), setup, emit);
          current = { index: item.index, state };
          lineBase = 0;
          ok = true;
          if (item.error !== undefined) {
            state.summary.bytes = item.bytes ?? 0;
            state.unreadable(item.error);
            const summary = state.finish(false);
            summaries.push(summary);
            onFileDone(summary);
            state = undefined;
            break;
          }
          const format = item.format!;
          state.format = format;
          state.summary.format = format;
          if (format !== "har") {
            const direction = item.direction === undefined ? "c2s" : state.useDirection(item.direction);
            consumer = lineReader(format, state.dispatch, direction);
            reread = rereader(format, direction);
          }
          break;
        }
        case "har":
          state!.har(item.text);
          ok = state!.summary.unreadable === undefined;
          break;
        case "chunk": {
          const result = await item.result;
          slots.release();
          if (ok && result.readError !== undefined) {
            state!.unreadable(new Error(result.readError));
            ok = false;
          }
          if (item.progress !== undefined) options.onProgress?.({ file: state!.summary.file, bytesRead: item.progress.bytes, totalBytes: item.progress.total });
          if (ok) {
            try {
              applyChunk(new ChunkView(result, reread!, item.fd));
            } catch (err) {
              // As without --jobs: an unusable schema definition (or a file that changed under us)
              // makes the rest of the file unreadable.
              state!.unreadable(err);
              ok = false;
            }
          }
          releaseRows(result);
          recycle(result.buffer);
          item.consumed?.();
          break;
        }
        case "ranges":
          try {
            if (ok) ok = await consumeRanges(item);
          } finally {
            item.done();
          }
          break;
        case "toolong":
          if (ok) {
            lineBase++;
            state!.dispatch.problem("input/line-too-long", { line: lineBase }, tooLongMessage(item.bytes, maxLineBytes));
          }
          break;
        case "end": {
          const st = state!;
          if (ok && st.summary.format !== "har") consumer?.end?.(); // a message body left open
          st.summary.bytes = item.bytes;
          if (st.summary.format !== "har") st.summary.lines = lineBase;
          if (item.error !== undefined && ok) {
            st.unreadable(item.error);
            ok = false;
          }
          const summary = st.finish(ok);
          await item.close?.();
          summaries.push(summary);
          onFileDone(summary);
          state = undefined;
          break;
        }
      }
    }
  } catch (err) {
    // Stop the producer (it may be waiting for a slot) and do not wait for it: it may be blocked
    // on a stdin that never ends. It checks `aborted` before every read and dispatch.
    aborted = true;
    slots.drain();
    releaseFirst?.();
    await pool.close();
    await Promise.all([...openFiles].map((fh) => fh.close().catch(() => {})));
    throw err;
  }
  await producing;
  if (!keepPool) await pool.close();
  return summaries;
}

/** Parses one line again with the format's reader and returns the message value it yields. */
function rereader(format: Exclude<InputFormat, "har">, dir: "c2s" | "s2c"): (text: string, line: number) => unknown {
  let value: unknown;
  const capture: Dispatch = {
    message: (v) => {
      value = v;
    },
    unparsable: () => {},
    problem: () => {},
    skip: () => {},
  };
  const reader = lineReader(format, capture, dir);
  return (text, line) => {
    value = undefined;
    reader.line(text, line);
    return value;
  };
}
