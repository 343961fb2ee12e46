// `node --import ./bench/startup/memory-probe.mjs ...`: on SIGUSR2 the process writes its memory
// to the file named by MEMORY_PROBE_OUT as JSON, in bytes: { rss, heapTotal, heapUsed, external,
// arrayBuffers } of process.memoryUsage(), and `heapUsedAfterGc`, heapUsed after a full garbage
// collection (the live heap). Used by bench/anchors.mjs (heap after 1,000 calls) and
// bench/memory.mjs (the account), which also read:
// - `spaces`: v8.getHeapSpaceStatistics() after that GC, per space { name, size, used, physical }
//   (`size`: space_size, reserved pages; `physical`: physical_space_size, the committed part);
// - `spacesBeforeGc`: the same, read before it;
// - `heap`: v8.getHeapStatistics() after the GC (total_physical_size, malloced_memory, ...);
// - with MEMORY_PROBE_SNAPSHOT set, a heap snapshot written to that file after the GC of the
//   MEMORY_PROBE_SNAPSHOT_AT-th report (default the first).
import { writeFileSync } from "node:fs";
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString, writeHeapSnapshot } from "node:v8";
import { runInNewContext } from "node:vm";

const out = process.env.MEMORY_PROBE_OUT;
const snapshot = process.env.MEMORY_PROBE_SNAPSHOT;
const snapshotAt = Number(process.env.MEMORY_PROBE_SNAPSHOT_AT ?? 1);
let reports = 0;
const spaces = () => getHeapSpaceStatistics().map((s) => ({ name: s.space_name, size: s.space_size, used: s.space_used_size, physical: s.physical_space_size }));
process.on("SIGUSR2", () => {
  const before = process.memoryUsage();
  const spacesBeforeGc = spaces();
  setFlagsFromString("--expose-gc");
  runInNewContext("gc")();
  const after = process.memoryUsage();
  const report = { ...before, heapUsedAfterGc: after.heapUsed, spaces: spaces(), spacesBeforeGc, heap: getHeapStatistics() };
  if (snapshot && ++reports === snapshotAt) writeHeapSnapshot(snapshot);
  writeFileSync(out, JSON.stringify(report));
});
