/**
 * The live JavaScript heap of this process: `process.memoryUsage().heapUsed` after full garbage
 * collections, in bytes. For tests that check memory does not grow with calls (a leak), never
 * for a figure. GC is reached through `v8.setFlagsFromString("--expose-gc")` and a fresh context
 * (the test runner's `node` has no `--expose-gc`).
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

let gc: (() => void) | undefined;

/** Runs full GCs (two, with a macrotask between, so that finalizers and weak callbacks ran) and returns heapUsed. */
export async function liveHeapBytes(): Promise<number> {
  if (!gc) {
    setFlagsFromString("--expose-gc");
    gc = runInNewContext("gc") as () => void;
  }
  gc();
  await new Promise((r) => setImmediate(r));
  gc();
  return process.memoryUsage().heapUsed;
}
