/**
 * A cache of one named list the orchestrator serves (its tools, its prompts), used for checks
 * before the network hop: argument validation (`tools/call`), required prompt arguments and
 * unknown prompt names (`prompts/get`).
 *
 * Filled by every full fetch of the list (a `tools/list` from the client refreshes it too).
 * A lookup of a name not in the cache fetches the list once; concurrent fetches share one RPC;
 * a name still missing after a fetch is not fetched for again until the cache is refreshed or
 * invalidated (e.g. on `notifications/tools/list_changed` from the orchestrator).
 */
export class NamedCatalog<T extends { name: string }> {
  private items: Map<string, T> | undefined;
  private fetching: Promise<Map<string, T>> | undefined;
  private readonly missing = new Set<string>();
  private generation = 0;
  /** Full fetches performed (for tests). */
  fetches = 0;

  /** @param fetchAll performs one full list RPC */
  constructor(private readonly fetchAll: () => Promise<T[]>) {}

  /** Replaces the cached list with `list` (a fresh full fetch). */
  store(list: readonly T[]): void {
    this.generation++;
    this.items = new Map(list.map((item) => [item.name, item]));
    this.missing.clear();
  }

  /** Forgets the cached list; the next lookup fetches. */
  invalidate(): void {
    this.generation++;
    this.items = undefined;
    this.missing.clear();
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
    if (hit || (this.items && this.missing.has(name))) return hit;
    const items = await this.load();
    const found = items.get(name);
    if (!found) this.missing.add(name);
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
