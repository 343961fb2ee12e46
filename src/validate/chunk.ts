/**
 * The work unit of `--jobs`: a chunk of whole lines of one input (a byte range of a file, which
 * the processing thread reads itself, or a buffer cut from a stream), parsed and schema-checked by
 * a {@link ChunkProcessor} (on a worker thread, or on the main thread when it is free) and
 * summarised as one row of numbers per line, which the main thread decodes ({@link ChunkView})
 * to run the session rules in file order.
 *
 * Division of labour. Session rules need every message in order (ids, lifecycle, versions), so
 * they run on the main thread, in order; everything proportional to the bytes — reading, UTF-8
 * decoding, JSON.parse, the format readers, and the ajv schema checks including the `byte` format
 * on large base64 blocks — happens per chunk. A row holds what the rules read (kind, direction,
 * id, method, progress token, cancelled request id, progress value), the session, and which
 * schema checks were run and whether they passed; failed checks carry their issues.
 *
 * The processor cannot know the session state at the start of its chunk. It guesses, and the
 * main thread verifies every verdict it uses: the version is the one the main thread knew when it
 * sent the chunk (`hints`), updated by initialize exchanges inside the chunk; a response's result
 * definition comes from its request when that is in the same chunk. When it is not and the line
 * is large (typically a big image or audio result right after a chunk boundary), the processor
 * records which result definitions of the version the result passes. A verdict that is not there
 * (other version, other definition, a failed candidate) is a miss: the main thread re-reads that
 * one line from the chunk bytes (which come back with the result) and validates it itself, so the
 * findings are always those of a single-threaded run. Lines the rows do not describe — batches,
 * initialize messages, invalid JSON-RPC, reader problems — are marked LOCAL and processed on the
 * main thread from the line text, exactly as without `--jobs`.
 */
import { isUtf8 } from "node:buffer";
import { readSync } from "node:fs";
import type { SchemaIssue } from "../mcp/validation.js";
import { LEGACY_PROTOCOL_VERSIONS } from "../mcp/versions.js";
import { defsFor, type Defs, type SchemaCheck } from "./defs.js";
import {
  factsOf,
  isId,
  isObject,
  MISS,
  newFacts,
  SHAPE_ERROR,
  SHAPE_NOTIFICATION,
  SHAPE_REQUEST,
  SHAPE_RESULT,
  type CheckTarget,
  type MessageFacts,
  type VerdictSource,
} from "./facts.js";
import { byteLineReader, lineReader } from "./file.js";
import { badUtf8 } from "./lines.js";
import type { Dispatch, LineConsumer } from "./readers/dispatch.js";
import type { ValidatorSetup } from "./setup.js";
import type { Direction, InputFormat, ProtocolValidators } from "./types.js";

/** Per-file parameters of chunk processing (structured-cloneable). */
export interface ChunkFileContext {
  format: Exclude<InputFormat, "har">;
  /** Direction of plain JSONL input. */
  direction: Direction;
  maxLineBytes: number;
}

/**
 * A byte range of a regular file: the chunk is the lines that start in `[start, end)` of the file
 * open as `fd` (a process-wide descriptor; the worker reads it with positioned reads), the last
 * one read to its end even past `end`. `size` is the file size when it was opened (its EOF here).
 */
export interface ChunkRange {
  fd: number;
  start: number;
  end: number;
  size: number;
}

/**
 * A chunk sent to a worker: either bytes in memory, `buffer[0, length)` holding whole lines (the
 * input's last may lack its LF), or a {@link ChunkRange} of a file that the worker reads itself.
 */
export interface ChunkTask {
  id: number;
  buffer?: ArrayBuffer;
  length?: number;
  range?: ChunkRange;
  /** The chunk starts at line 1 of its file (a UTF-8 byte-order mark is skipped there). */
  first: boolean;
  file: ChunkFileContext;
  /** Session key ("" for the only session) → protocol version the main thread last knew. */
  hints: Array<[string, string]>;
}

/**
 * A regular file shared out by chunk index between the calling thread and the workers (`--jobs`,
 * see `pipeline.ts`): chunk k is the lines that start in `[k * chunkBytes, (k + 1) * chunkBytes)`.
 * The calling thread goes through the chunks in order, validating the free ones itself and
 * applying the rows of those a worker took; the workers take chunks ahead of it (see
 * {@link claimForWorker}). Structured-cloneable: the claim table and the position are shared memory.
 */
export interface RangeJob {
  id: number;
  /** The file, open in the calling thread (a process-wide descriptor). */
  fd: number;
  /** File size when opened, bytes (its EOF here). */
  size: number;
  chunkBytes: number;
  /** Chunks in the file: ceil(size / chunkBytes). */
  count: number;
  /** One Int32 per chunk: {@link CLAIM_FREE}, {@link CLAIM_FRONT} or {@link CLAIM_BACK}. */
  claims: SharedArrayBuffer;
  /** One Int32: the chunk the calling thread is at. */
  position: SharedArrayBuffer;
  /** How far ahead of the calling thread workers take chunks while there are any (chunks). */
  lookahead: number;
  file: ChunkFileContext;
  hints: Array<[string, string]>;
}

/** Claim states of a {@link RangeJob} chunk. */
export const CLAIM_FREE = 0;
export const CLAIM_FRONT = 1;
export const CLAIM_BACK = 2;

/**
 * Chunks a worker stays ahead of the calling thread: when the calling thread reaches a run of
 * chunks a worker did, it applies their rows (about a tenth of the time a chunk takes to validate),
 * so the run must outlast the worker's chunk in progress, or the calling thread waits for it.
 */
export const LOOKAHEAD_CHUNKS = 16;

/** Takes chunk `k` for the calling thread; false when a worker has it. */
export function claimFront(claims: Int32Array, k: number): boolean {
  return Atomics.compareExchange(claims, k, CLAIM_FREE, CLAIM_FRONT) === CLAIM_FREE;
}

/**
 * Takes a chunk for a worker: the first free one at least `lookahead` chunks after the calling
 * thread's position (and at or after `from`, the worker's own cursor), else the last free one
 * after that position, so that near the end of the file the two meet in the middle of what is
 * left. Returns its index, or -1 when no chunk after the calling thread is free (the rest is the
 * calling thread's).
 */
export function claimForWorker(claims: Int32Array, position: Int32Array, lookahead: number, from: number): number {
  const count = claims.length;
  const at = Atomics.load(position, 0);
  for (let j = Math.max(from, at + lookahead); j < count; j++) {
    if (Atomics.load(claims, j) === CLAIM_FREE && Atomics.compareExchange(claims, j, CLAIM_FREE, CLAIM_BACK) === CLAIM_FREE) return j;
  }
  for (let j = count - 1; j > at; j--) {
    if (Atomics.load(claims, j) === CLAIM_FREE && Atomics.compareExchange(claims, j, CLAIM_FREE, CLAIM_BACK) === CLAIM_FREE) return j;
  }
  return -1;
}

/** A worker's side of a {@link RangeJob}: its next claim (see {@link claimForWorker}). */
export class RangeClaims {
  private readonly claims: Int32Array;
  private readonly position: Int32Array;
  private from = 0;
  constructor(private readonly job: RangeJob) {
    this.claims = new Int32Array(job.claims);
    this.position = new Int32Array(job.position);
  }
  /** The next chunk for this worker, or -1 when none is left. */
  next(): number {
    const k = claimForWorker(this.claims, this.position, this.job.lookahead, this.from);
    if (k >= 0) this.from = k + 1;
    return k;
  }
}

/** The task of chunk `k` of `job`, as a worker processes it. */
export function rangeTask(job: RangeJob, k: number): ChunkTask {
  const start = k * job.chunkBytes;
  return {
    id: k,
    range: { fd: job.fd, start, end: Math.min(job.size, start + job.chunkBytes), size: job.size },
    first: k === 0,
    file: job.file,
    hints: job.hints,
  };
}

/** A worker's summary of a chunk. */
export interface ChunkResult {
  id: number;
  /**
   * Buffer tasks: the task's buffer handed back, `length` bytes, for LOCAL lines and misses.
   * Range tasks: empty (the processor keeps reusing its read buffer); the line bytes are at file
   * positions `fileStart + offset` instead.
   */
  buffer: ArrayBuffer;
  length: number;
  /** Range tasks: the file position of the first byte read (offsets in rows are relative to it). */
  fileStart?: number;
  /** Set when the range could not be read (the file is then unreadable from here on). */
  readError?: string;
  /** Physical lines in the chunk. */
  lines: number;
  /** Lines the reader ignored (blank lines, non-message log lines). */
  skipped: number;
  /**
   * `count` rows of {@link COLS} numbers, see the C_* constants: a store of the processor's pool,
   * shared with it; the reader hands it back with {@link releaseRows} when done with the rows.
   */
  rows: Float64Array;
  count: number;
  /** Strings referred to by rows (methods, string ids, tokens, sessions, versions). */
  strings: string[];
  /** Schema checks: key k is definition `keyDefs[k]` on target `keyTargets[k]`. */
  keyTargets: CheckTarget[];
  keyDefs: string[];
  /** Sets of keys (checks beyond the first two of a message); rows refer to them by index. */
  sets: number[][];
  /** Failed checks of a row: key → issues. */
  failures: Array<Record<number, SchemaIssue[]>>;
}

// Row layout ---------------------------------------------------------------------------------

/** Numbers per row. */
export const COLS = 15;
/** Line number within the chunk, 1-based. */
export const C_LINE = 0;
/** Bit fields: kind, direction, shape, value types and flags (see the F_* constants). */
export const C_CODE = 1;
/** String index of the session key, -1 for none. */
export const C_SESSION = 2;
/** String index of the method. */
export const C_METHOD = 3;
/** The id: a number, or a string index (by type bits); bytes for TOOLONG rows. */
export const C_ID = 4;
export const C_TOKEN = 5;
export const C_REQID = 6;
export const C_PROGRESS = 7;
/** String index of the protocol version the checks ran under. */
export const C_VER = 8;
/** The (first two) checks run: key indices, -1 for none. */
export const C_K1 = 9;
export const C_K2 = 10;
/** Further checks run (result candidates): index into `sets`, -1 for none. */
export const C_SET = 11;
/** Index into `failures`, -1 when every check passed. */
export const C_FAIL = 12;
/** Byte offset and length of the line's text in the chunk (without CR/LF and BOM). */
export const C_OFF = 13;
export const C_LEN = 14;

/** Row kinds (bits 0-2 of C_CODE). */
export const KIND_COMPACT = 1;
export const KIND_LOCAL = 2;
export const KIND_TOOLONG = 3;
const F_S2C = 1 << 3;
const SHAPE_SHIFT = 4;
const ID_SHIFT = 7;
const TOKEN_SHIFT = 9;
const REQID_SHIFT = 11;
const F_PROGRESS = 1 << 13;
const F_PARAMS_OBJECT = 1 << 14;
const F_RESULT_OBJECT = 1 << 15;
/** Value types (2 bits): absent, null, number, string (index into `strings`). */
const T_ABSENT = 0;
const T_NULL = 1;
const T_NUMBER = 2;
const T_STRING = 3;

const LF = 0x0a;
const CR = 0x0d;

/** Numbers the chunks a thread processes, for the keys cached on checks (`SchemaCheck.chunkKey`). */
let chunkGeneration = 0;

/** Lines at least this long get result checks against every result definition (see `compact`). */
const CANDIDATE_MIN_BYTES = 16 * 1024;

/**
 * Request methods of all MCP revisions (2024-11-05 … 2026-07-28). A response whose request is not
 * in the same chunk is checked against the result definitions of these (and of every request
 * method the worker has seen), so that the main thread rarely has to re-validate it.
 */
const KNOWN_REQUEST_METHODS = [
  "initialize",
  "ping",
  "tools/list",
  "tools/call",
  "prompts/list",
  "prompts/get",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
  "logging/setLevel",
  "completion/complete",
  "sampling/createMessage",
  "roots/list",
  "elicitation/create",
  "tasks/get",
  "tasks/list",
  "tasks/cancel",
  "tasks/result",
  "server/discover",
  "subscriptions/listen",
];

type Id = string | number;

/** What a worker guesses about a session while reading a chunk. */
interface Guess {
  validators: ProtocolValidators;
  defs: Defs;
  version: string;
  /** Requests seen in this chunk: id → method, per sender. */
  pending: { c2s: RequestMethods; s2c: RequestMethods };
}

/** Slots of a {@link RequestMethods} ring (a power of two). */
const REQUEST_RING_SLOTS = 256;

/**
 * The methods of requests seen in a chunk by id, for the guesses (which result definition a
 * response is checked against, whether it answers initialize): a `Map<id, method>` for ids that
 * are not small non-negative integers, and for those a ring indexed by `id mod 256`, which costs
 * no hash-table insert per request. A later request whose id falls in the same slot replaces an
 * earlier one; a response to the earlier one then finds nothing, as for a request in an earlier
 * chunk: its verdicts are left to the main thread (a miss), so the findings do not change.
 */
class RequestMethods {
  private readonly ids = new Float64Array(REQUEST_RING_SLOTS).fill(-1);
  private readonly methods: (string | undefined)[] = new Array<string | undefined>(REQUEST_RING_SLOTS).fill(undefined);
  private readonly other = new Map<Id, string>();

  set(id: Id, method: string): void {
    if (typeof id === "number" && id >= 0 && id === (id | 0)) {
      const i = id & (REQUEST_RING_SLOTS - 1);
      this.ids[i] = id;
      this.methods[i] = method;
    } else {
      this.other.set(id, method);
    }
  }

  get(id: Id): string | undefined {
    if (typeof id === "number" && id >= 0 && id === (id | 0)) {
      const i = id & (REQUEST_RING_SLOTS - 1);
      return this.ids[i] === id ? this.methods[i] : undefined;
    }
    return this.other.size === 0 ? undefined : this.other.get(id);
  }
}

/** Row stores a processor keeps for reuse ({@link RowPool}); more in use at once are not kept. */
const POOLED_ROW_STORES = 64;

/**
 * Row stores of a processor, reused: each is a Float64Array over a SharedArrayBuffer whose first
 * 8 bytes hold an in-use flag (Int32 at 0). A store goes out with its {@link ChunkResult}
 * (shared, not copied or transferred) and the thread that reads the rows hands it back with
 * {@link releaseRows} (an `Atomics.store` of the flag), so that no new memory is allocated per
 * chunk: a fresh ~170 KB store per 1 MiB chunk cost the worker the allocation and its zeroing,
 * and both threads the garbage collections that external memory brings on (BENCHMARKS.md).
 */
class RowPool {
  private readonly stores: Float64Array[] = [];
  /** `flags[i]`: the in-use flag of `stores[i]`. */
  private readonly flags: Int32Array[] = [];

  /** A free store of at least `length` numbers, marked in use. */
  take(length: number): Float64Array {
    const { stores, flags } = this;
    for (let i = 0; i < stores.length; i++) {
      if (Atomics.load(flags[i]!, 0) !== 0) continue;
      if (stores[i]!.length >= length) {
        Atomics.store(flags[i]!, 0, 1);
        return stores[i]!;
      }
      // Free but too small: replaced by a larger one below.
      stores.splice(i, 1);
      flags.splice(i--, 1);
    }
    const d = new Float64Array(new SharedArrayBuffer(8 + 8 * length), 8, length);
    const flag = new Int32Array(d.buffer, 0, 1);
    Atomics.store(flag, 0, 1);
    if (stores.length < POOLED_ROW_STORES) {
      stores.push(d);
      flags.push(flag);
    }
    return d;
  }
}

/** Marks a store taken from a {@link RowPool} free again (a no-op for any other array). */
function releaseStore(rows: Float64Array): void {
  const buffer = rows.buffer;
  if (buffer instanceof SharedArrayBuffer && rows.byteOffset === 8) Atomics.store(new Int32Array(buffer, 0, 1), 0, 0);
}

/**
 * Hands the row store of `result` back to the processor that filled it, once its rows have been
 * read (a no-op for results without one). The result's rows must not be read afterwards.
 */
export function releaseRows(result: ChunkResult): void {
  releaseStore(result.rows);
}

/** A growing row store taken from a {@link RowPool}. */
class Rows {
  data: Float64Array;
  count = 0;
  /** @param capacity rows to take at first (a larger store is taken when full). */
  constructor(
    private readonly pool: RowPool,
    capacity: number,
  ) {
    this.data = pool.take(COLS * Math.max(64, capacity));
  }
  add(): number {
    const base = this.count * COLS;
    if (base + COLS > this.data.length) {
      const grown = this.pool.take(this.data.length * 2);
      grown.set(this.data.subarray(0, base));
      releaseStore(this.data);
      this.data = grown;
    }
    this.count++;
    return base;
  }
}

/** The format reader of a processor for one (format, direction), fed line by line. */
interface ChunkReader {
  consumer: LineConsumer;
  byteLines: ((bytes: Buffer, start: number, end: number, lineNo: number) => boolean) | undefined;
}

/**
 * Worker side: turns chunks into {@link ChunkResult}s. One instance per worker (it caches
 * definitions across chunks). Pure computation; `process` is synchronous.
 *
 * Everything that runs per line is a method (of this class or of {@link ChunkRun}, the state of
 * the chunk being processed), and the format readers are built once per processor over a
 * dispatch that forwards to the current chunk: functions created anew for every chunk would give
 * the compiler new call targets every chunk, and cost it recompilations.
 */
export class ChunkProcessor {
  /** Request methods seen so far (for result candidates). */
  private readonly seen = new Set<string>(KNOWN_REQUEST_METHODS);
  /** Read buffer of range tasks, reused from chunk to chunk (grown when a chunk needs more). */
  private scratch: Buffer | undefined;
  private candidates = new Map<Defs, { c2s?: SchemaCheck[]; s2c?: SchemaCheck[] }>();
  /** Rows the largest chunk so far needed (the first allocation of the next chunk's row store). */
  private rowsHint = 1024;
  /** @internal Row stores of this processor's results. */
  readonly rowPool = new RowPool();
  /** The chunk being processed: where the readers' events go. */
  private current: ChunkRun | undefined;
  private readonly readers = new Map<string, ChunkReader>();
  private readonly forward: Dispatch = {
    message: (value, _origin, dir, session) => this.current!.onMessage(value, dir, session),
    unparsable: () => this.current!.onLocal(),
    problem: () => this.current!.onLocal(),
    skip: () => this.current!.onSkip(),
    defer: () => this.current!.onLocal(),
  };

  constructor(readonly setup: ValidatorSetup) {}

  private reader(format: Exclude<InputFormat, "har">, direction: Direction): ChunkReader {
    const key = `${format} ${direction}`;
    let r = this.readers.get(key);
    if (r === undefined) {
      const consumer = lineReader(format, this.forward, direction);
      // Lines read from their bytes when possible: long base64 lines, the format's fast path.
      r = { consumer, byteLines: byteLineReader(format, consumer, this.forward, direction) };
      this.readers.set(key, r);
    }
    return r;
  }

  /** Processes `task`. Never throws for bad traffic; schema errors become LOCAL lines or misses. */
  process(task: ChunkTask): ChunkResult {
    const { format, direction, maxLineBytes } = task.file;
    let bytes: Buffer;
    let len: number;
    let fileStart: number | undefined;
    /** Bytes of an over-long line that starts in the range and ends past the bytes read. */
    let tailTooLong = -1;
    if (task.range !== undefined) {
      let read: RangeBytes;
      try {
        read = readRange(task.range, maxLineBytes, this.scratch);
      } catch (err) {
        return emptyResult(task.id, err instanceof Error ? err.message : String(err));
      }
      this.scratch = read.buffer;
      bytes = read.buffer.subarray(0, read.length); // (the rest of the reused buffer is stale)
      len = read.length;
      fileStart = read.start;
      tailTooLong = read.tooLong;
    } else {
      bytes = Buffer.from(task.buffer!, 0, task.length!);
      len = task.length!;
    }
    const { consumer, byteLines } = this.reader(format, direction);
    // As many rows as the largest chunk so far needed: no growing (and copying) as a rule.
    const c = new ChunkRun(this, task, format !== "jsonl", this.rowsHint);
    const rows = c.rows;
    this.current = c;
    try {
      let start = 0;
      while (start < len) {
        const nl = bytes.indexOf(LF, start);
        const end = nl === -1 ? len : nl;
        const lineNo = ++c.lineNo;
        if (end - start > maxLineBytes) {
          const b = rows.add();
          rows.data[b + C_LINE] = lineNo;
          rows.data[b + C_CODE] = KIND_TOOLONG;
          rows.data[b + C_ID] = end - start;
        } else {
          let textStart = start;
          const textEnd = end > start && bytes[end - 1] === CR ? end - 1 : end;
          if (task.first && lineNo === 1 && textEnd - start >= 3 && bytes[start] === 0xef && bytes[start + 1] === 0xbb && bytes[start + 2] === 0xbf) {
            textStart += 3;
          }
          c.startLine(textStart, textEnd - textStart);
          const skippedBefore = c.skipped;
          let bad = false;
          if (byteLines === undefined || !byteLines(bytes, textStart, textEnd, lineNo)) {
            const text = bytes.toString("utf8", textStart, textEnd);
            consumer.line(text, lineNo);
            bad = badUtf8(text, bytes, textStart, textEnd);
          }
          if (bad) {
            // Not valid UTF-8: the main thread reports it (pipeline.ts) and redoes the line.
            c.skipped = skippedBefore;
            c.addLocal();
          } else if (c.events !== 1) {
            // Not one event per line (never expected): let the main thread redo the line.
            c.skipped = skippedBefore;
            c.addLocal();
          } else if (c.local) {
            c.addLocal();
          } else if (c.skipped === skippedBefore && !c.compact(c.msgValue, c.msgDir, c.msgSession)) {
            c.addLocal();
          }
        }
        if (nl === -1) break;
        start = nl + 1;
      }
    } catch (err) {
      releaseStore(rows.data); // (no result will carry it)
      throw err;
    } finally {
      this.current = undefined;
    }

    if (tailTooLong >= 0) {
      const b = rows.add();
      rows.data[b + C_LINE] = ++c.lineNo;
      rows.data[b + C_CODE] = KIND_TOOLONG;
      rows.data[b + C_ID] = tailTooLong;
    }

    if (rows.count > this.rowsHint) this.rowsHint = rows.count;
    return {
      id: task.id,
      buffer: fileStart === undefined ? task.buffer! : new ArrayBuffer(0),
      length: fileStart === undefined ? len : 0,
      ...(fileStart === undefined ? {} : { fileStart }),
      lines: c.lineNo,
      skipped: c.skipped,
      rows: rows.data,
      count: rows.count,
      strings: c.strings,
      keyTargets: c.keyTargets,
      keyDefs: c.keyDefs,
      sets: c.sets,
      failures: c.failures,
    };
  }

  /** @internal A new request method was seen: the result candidates are computed again. */
  sawMethod(method: string): void {
    if (!this.seen.has(method)) {
      this.seen.add(method);
      this.candidates.clear();
    }
  }

  /** @internal Follows version changes and initialize requests in messages the main thread will redo. */
  followHandshake(f: MessageFacts, dir: Direction, g: Guess, run: ChunkRun): void {
    if (f.shape === SHAPE_REQUEST && f.method === "initialize" && dir === "c2s") {
      // As the checker: the requested version when it is initialize-based, else the newest such one.
      const initializeBased = (v: string): boolean => this.setup.resolve(v)?.messageDefinition("c2s", "initialize") !== undefined;
      const requested = f.requestedVersion;
      const guess = requested !== undefined && initializeBased(requested) ? requested : LEGACY_PROTOCOL_VERSIONS.find(initializeBased);
      run.switchGuess(g, guess ?? this.setup.defaultVersion);
    } else if (f.shape === SHAPE_RESULT && isObject(f.result) && typeof f.result.protocolVersion === "string") {
      const from: Direction = dir === "c2s" ? "s2c" : "c2s";
      const answersInitialize = isId(f.id) && g.pending[from].get(f.id) === "initialize";
      const negotiated = f.result.protocolVersion;
      if ((answersInitialize || (!run.bidirectional && dir === "s2c")) && this.setup.resolve(negotiated)?.messageDefinition("c2s", "initialize") !== undefined) {
        run.switchGuess(g, negotiated);
      }
    }
  }

  /** @internal Every result definition of requests sent in `dir` under `defs`, as checks (cached). */
  resultCandidates(defs: Defs, dir: Direction): SchemaCheck[] {
    let entry = this.candidates.get(defs);
    if (entry === undefined) {
      entry = {};
      this.candidates.set(defs, entry);
    }
    let list = entry[dir];
    if (list === undefined) {
      const found = new Map<string, SchemaCheck>();
      for (const m of this.seen) {
        const info = defs.method(dir, m);
        if (info.def?.kind === "request" && info.result !== undefined && !found.has(info.result)) found.set(info.result, info.resultCheck!);
      }
      list = [...found.values()];
      entry[dir] = list;
    }
    return list;
  }
}

/**
 * The state of one chunk being processed by a {@link ChunkProcessor}: the rows and tables of its
 * result, the sessions' guesses, and the line being read (see the module comment).
 */
class ChunkRun {
  readonly rows: Rows;
  readonly strings: string[] = [];
  readonly keyTargets: CheckTarget[] = [];
  readonly keyDefs: string[] = [];
  readonly sets: number[][] = [];
  readonly failures: Array<Record<number, SchemaIssue[]>> = [];
  private readonly interned = new Map<string, number>();
  private readonly messageKeys = new Map<string, number>();
  private readonly resultKeys = new Map<string, number>();
  private readonly setIndex = new Map<string | number, number>();
  /** This chunk's number: its key of a check is cached on the check (no lookup per message). */
  private readonly generation = ++chunkGeneration;
  private lastVersion = "";
  private lastVersionIndex = -1;
  private lastSeen = "";
  private lastMethod = "";
  private lastMethodIndex = -1;
  private readonly guesses = new Map<string, Guess>();
  private readonly hints: Map<string, string>;
  private lastGuessKey: string | undefined = undefined;
  private lastGuess: Guess | undefined = undefined;

  // The line being read, and what the reader said about it.
  lineNo = 0;
  private textOff = 0;
  private textLen = 0;
  events = 0;
  local = false;
  skipped = 0;
  msgValue: unknown = undefined;
  msgDir: Direction = "c2s";
  msgSession: string | undefined = undefined;
  private readonly facts: MessageFacts = newFacts();
  // Checks run on the current message: the first two keys, then any others.
  private k1 = -1;
  private k2 = -1;
  private more: number[] | undefined = undefined;
  private failed: Record<number, SchemaIssue[]> | undefined = undefined;

  constructor(
    private readonly p: ChunkProcessor,
    task: ChunkTask,
    readonly bidirectional: boolean,
    rowsCapacity: number,
  ) {
    this.rows = new Rows(p.rowPool, rowsCapacity);
    this.hints = new Map(task.hints);
  }

  startLine(textOff: number, textLen: number): void {
    this.textOff = textOff;
    this.textLen = textLen;
    this.events = 0;
    this.local = false;
    this.msgValue = undefined;
    this.msgSession = undefined;
  }

  // Reader events.
  onMessage(value: unknown, dir: Direction, session: string | undefined): void {
    this.events++;
    this.msgValue = value;
    this.msgDir = dir;
    this.msgSession = session;
  }
  onLocal(): void {
    this.events++;
    this.local = true;
  }
  onSkip(): void {
    this.events++;
    this.skipped++;
  }

  private intern(s: string): number {
    let i = this.interned.get(s);
    if (i === undefined) {
      i = this.strings.length;
      this.strings.push(s);
      this.interned.set(s, i);
    }
    return i;
  }

  private keyOf(target: CheckTarget, check: SchemaCheck): number {
    if (check.chunkGeneration === this.generation) return check.chunkKey;
    const index = target === "message" ? this.messageKeys : this.resultKeys;
    const def = check.definition;
    let k = index.get(def);
    if (k === undefined) {
      k = this.keyDefs.length;
      this.keyDefs.push(def);
      this.keyTargets.push(target);
      index.set(def, k);
    }
    check.chunkGeneration = this.generation;
    check.chunkKey = k;
    return k;
  }

  private guessFor(session: string): Guess {
    if (session === this.lastGuessKey && this.lastGuess !== undefined) return this.lastGuess;
    let g = this.guesses.get(session);
    if (g === undefined) {
      const setup = this.p.setup;
      const wanted = setup.forcedVersion ?? this.hints.get(session) ?? setup.defaultVersion;
      let version = wanted;
      let validators = setup.resolve(wanted);
      if (validators === undefined) {
        version = setup.forcedVersion ?? setup.defaultVersion;
        validators = setup.resolve(version)!;
      }
      g = { validators, defs: defsFor(validators), version, pending: { c2s: new RequestMethods(), s2c: new RequestMethods() } };
      this.guesses.set(session, g);
    }
    this.lastGuessKey = session;
    this.lastGuess = g;
    return g;
  }

  /** @internal */
  switchGuess(g: Guess, version: string): void {
    const setup = this.p.setup;
    if (setup.forcedVersion !== undefined || version === g.version) return;
    const v = setup.resolve(version);
    if (v === undefined) return;
    g.validators = v;
    g.defs = defsFor(v);
    g.version = version;
  }

  private run(target: CheckTarget, check: SchemaCheck, data: unknown, onlyPasses = false): void {
    if (check.definition === "") return;
    let issues: SchemaIssue[] | null;
    try {
      issues = check.run(data);
    } catch {
      return; // not recorded: the main thread validates (and reports the unusable schema)
    }
    const bad = issues !== null && issues.length > 0;
    if (onlyPasses && bad) return;
    const k = this.keyOf(target, check);
    if (this.k1 < 0) this.k1 = k;
    else if (this.k2 < 0) this.k2 = k;
    else (this.more ??= []).push(k);
    if (bad) (this.failed ??= {})[k] = issues!;
  }

  addLocal(): void {
    const b = this.rows.add();
    const d = this.rows.data;
    d[b + C_LINE] = this.lineNo;
    d[b + C_CODE] = KIND_LOCAL;
    d[b + C_OFF] = this.textOff;
    d[b + C_LEN] = this.textLen;
  }

  /** Encodes a compactable message and runs its schema checks; false when it is not compactable. */
  compact(value: unknown, dir: Direction, session: string | undefined): boolean {
    if (Array.isArray(value)) return false;
    const bidirectional = this.bidirectional;
    const f = factsOf(value, this.facts);
    const g = this.guessFor(session ?? "");
    const shape = f.shape;
    const from: Direction = dir === "c2s" ? "s2c" : "c2s";
    // Requests remembered for the result guesses, whatever the row becomes.
    if (shape === SHAPE_REQUEST && isId(f.id)) {
      g.pending[dir].set(f.id, f.method);
      if (f.method !== this.lastSeen) {
        this.lastSeen = f.method;
        this.p.sawMethod(f.method);
      }
    }
    let ok = f.jsonrpcOk && (shape === SHAPE_REQUEST || shape === SHAPE_NOTIFICATION || shape === SHAPE_RESULT || shape === SHAPE_ERROR);
    const idType = typeOf(f.id);
    if (ok && idType < 0) ok = false;
    if (ok && shape === SHAPE_REQUEST && (f.method === "initialize" || f.id === undefined)) ok = false;
    const result = shape === SHAPE_RESULT ? f.result : undefined;
    const resultObject = isObject(result);
    // The method of the request a result answers, when that request is in this chunk.
    const answers = shape === SHAPE_RESULT && bidirectional && isId(f.id) ? g.pending[from].get(f.id) : undefined;
    // A row carries `{}` for an object result. The checker reads the members of the handshake
    // results it acts on: with both directions in the input, it re-reads the line of a result
    // answering initialize or server/discover (rare); the initialize result of this chunk is
    // read here (LOCAL), so that the version guess follows it. With one direction (server-side
    // JSONL), any result may be a handshake result (checker `serverSideResult`).
    if (ok && resultObject) {
      if (bidirectional ? answers === "initialize" : "protocolVersion" in result || "capabilities" in result || "serverInfo" in result) ok = false;
    }
    if (!ok) {
      this.p.followHandshake(f, dir, g, this);
      return false;
    }

    this.k1 = -1;
    this.k2 = -1;
    this.more = undefined;
    this.failed = undefined;
    const env = g.defs.envelopeChecks;
    if (shape === SHAPE_REQUEST) {
      this.run("message", env.request, value);
      const info = g.defs.method(dir, f.method);
      if (info.def !== undefined && info.def.kind === "request") this.run("message", info.defCheck!, value);
    } else if (shape === SHAPE_NOTIFICATION) {
      this.run("message", env.notification, value);
      const info = g.defs.method(dir, f.method);
      if (info.def !== undefined && info.def.kind === "notification") this.run("message", info.defCheck!, value);
    } else {
      this.run("message", shape === SHAPE_ERROR ? env.error : env.result, value);
      if (shape === SHAPE_RESULT && bidirectional && isId(f.id)) {
        if (answers !== undefined) {
          const rc = g.defs.method(from, answers).resultCheck;
          if (rc !== undefined) this.run("result", rc, result);
        } else if (this.textLen >= CANDIDATE_MIN_BYTES) {
          // The request is in an earlier chunk. A large result (images, audio) is checked here
          // against every result definition, keeping the ones it passes; the main thread
          // re-validates small ones itself, and large ones only when their definition failed.
          for (const rc of this.p.resultCandidates(g.defs, from)) this.run("result", rc, result, true);
        }
      }
    }

    const strings = this.strings;
    const b = this.rows.add();
    const d = this.rows.data;
    let code = KIND_COMPACT | (dir === "s2c" ? F_S2C : 0) | (shape << SHAPE_SHIFT) | (idType << ID_SHIFT);
    d[b + C_LINE] = this.lineNo;
    d[b + C_SESSION] = session === undefined ? -1 : this.intern(session);
    d[b + C_ID] = encode(f.id, idType, strings);
    if (shape === SHAPE_REQUEST || shape === SHAPE_NOTIFICATION) {
      if (f.method !== this.lastMethod) {
        this.lastMethod = f.method;
        this.lastMethodIndex = this.intern(f.method);
      }
      d[b + C_METHOD] = this.lastMethodIndex;
      const tokenType = f.token === undefined ? T_ABSENT : typeOf(f.token);
      code |= tokenType << TOKEN_SHIFT;
      d[b + C_TOKEN] = encode(f.token, tokenType, strings);
    }
    if (shape === SHAPE_NOTIFICATION) {
      if (f.paramsObject) code |= F_PARAMS_OBJECT;
      const reqType = isId(f.requestId) ? typeOf(f.requestId) : T_ABSENT;
      code |= reqType << REQID_SHIFT;
      d[b + C_REQID] = encode(f.requestId, reqType, strings);
      if (typeof f.progress === "number") {
        code |= F_PROGRESS;
        d[b + C_PROGRESS] = f.progress;
      }
    }
    if (resultObject) code |= F_RESULT_OBJECT;
    d[b + C_CODE] = code;
    if (g.version !== this.lastVersion) {
      this.lastVersion = g.version;
      this.lastVersionIndex = this.intern(g.version);
    }
    d[b + C_VER] = this.lastVersionIndex;
    d[b + C_K1] = this.k1;
    d[b + C_K2] = this.k2;
    d[b + C_SET] = this.more === undefined ? -1 : internSet(this.more, this.sets, this.setIndex);
    if (this.failed !== undefined) {
      d[b + C_FAIL] = this.failures.length;
      this.failures.push(this.failed);
    } else {
      d[b + C_FAIL] = -1;
    }
    d[b + C_OFF] = this.textOff;
    d[b + C_LEN] = this.textLen;
    return true;
  }
}

/**
 * What {@link readRange} read: whole lines in `buffer[0, length)`, read from file position
 * `start`, and a dropped over-long last line.
 */
export interface RangeBytes {
  buffer: Buffer;
  start: number;
  length: number;
  /** Bytes (without the LF) of an over-long last line that was not kept; -1 when none. */
  tooLong: number;
}


/** Block size for scans past the range (finding a line start or end). */
const SCAN_BYTES = 64 * 1024;

/**
 * Reads the lines that start in `[start, end)` of the file (see {@link ChunkRange}): skips the end
 * of a line that started before `start`, and reads the last line to its LF (or EOF) past `end`.
 * A last line longer than `maxLineBytes` is counted, not kept. Synchronous positioned reads, into
 * `scratch` when it is large enough (else into a new buffer, returned for reuse).
 * @throws the read error (EIO...).
 */
export function readRange(range: ChunkRange, maxLineBytes: number, scratch?: Buffer): RangeBytes {
  const { fd, end, size } = range;
  let pos = range.start;
  // Reads stop at `size`: a file that grows meanwhile is read as it was when opened.
  const readAt = (into: Buffer, offset: number, wanted: number, position: number): number => {
    const length = Math.max(0, Math.min(wanted, size - position));
    let n = 0;
    while (n < length) {
      const got = readSync(fd, into, offset + n, length - n, position + n);
      if (got === 0) break;
      n += got;
    }
    return n;
  };
  const none: RangeBytes = { buffer: scratch ?? Buffer.alloc(0), start: pos, length: 0, tooLong: -1 };
  if (pos >= end || pos >= size) return none;
  if (pos > 0) {
    // A line starts at `pos` only right after an LF; otherwise the first line here starts after the next LF.
    const probe = Buffer.allocUnsafe(SCAN_BYTES);
    if (readAt(probe, 0, 1, pos - 1) === 1 && probe[0] !== LF) {
      let found = -1;
      while (pos < end && found < 0) {
        const n = readAt(probe, 0, Math.min(SCAN_BYTES, end - pos), pos);
        if (n === 0) return none;
        const i = probe.indexOf(LF);
        if (i >= 0 && i < n) found = pos + i;
        else pos += n;
      }
      if (found < 0 || found + 1 >= end) return none;
      pos = found + 1;
    }
  }
  const want = end - pos + SCAN_BYTES;
  let buf = scratch !== undefined && scratch.length >= want ? scratch : Buffer.allocUnsafeSlow(Math.max(want, 2 * (scratch?.length ?? 0)));
  let length = readAt(buf, 0, end - pos, pos);
  const out = (len: number, tooLong: number): RangeBytes => ({ buffer: buf, start: pos, length: len, tooLong });
  if (length === 0) return none;
  if (length < end - pos || end >= size || buf[length - 1] === LF) return out(length, -1);
  // Complete the last line, which starts after the last LF read (or at `pos`).
  const lastStart = buf.lastIndexOf(LF, length - 1) + 1;
  for (;;) {
    if (length === buf.length) {
      const grown = Buffer.allocUnsafeSlow(buf.length * 2);
      buf.copy(grown, 0, 0, length);
      buf = grown;
    }
    const n = readAt(buf, length, Math.min(buf.length - length, SCAN_BYTES), pos + length);
    if (n === 0) return out(length, -1); // EOF: unterminated last line
    const i = buf.indexOf(LF, length);
    if (i >= 0 && i < length + n) {
      if (i - lastStart > maxLineBytes) return out(lastStart, i - lastStart);
      return out(i + 1, -1);
    }
    length += n;
    if (length - lastStart > maxLineBytes) {
      // Too long: count the rest of the line without keeping it.
      let count = length - lastStart;
      let at = pos + length;
      const scan = Buffer.allocUnsafe(SCAN_BYTES);
      for (;;) {
        const m = readAt(scan, 0, SCAN_BYTES, at);
        if (m === 0) break;
        const j = scan.indexOf(LF);
        if (j >= 0 && j < m) {
          count += j;
          break;
        }
        count += m;
        at += m;
      }
      return out(lastStart, count);
    }
  }
}

function emptyResult(id: number, readError: string): ChunkResult {
  return {
    id,
    buffer: new ArrayBuffer(0),
    length: 0,
    readError,
    lines: 0,
    skipped: 0,
    rows: new Float64Array(0),
    count: 0,
    strings: [],
    keyTargets: [],
    keyDefs: [],
    sets: [],
    failures: [],
  };
}

/** The 2-bit type of an id-like value; -1 when rows cannot carry it (objects, booleans...). */
function typeOf(v: unknown): number {
  if (v === undefined) return T_ABSENT;
  if (v === null) return T_NULL;
  if (typeof v === "number") return T_NUMBER;
  if (typeof v === "string") return T_STRING;
  return -1;
}

function encode(v: unknown, type: number, strings: string[]): number {
  if (type === T_NUMBER) return v as number;
  if (type === T_STRING) {
    strings.push(v as string);
    return strings.length - 1;
  }
  return 0;
}

function decode(type: number, n: number, strings: readonly string[]): unknown {
  switch (type) {
    case T_NUMBER:
      return n;
    case T_STRING:
      return strings[n];
    case T_NULL:
      return null;
    default:
      return undefined;
  }
}

function internSet(keys: readonly number[], sets: number[][], index: Map<string | number, number>): number {
  // A number for the usual few small keys (no string building per message), else the joined list.
  let name: string | number = 0;
  if (keys.length <= 4) {
    for (let j = 0; j < keys.length; j++) {
      const k = keys[j]!;
      if (k >= 255) {
        name = keys.join(",");
        break;
      }
      name = (name as number) * 256 + k + 1;
    }
  } else {
    name = keys.join(",");
  }
  let i = index.get(name);
  if (i === undefined) {
    i = sets.length;
    sets.push([...keys]);
    index.set(name, i);
  }
  return i;
}

/** Placeholder result of a compact response whose result was an object (without handshake members). */
const OBJECT_RESULT: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * Main-thread view of a {@link ChunkResult}: decodes rows into {@link MessageFacts} and answers
 * the checker's schema questions from the worker's verdicts. `reread` parses one line's text
 * again (the format's reader) for misses.
 */
export class ChunkView implements VerdictSource {
  readonly rows: Float64Array;
  readonly bytes: Buffer;

  /**
   * @param reread parses one line's text again with the format's reader.
   * @param fd the file of a range task, from which line texts are read again (`fileStart`).
   */
  constructor(
    readonly result: ChunkResult,
    private readonly reread: (text: string, line: number) => unknown,
    private readonly fd?: number,
  ) {
    this.rows = result.rows;
    this.bytes = Buffer.from(result.buffer, 0, result.length);
  }

  /** The text of row `row`'s line. @throws a read error when it must be read from the file again. */
  text(row: number): string {
    return this.lineBytes(row).toString("utf8");
  }

  /** True when the line of row `row` is not valid UTF-8. */
  badUtf8(row: number): boolean {
    return !isUtf8(this.lineBytes(row));
  }

  private lineBytes(row: number): Buffer {
    const b = row * COLS;
    const off = this.rows[b + C_OFF]!;
    const len = this.rows[b + C_LEN]!;
    const fileStart = this.result.fileStart;
    if (fileStart === undefined) return this.bytes.subarray(off, off + len);
    const buf = Buffer.allocUnsafe(len);
    let n = 0;
    while (n < len) {
      const got = readSync(this.fd!, buf, n, len - n, fileStart + off + n);
      if (got === 0) throw new Error("file shrank while being read");
      n += got;
    }
    return buf;
  }

  /** Row kind (KIND_*). */
  kind(row: number): number {
    return this.rows[row * COLS + C_CODE]! & 7;
  }

  /** Line of the row within the chunk (1-based). */
  line(row: number): number {
    return this.rows[row * COLS + C_LINE]!;
  }

  /** Bytes of a TOOLONG row's line. */
  tooLongBytes(row: number): number {
    return this.rows[row * COLS + C_ID]!;
  }

  /** Session key of a compact row (undefined: the file's only session). */
  session(row: number): string | undefined {
    const s = this.rows[row * COLS + C_SESSION]!;
    return s < 0 ? undefined : this.result.strings[s];
  }

  /** Direction of a compact row. */
  direction(row: number): Direction {
    return (this.rows[row * COLS + C_CODE]! & F_S2C) !== 0 ? "s2c" : "c2s";
  }

  /** Fills `f` from compact row `row`. */
  fill(row: number, f: MessageFacts): void {
    const d = this.rows;
    const b = row * COLS;
    const code = d[b + C_CODE]!;
    const strings = this.result.strings;
    const shape = (code >> SHAPE_SHIFT) & 7;
    f.value = undefined;
    f.source = this;
    f.row = row;
    f.shape = shape;
    f.jsonrpcOk = true;
    f.jsonrpc = "2.0";
    f.id = decode((code >> ID_SHIFT) & 3, d[b + C_ID]!, strings);
    if (shape === SHAPE_REQUEST || shape === SHAPE_NOTIFICATION) {
      f.method = strings[d[b + C_METHOD]!]!;
      f.token = decode((code >> TOKEN_SHIFT) & 3, d[b + C_TOKEN]!, strings) as Id | undefined;
      f.clientCaps = undefined;
      f.requestedVersion = undefined;
      if (shape === SHAPE_NOTIFICATION) {
        f.paramsObject = (code & F_PARAMS_OBJECT) !== 0;
        f.requestId = decode((code >> REQID_SHIFT) & 3, d[b + C_REQID]!, strings);
        f.progress = (code & F_PROGRESS) !== 0 ? d[b + C_PROGRESS] : undefined;
      }
    } else {
      f.result = (code & F_RESULT_OBJECT) !== 0 ? OBJECT_RESULT : null;
    }
  }

  verdict(row: number, definition: string, target: CheckTarget, version: string): SchemaIssue[] | null | typeof MISS {
    const d = this.rows;
    const b = row * COLS;
    const r = this.result;
    if (r.strings[d[b + C_VER]!] !== version) return MISS;
    let k = d[b + C_K1]!;
    if (k < 0) return MISS;
    if (r.keyDefs[k] !== definition || r.keyTargets[k] !== target) {
      k = d[b + C_K2]!;
      if (k < 0) return MISS;
      if (r.keyDefs[k] !== definition || r.keyTargets[k] !== target) {
        const s = d[b + C_SET]!;
        if (s < 0) return MISS;
        const set = r.sets[s]!;
        k = -1;
        for (let i = 0; i < set.length && k < 0; i++) {
          const c = set[i]!;
          if (r.keyDefs[c] === definition && r.keyTargets[c] === target) k = c;
        }
        if (k < 0) return MISS;
      }
    }
    const f = d[b + C_FAIL]!;
    return f < 0 ? null : (r.failures[f]![k] ?? null);
  }

  materialize(row: number): unknown {
    return this.reread(this.text(row), this.line(row));
  }
}
