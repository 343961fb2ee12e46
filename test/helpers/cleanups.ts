/**
 * Per-test clean-up for tests that start servers, sockets and processes.
 */
import { afterEach } from "vitest";

/** A clean-up action (closing a server, removing a directory, ...). */
export type Cleanup = () => Promise<unknown> | unknown;

/**
 * Registers an `afterEach` that runs, last first, every action pushed onto the returned list
 * during the test, and empties it. Call once per test file, at the top level.
 */
export function cleanupsAfterEach(): Cleanup[] {
  const list: Cleanup[] = [];
  afterEach(async () => {
    for (const c of list.splice(0).reverse()) await c();
  });
  return list;
}
