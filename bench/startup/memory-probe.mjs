// `node --import ./bench/startup/memory-probe.mjs ...`: on SIGUSR2 the process writes its memory
// to the file named by MEMORY_PROBE_OUT as JSON, in bytes: { rss, heapTotal, heapUsed, external,
// arrayBuffers } of process.memoryUsage(), and `heapUsedAfterGc`, heapUsed after a full garbage
// collection (the live heap). Used by bench/anchors.mjs (heap after 1,000 calls).
import { writeFileSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

const out = process.env.MEMORY_PROBE_OUT;
process.on("SIGUSR2", () => {
  const before = process.memoryUsage();
  setFlagsFromString("--expose-gc");
  runInNewContext("gc")();
  writeFileSync(out, JSON.stringify({ ...before, heapUsedAfterGc: process.memoryUsage().heapUsed }));
});
