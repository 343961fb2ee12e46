/** NamedCatalog (src/bridge/catalog.ts): a name found missing is refetched for after MISSING_RETRY_MS, not never. */
import { describe, expect, it } from "vitest";
import { MISSING_RETRY_MS, NamedCatalog } from "../../src/bridge/catalog.js";

describe("NamedCatalog lookups of a missing name", () => {
  it("answers a miss from the cache until MISSING_RETRY_MS has passed, then fetches again and finds a name listed late", async () => {
    let clock = 0;
    // The orchestrator lists echo only from the second fetch on (a plugin registered late).
    const lists = [[{ name: "other" }], [{ name: "other" }, { name: "echo" }]];
    let fetched = 0;
    const catalog = new NamedCatalog(
      () => Promise.resolve(lists[Math.min(fetched++, lists.length - 1)]!),
      () => clock,
    );
    expect(await catalog.lookup("echo")).toBeUndefined();
    clock += MISSING_RETRY_MS - 1;
    expect(await catalog.lookup("echo")).toBeUndefined();
    expect(catalog.fetches).toBe(1);
    clock += 1;
    expect(await catalog.lookup("echo")).toEqual({ name: "echo" });
    expect(catalog.fetches).toBe(2);
    // Found: from the cache from now on.
    clock += 10 * MISSING_RETRY_MS;
    expect(await catalog.lookup("echo")).toEqual({ name: "echo" });
    expect(catalog.fetches).toBe(2);
  });
});
