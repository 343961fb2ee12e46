import deepEqual from "fast-deep-equal";

/**
 * A cache of one named list the orchestrator serves (its tools, its prompts), used for checks
 * before the network hop: argument validation (`tools/call`), required prompt arguments and
 * unknown prompt names (`prompts/get`).
 *
 * Filled by every full fetch of the list (a `tools/list` from the client refreshes it too).
 * A lookup of a name not in the cache fetches the list once; concurrent fetches share one RPC;
 * a name still missing after a fetch is not fetched for again for {@link MISSING_RETRY_MS}, or
 * until the cache is refreshed or invalidated (e.g. on a tool-change event from the orchestrator):
 * an orchestrator without change events (upstream Go) that lists a tool late, e.g. a plugin that
 * registers after a restart, is seen at the next lookup after that delay, not never.
 * {@link NamedCatalog.refresh} tells whether the list really changed since the last full fetch.
 */
/** How long a name found missing is answered from the cache before a lookup fetches the list again (ms). */
export const MISSING_RETRY_MS = 1_000;

export class NamedCatalog<T extends { name: string }> {
  private items: Map<string, T> | undefined;
  private fetching: Promise<Map<string, T>> | undefined;
  /** Names a fetch found missing, with the clock reading (ms) when that fetch started. */
  private readonly missing = new Map<string, number>();
  private generation = 0;
  /** The list of the last full fetch, by name (kept across {@link invalidate}); undefined before the first. */
  private known: Map<string, T> | undefined;
  /** Full fetches performed (for tests). */
  fetches = 0;

  /**
   * @param fetchAll performs one full list RPC
   * @param now the clock of {@link MISSING_RETRY_MS} (ms; default `performance.now`)
   */
  constructor(
    private readonly fetchAll: () => Promise<T[]>,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Replaces the cached list with `list` (a fresh full fetch). */
  store(list: readonly T[]): void {
    this.generation++;
    this.items = new Map(list.map((item) => [item.name, item]));
    this.known = this.items;
    this.missing.clear();
  }

  /** Forgets the cached list; the next lookup fetches. */
  invalidate(): void {
    this.generation++;
    this.items = undefined;
    this.missing.clear();
  }

  /**
   * Fetches the list afresh (after any fetch in flight) and compares it with the last list known.
   * @returns true when an item was added, removed or changed (in any field; order ignored), or
   *   when no list was known before (nothing to compare with)
   * @throws whatever the fetch throws (e.g. SenderError)
   */
  async refresh(): Promise<boolean> {
    // A fetch already in flight may predate the change: let it land, then fetch again.
    if (this.fetching) await this.fetching.catch(() => undefined);
    const before = this.known;
    this.invalidate();
    const after = await this.load();
    return before === undefined || !sameItems(before, after);
  }

  /** The cached entry for `name`, without fetching. */
  peek(name: string): T | undefined {
    return this.items?.get(name);
  }

  /** The cached list, or the list fetched now (sharing an RPC already in flight) when none is cached. */
  async current(): Promise<T[]> {
    return [...(this.items ?? (await this.load())).values()];
  }

  /**
   * The entry for `name`: from the cache, or after one fetch when the cache lacks it.
   * @returns undefined when the orchestrator does not list `name`
   * @throws whatever the fetch throws (e.g. SenderError)
   */
  async lookup(name: string): Promise<T | undefined> {
    const hit = this.items?.get(name);
    const missedAt = this.missing.get(name);
    if (hit || (this.items && missedAt !== undefined && this.now() - missedAt < MISSING_RETRY_MS)) return hit;
    const started = this.now();
    const items = await this.load();
    const found = items.get(name);
    if (!found) this.missing.set(name, started);
    return found;
  }

  private load(): Promise<Map<string, T>> {
    if (!this.fetching) {
      const generation = this.generation;
      this.fetches++;
      this.fetching = this.fetchAll().then(
        (list) => {
          this.fetching = undefined;
          const map = new Map(list.map((item) => [item.name, item] as const));
          if (generation === this.generation) {
            this.generation++;
            this.items = map;
            this.known = map;
            this.missing.clear();
          }
          return map;
        },
        (err: unknown) => {
          this.fetching = undefined;
          throw err;
        },
      );
    }
    return this.fetching;
  }
}

function sameItems<T>(a: Map<string, T>, b: Map<string, T>): boolean {
  if (a.size !== b.size) return false;
  for (const [name, item] of a) {
    if (!b.has(name) || !deepEqual(item, b.get(name))) return false;
  }
  return true;
}
