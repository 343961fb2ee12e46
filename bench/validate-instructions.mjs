#!/usr/bin/env node
/**
 * Noise-free companion of bench/validate-bench.mjs: counts machine instructions (valgrind's
 * callgrind, which counts instructions, not seconds) instead of timing, so that the ratio of full
 * validation to read + split + JSON.parse can be read on a shared, noisy machine.
 *
 *   npm run build && node bench/validate-instructions.mjs --file CAPTURE [--dist DIR]
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
 */
import { execFile } from "node:child_process";
import { closeSync, openSync, readSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
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
if (file === undefined || statSync(file).size < 60e6) {
  console.error("usage: node bench/validate-instructions.mjs --file CAPTURE(>= 60 MB) [--dist DIR]");
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
} else {
  await lib.validateFiles([input], { inputFormat: "capture", jobs: 1 });
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

const small = head(20e6);
const large = head(60e6);
try {
  const [ps, pl] = await Promise.all([instructions("parse", small), instructions("parse", large)]);
  const [fs, fl] = await Promise.all([instructions("full", small), instructions("full", large)]);
  const parse = pl - ps;
  const full = fl - fs;
  const M = (n) => `${(n / 1e6).toFixed(0)} M`;
  console.log(`dist: ${dist}`);
  console.log(`instructions for 40 MB of the capture (60 MB run minus 20 MB run):`);
  console.log(`  read + split + JSON.parse   ${M(parse)}`);
  console.log(`  full validation, 1 thread   ${M(full)}`);
  console.log(`full validation at ${(parse / full).toFixed(3)}x of read + split + JSON.parse (in instructions; target >= 0.90x in time)`);
} finally {
  for (const f of [small, large, stageScript]) unlinkSync(f);
}
