/**
 * The request ids one side of a session has used, with the line of first use, for the
 * `session/reused-request-id` rule (MCP basic: an id MUST NOT have been used before by the
 * requestor in the same session).
 *
 * Most clients number their requests 0, 1, 2, ...: such ids go into a dense `Int32Array` indexed
 * by the id (4 bytes per id, no hashing, no per-entry allocation), which replaces a `Map` insert
 * per request — the costliest bookkeeping of the checker on large captures. Other ids (strings,
 * negative, fractional or far-apart numbers) go into a `Map`. The dense table only grows while it
 * stays well filled (a few sparse large ids cannot make it allocate much), so memory stays within
 * a small multiple of the number of ids remembered.
 */

/** Most ids remembered (beyond this, reuse of later ids goes undetected; bounds memory). */
export const MAX_REMEMBERED_IDS = 1 << 20;

/** Line numbers above this do not fit the dense table and use the Map. */
const MAX_DENSE_LINE = 0x7fffffff;
/** The dense table is grown to hold id `n` only if `n < DENSE_SLACK + 4 * (ids in it)`. */
const DENSE_SLACK = 1 << 16;

/** Ids of one sender with the line that first used each; see the module comment. */
export class IdRegistry {
  /** Ids remembered. */
  size = 0;
  private dense = new Int32Array(1024);
  private denseCount = 0;
  private readonly sparse = new Map<string | number, number>();

  /** The line that first used `id`, or undefined when it was not used (or not remembered). */
  firstLine(id: string | number): number | undefined {
    if (typeof id === "number" && id >= 0 && id < this.dense.length && Number.isInteger(id)) {
      const line = this.dense[id]!;
      if (line !== 0) return line;
      // Remembered before the table reached this id?
    }
    return this.sparse.size === 0 ? undefined : this.sparse.get(id);
  }

  /** Remembers that `id` was first used at `line` (a line >= 1). Ignored once {@link MAX_REMEMBERED_IDS} is reached. */
  remember(id: string | number, line: number): void {
    if (this.size >= MAX_REMEMBERED_IDS) return;
    this.size++;
    if (typeof id === "number" && id >= 0 && Number.isInteger(id) && line >= 1 && line <= MAX_DENSE_LINE) {
      if (id >= this.dense.length && id < DENSE_SLACK + 4 * this.denseCount) {
        let n = this.dense.length;
        while (n <= id) n *= 2;
        const grown = new Int32Array(n);
        grown.set(this.dense);
        this.dense = grown;
      }
      if (id < this.dense.length) {
        this.dense[id] = line;
        this.denseCount++;
        return;
      }
    }
    this.sparse.set(id, line);
  }
}
