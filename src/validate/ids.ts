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

/** An entry of an {@link InflightTable}: the id it is stored under, and its insertion rank (set by the table). */
export interface InflightEntry {
  readonly id: string | number;
  seq: number;
}

/** Slots of the {@link InflightTable} ring (a power of two). */
const RING_SLOTS = 1024;

/**
 * The requests one side has in flight, by id: what a `Map<id, entry>` does for the checker
 * (SameValueZero keys, iteration in first-insertion order, a `set` of a present id keeps its
 * place), without a hash-table insert and delete per request. A request with a non-negative
 * integer id goes into a fixed ring slot (`id mod 1024`); an older entry in that slot (a request
 * never answered, e.g. cancelled) moves to a `Map`, where any other id goes too. {@link values}
 * restores the insertion order from a counter. Clients that number requests 0, 1, 2, ... with
 * fewer than 1024 in flight only touch the Map for requests left unanswered that long.
 */
export class InflightTable<T extends InflightEntry> {
  /** Entries stored. */
  size = 0;
  private readonly ring: (T | undefined)[] = new Array<T | undefined>(RING_SLOTS).fill(undefined);
  private readonly sparse = new Map<string | number, T>();
  private nextSeq = 0;

  get(id: string | number): T | undefined {
    if (typeof id === "number" && id >= 0 && id <= 0x7fffffff && Number.isInteger(id)) {
      const slot = this.ring[id & (RING_SLOTS - 1)];
      if (slot !== undefined && slot.id === id) return slot;
    }
    return this.sparse.size === 0 ? undefined : this.sparse.get(id);
  }

  /** Stores `entry` under `entry.id`, replacing (in its place) an entry with that id. */
  set(entry: T): void {
    const id = entry.id;
    const ringable = typeof id === "number" && id >= 0 && id <= 0x7fffffff && Number.isInteger(id);
    if (ringable) {
      const i = (id as number) & (RING_SLOTS - 1);
      const slot = this.ring[i];
      if (slot !== undefined && slot.id === id) {
        entry.seq = slot.seq;
        this.ring[i] = entry;
        return;
      }
      // Not in the ring; it may be in the Map (stored there before).
      const old = this.sparse.size === 0 ? undefined : this.sparse.get(id);
      if (old !== undefined) {
        entry.seq = old.seq;
        this.sparse.set(id, entry);
        return;
      }
      entry.seq = this.nextSeq++;
      this.size++;
      if (slot !== undefined) this.sparse.set(slot.id, slot); // the older entry makes room
      this.ring[i] = entry;
      return;
    }
    const old = this.sparse.get(id);
    if (old !== undefined) entry.seq = old.seq;
    else {
      entry.seq = this.nextSeq++;
      this.size++;
    }
    this.sparse.set(id, entry);
  }

  /** Removes the entry with `id`, if any. */
  delete(id: string | number): void {
    if (typeof id === "number" && id >= 0 && id <= 0x7fffffff && Number.isInteger(id)) {
      const i = id & (RING_SLOTS - 1);
      const slot = this.ring[i];
      if (slot !== undefined && slot.id === id) {
        this.ring[i] = undefined;
        this.size--;
        return;
      }
    }
    if (this.sparse.size !== 0 && this.sparse.delete(id)) this.size--;
  }

  /** The entries in the order their ids were first set (as a Map iterates). */
  values(): T[] {
    const out: T[] = [];
    if (this.size === 0) return out;
    for (const e of this.ring) if (e !== undefined) out.push(e);
    for (const e of this.sparse.values()) out.push(e);
    return out.sort((a, b) => a.seq - b.seq);
  }
}

/** Entries a {@link TokenTable} keeps in its arrays; older ones move to its Map. */
const TOKEN_ARRAY_MAX = 8;

/** SameValueZero, the key equality of `Map`. */
const sameKey = (a: string | number, b: string | number): boolean => a === b || (a !== a && b !== b);

/**
 * A map from progress tokens to values with `Map`'s get/set/delete semantics (SameValueZero keys;
 * it is not iterated) that costs no hash-table insert and delete per request: the 8 most recently
 * added entries live in two arrays searched linearly (a session rarely has more than a few tokens
 * in use at once); when they are full, one of them moves to a `Map` (tokens of requests left
 * unanswered, e.g. cancelled ones, end up there). Each key is in one place only.
 */
export class TokenTable<T> {
  private readonly keys: (string | number)[] = [];
  private readonly vals: T[] = [];
  private readonly map = new Map<string | number, T>();

  get(key: string | number): T | undefined {
    const keys = this.keys;
    for (let i = 0; i < keys.length; i++) if (sameKey(keys[i]!, key)) return this.vals[i];
    return this.map.size === 0 ? undefined : this.map.get(key);
  }

  set(key: string | number, value: T): void {
    const keys = this.keys;
    for (let i = 0; i < keys.length; i++) {
      if (sameKey(keys[i]!, key)) {
        this.vals[i] = value;
        return;
      }
    }
    if (this.map.size !== 0 && this.map.has(key)) {
      this.map.set(key, value);
      return;
    }
    if (keys.length === TOKEN_ARRAY_MAX) {
      // The oldest entry (the arrays keep insertion order) moves to the Map.
      this.map.set(keys.shift()!, this.vals.shift()!);
    }
    keys.push(key);
    this.vals.push(value);
  }

  delete(key: string | number): void {
    const keys = this.keys;
    for (let i = 0; i < keys.length; i++) {
      if (sameKey(keys[i]!, key)) {
        const vals = this.vals;
        for (let j = i + 1; j < keys.length; j++) {
          keys[j - 1] = keys[j]!;
          vals[j - 1] = vals[j]!;
        }
        keys.pop();
        vals.pop();
        return;
      }
    }
    if (this.map.size !== 0) this.map.delete(key);
  }
}
