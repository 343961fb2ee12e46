/** newRequestId (src/translate/request-id.ts): UUIDv7s, distinct across refills of its random pool. */
import { describe, expect, it } from "vitest";
import { newRequestId } from "../../src/translate/request-id.js";

const UUIDV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("newRequestId", () => {
  it("makes distinct UUIDv7s carrying the current time, over many refills of its random pool", () => {
    const before = Date.now();
    const ids = Array.from({ length: 10_000 }, () => newRequestId());
    const after = Date.now();
    for (const id of ids) expect(id).toMatch(UUIDV7);
    expect(new Set(ids).size).toBe(ids.length);
    // RFC 9562 §5.7: the first 48 bits are the Unix time in ms.
    const ms = (id: string) => parseInt(id.replace(/-/g, "").slice(0, 12), 16);
    expect(ms(ids[0]!)).toBeGreaterThanOrEqual(before);
    expect(ms(ids.at(-1)!)).toBeLessThanOrEqual(after);
    // The random part differs between consecutive ids (the pool is not reused).
    const tails = new Set(ids.map((id) => id.slice(19)));
    expect(tails.size).toBe(ids.length);
  });
});
