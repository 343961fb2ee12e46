#!/usr/bin/env node
/**
 * GC and per-thread CPU of `validateFiles` with the same file given N times, warm, in this
 * process: where `--jobs` loses against one thread (BENCHMARKS.md, "Figures, 2026-12-02 (eighth
 * session, validate8)").
 *
 *   npm run build && node --trace-gc [V8 GC flags] bench/validate-gc.mjs FILE [--jobs J=2] [--copies N=2] [--runs R=3] [--dist DIR] [--set-flags "F ..."]
 *
 * `--set-flags` sets V8 flags at run time (`v8.setFlagsFromString`) before the first run, so
 * before the workers' isolates are created: what a flag set by the CLI would do.
 *
 * One unmeasured run first, then R runs; prints the wall times (ms), the calling thread's GC
 * pauses per run (PerformanceObserver `gc` entries: count and ms) and the CPU (ms, user + system,
 * from /proc/self/task/TID/stat, Linux) of every thread that used any over the R runs, by thread
 * name (`(main)`: the calling thread; a `--jobs` worker is the other thread near the main's).
 * With `--trace-gc`, V8 prints each collection, per isolate (`[pid:isolate]`): count the
 * scavenges and mark-compacts per isolate from there.
 */
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { performance, PerformanceObserver } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
};
const file = args[0];
const jobs = Number(option("--jobs", 2));
const copies = Number(option("--copies", 2));
const runs = Number(option("--runs", 3));
const dist = resolve(option("--dist", new URL("../dist", import.meta.url).pathname));
if (file === undefined || file.startsWith("--") || ![jobs, copies, runs].every((n) => Number.isInteger(n) && n >= 1)) {
  console.error('usage: node [--trace-gc] bench/validate-gc.mjs FILE [--jobs J=2] [--copies N=2] [--runs R=3] [--dist DIR] [--set-flags "F ..."]');
  process.exit(2);
}
const setFlags = option("--set-flags", "");
if (setFlags !== "") setFlagsFromString(setFlags);
const lib = await import(pathToFileURL(`${dist}/validate/index.js`).href);

/** CPU ms (10 ms ticks) and name of each thread of this process, by thread id. */
function threads() {
  const out = new Map();
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      const name = readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim();
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(tid, { name, ms: (Number(f[11]) + Number(f[12])) * 10 });
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

let gcMs = 0;
let gcCount = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcMs += e.duration;
    gcCount++;
  }
}).observe({ entryTypes: ["gc"] });

const run = () => lib.validateFiles(Array(copies).fill(file), { inputFormat: "capture", jobs });
await run();
const before = threads();
const [ms0, n0] = [gcMs, gcCount];
const walls = [];
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  await run();
  walls.push(performance.now() - t0);
}
await new Promise((r) => setTimeout(r, 50)); // the last GC entries
const cpu = [];
for (const [tid, t] of threads()) {
  const used = t.ms - (before.get(tid)?.ms ?? 0);
  if (used > 0) cpu.push(`${t.name}${tid === String(process.pid) ? "(main)" : ""} ${used}`);
}
console.log(
  `jobs ${jobs}, ${copies} files, ${runs} runs: wall ms ${walls.map((w) => w.toFixed(0)).join(" ")}; ` +
    `calling thread GC ${((gcMs - ms0) / runs).toFixed(1)} ms and ${((gcCount - n0) / runs).toFixed(0)} collections per run; CPU ms per thread over the runs: ${cpu.join(", ")}`,
);
await lib.closeIdleWorkers();
