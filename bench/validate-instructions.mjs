#!/usr/bin/env node
/**
 * Noise-free companion of bench/validate-bench.mjs: counts machine instructions (valgrind's
 * callgrind, which counts instructions, not seconds) instead of timing, so that the ratio of full
 * validation to read + split + JSON.parse can be read on a shared, noisy machine.
 *
 *   npm run build && node bench/validate-instructions.mjs --file CAPTURE [--dist DIR] [--jobs N]
 *
 * CAPTURE is a capture file of at least 60 MB, e.g. the bench's (`node bench/validate-bench.mjs
 * 200 --keep` prints its path). Its first 20 MB and first 60 MB (whole lines) are each read, split
 * and parsed, then validated (one thread), in a fresh `node --single-threaded` under callgrind
 * (GC and compilation on the main thread, so they are counted too). The 60 MB count minus the
 * 20 MB count is the cost of 40 MB of traffic without the fixed costs (start-up, loading the
 * validators, compiling the hot code); the report gives it per stage and their ratio. Four runs of
 * 20-80 s each, two at a time. Counts repeat to within about 0.5 % for the same build; note that
 * valgrind counts each byte of a `rep movsb`/`rep stosb` copy as one instruction, so large
 * memcpy/memset weigh more here than in time.
 *
 * `--jobs N` (N >= 2) adds the load-independent view of `--jobs`: the same 20 MB and 60 MB heads,
 * each given N times to `validateFiles(..., { jobs: N })` under callgrind with one count per thread
 * (`--separate-threads=yes`; valgrind runs one thread at a time, so no thread slows another). Per
 * 40 MB (60 MB run minus 20 MB run) it reports the instructions of the calling thread, of each
 * worker thread and of the other threads (libuv, V8 platform), the share of the work done off the
 * calling thread, and the bound they put on the speed-up: N × the one-thread count divided by the
 * busiest thread's count (what N free cores could give; memory bandwidth and caches, which
 * instructions do not see, take some of it).
 */
import { execFile } from "node:child_process";
import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { promisify } from "node:util";
import { fileURLToPath, pathToFileURL } from "node:url";

const run = promisify(execFile);
const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : undefined;
};
const file = option("--file");
const dist = resolve(option("--dist") ?? fileURLToPath(new URL("../dist/", import.meta.url)));
const jobs = Number(option("--jobs") ?? 1);
if (file === undefined || statSync(file).size < 60e6 || !Number.isInteger(jobs) || jobs < 1) {
  console.error("usage: node bench/validate-instructions.mjs --file CAPTURE(>= 60 MB) [--dist DIR] [--jobs N]");
  process.exit(2);
}

/** The first `bytes` bytes of `file`, cut after the last whole line, as a temporary file. */
function head(bytes) {
  const fd = openSync(file, "r");
  const buf = Buffer.allocUnsafe(bytes);
  const n = readSync(fd, buf, 0, bytes, 0);
  closeSync(fd);
  const out = join(tmpdir(), `orchestra-validate-instr-${process.pid}-${bytes}.jsonl`);
  writeFileSync(out, buf.subarray(0, buf.lastIndexOf(0x0a, n - 1) + 1));
  return out;
}

// The measured program: one stage over one file, in a fresh process.
const stageScript = join(tmpdir(), `orchestra-validate-instr-${process.pid}.mjs`);
writeFileSync(
  stageScript,
  `import { createReadStream } from "node:fs";
const [stage, input, dist] = process.argv.slice(2);
const lib = await import(dist);
if (stage === "parse") {
  const s = lib.textLineSplitter((t) => { JSON.parse(t); });
  for await (const c of createReadStream(input, { highWaterMark: 1 << 20 })) s.push(c);
  s.end();
} else if (stage === "full") {
  await lib.validateFiles([input], { inputFormat: "capture", jobs: 1 });
} else {
  // "jobs:N": the file N times, one per thread
  const n = Number(stage.slice(5));
  await lib.validateFiles(new Array(n).fill(input), { inputFormat: "capture", jobs: n });
  await lib.closeIdleWorkers();
}
`,
);

async function instructions(stage, input) {
  const entry = pathToFileURL(join(dist, "validate/index.js")).href;
  const { stderr } = await run(
    "valgrind",
    ["--tool=callgrind", "--callgrind-out-file=/dev/null", process.execPath, "--single-threaded", "--predictable", stageScript, stage, input, entry],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const m = /Collected : (\d+)/.exec(stderr);
  if (m === null) throw new Error(`no instruction count from valgrind:\n${stderr.slice(-2000)}`);
  return Number(m[1]);
}

/**
 * Instructions per thread of a `jobs:N` stage, in thread creation order (1: the calling thread),
 * from callgrind's per-thread outputs (`--separate-threads=yes`; each file's `totals:` line).
 */
async function threadInstructions(stage, input) {
  const entry = pathToFileURL(join(dist, "validate/index.js")).href;
  const out = join(tmpdir(), `orchestra-validate-instr-${process.pid}-${stage.replace(":", "")}-${statSync(input).size}.cg`);
  await run(
    "valgrind",
    ["--tool=callgrind", "--separate-threads=yes", `--callgrind-out-file=${out}`, process.execPath, "--single-threaded", "--predictable", stageScript, stage, input, entry],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const counts = new Map();
  for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith(basename(out)))) {
    const path = join(tmpdir(), name);
    const text = readFileSync(path, "utf8");
    unlinkSync(path);
    const thread = /^thread: (\d+)$/m.exec(text);
    const totals = /^totals: (\d+)$/m.exec(text);
    if (thread !== null && totals !== null) counts.set(Number(thread[1]), Number(totals[1]));
  }
  if (!counts.has(1)) throw new Error(`no per-thread counts from valgrind for ${stage}`);
  return counts;
}

const small = head(20e6);
const large = head(60e6);
try {
  const [ps, pl] = await Promise.all([instructions("parse", small), instructions("parse", large)]);
  const [fs, fl] = await Promise.all([instructions("full", small), instructions("full", large)]);
  const parse = pl - ps;
  const full = fl - fs;
  const M = (n) => `${Math.round(n / 1e6) || 0} M`;
  console.log(`dist: ${dist}`);
  console.log(`instructions for 40 MB of the capture (60 MB run minus 20 MB run):`);
  console.log(`  read + split + JSON.parse   ${M(parse)}`);
  console.log(`  full validation, 1 thread   ${M(full)}`);
  console.log(`full validation at ${(parse / full).toFixed(3)}x of read + split + JSON.parse (in instructions; target >= 1.0x in time)`);
  if (jobs > 1) {
    const stage = `jobs:${jobs}`;
    const [ts, tl] = await Promise.all([threadInstructions(stage, small), threadInstructions(stage, large)]);
    // The calling thread is thread 1; the N - 1 worker threads are those that did the most besides it.
    const delta = [...tl].map(([t, n]) => [t, n - (ts.get(t) ?? 0)]);
    const main = delta.find(([t]) => t === 1)[1];
    const others = delta.filter(([t]) => t !== 1).sort((a, b) => b[1] - a[1]);
    const workers = others.slice(0, jobs - 1).map(([, n]) => n);
    const rest = others.slice(jobs - 1).reduce((a, [, n]) => a + n, 0);
    const total = main + workers.reduce((a, b) => a + b, 0) + rest;
    const busiest = Math.max(main, ...workers);
    console.log(`${jobs} files (the same 40 MB each), --jobs ${jobs}, instructions per thread:`);
    console.log(`  calling thread              ${M(main)}`);
    for (const [i, n] of workers.entries()) console.log(`  worker thread ${i + 1}             ${M(n)}`);
    console.log(`  other threads               ${M(rest)}`);
    console.log(`  all threads                 ${M(total)} (${(total / (jobs * full)).toFixed(3)}x of ${jobs} x one thread's ${M(full)})`);
    console.log(
      `off the calling thread: ${((100 * (total - main)) / total).toFixed(1)} % of the instructions; bound on the speed-up with ${jobs} free cores: ` +
        `${((jobs * full) / busiest).toFixed(2)}x (${jobs} x one thread / busiest thread; target >= 1.8x for 2 in time)`,
    );
  }
} finally {
  for (const f of [small, large, stageScript]) unlinkSync(f);
}
