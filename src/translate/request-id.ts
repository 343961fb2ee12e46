/**
 * The one source of fresh protobuf `request_id`s (and subscription ids): UUIDv7 (RFC 9562 §5.7,
 * by the `uuid` package), its random bits drawn from a pool of {@link POOL_BYTES} filled by one
 * `randomFillSync` at a time, instead of one `crypto.getRandomValues` call per id. Ids made in
 * the same millisecond are unique by their 74 random bits; RFC 9562 §6.2's ordering within a
 * millisecond is optional and nothing here relies on it.
 */
import { randomFillSync } from "node:crypto";
import { v7 } from "uuid";

/** Random bytes fetched from the OS at a time: the random part of 256 ids. */
const POOL_BYTES = 16 * 256;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let used = POOL_BYTES;

/** A new UUIDv7, e.g. `019ad7c4-52a1-7c3e-9f0b-6d2e8a41c5f7`. */
export function newRequestId(): string {
  if (used === POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const random = pool.subarray(used, used + 16);
  used += 16;
  return v7({ random });
}
