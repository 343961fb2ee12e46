// `node bench/call-instructions.mjs [--in-flight 1,64] [--calls N] [--warmup N] [--node-args "FLAGS"] [--keep DIR] [LABEL=/abs/dist ...]`: machine
// instructions (valgrind callgrind's Ir, all threads) our bridge (`serve`) executes per 100-byte
// echo call against the upstream Go orchestrator (our orchestrator when the Go peer is missing):
// a per-call CPU figure that does not depend on the load of the machine. Per subject and number
// in flight, two bridge processes run under callgrind with the same start-up and warm-up
// (`--warmup`, default 200 calls, 8 in flight) and then `base` resp. `base + N` calls (`base` = N / 4); the
// difference of their totals divided by N is the per-call figure (start-up, warm-up and
// shutdown cancel out). With the default warm-up much of the code still runs unoptimised and V8
// is still compiling (its compiler threads are counted); `--warmup 3000` measures warmer code.
// `--node-args "--single-threaded"` (Node flags of the bridge) makes V8 compile and collect on the
// main thread, at the same points in every run: figures that repeat, for an A/B of small changes. Each process takes 20-60 s under valgrind. Default subject: this tree's
// dist; `LABEL=/abs/path/dist` measures another build (e.g. a copy built at an older commit).
// `--keep DIR`: the callgrind output files are copied to DIR (`callgrind-LABEL-INFLIGHT-a|b.out`),
// for `callgrind_annotate` or `node bench/callgrind-diff.mjs A B CALLS` (per-call cost by function).
// `--direct`: per subject also its floor, `LABEL-direct`: the same calls made by the build's
// `QuicSender` alone in a Node process of its own (bench/call-direct.mjs: no stdio hop, no MCP), so
// that `serve` minus the floor is what the stdio and MCP layers cost per call.
import { execFile, execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ROOT, goPeerMissing, provisionBridgeCert, startOurOrchestrator, startUpstreamOrchestrator, tempDir } from "./common.mjs";
import { StdioSession, driveEcho } from "./stdio-session.mjs";

const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const inFlights = option("--in-flight", "1,64").split(",").map(Number);
const calls = Number(option("--calls", 2000));
const warmupCalls = Number(option("--warmup", 200));
const nodeArgs = option("--node-args", "").split(" ").filter(Boolean);
const keep = option("--keep", undefined);
const withDirect = argv.includes("--direct");
if (keep !== undefined) mkdirSync(keep, { recursive: true });
const subjects = argv.filter((a) => /^[^-][^=]*=/.test(a)).map((a) => ({ label: a.slice(0, a.indexOf("=")), dist: a.slice(a.indexOf("=") + 1) }));
if (subjects.length === 0) subjects.push({ label: "this", dist: join(ROOT, "dist") });
execFileSync("valgrind", ["--version"]); // throws when valgrind is missing

const work = tempDir("orchestra-bench-call-ir-");
const certsDir = join(work, "certs");
const upstream = goPeerMissing() === undefined;
const orch = upstream ? await startUpstreamOrchestrator({ certsDir }) : await startOurOrchestrator({ certsDir });
await provisionBridgeCert(certsDir);
const PAYLOAD = 100;

/** Ir of one bridge process: start, warm up, `n` calls at `inFlight`, end of stdin. */
async function instructions(dist, inFlight, n, tag) {
  const out = join(work, `callgrind-${tag}.out`);
  const session = new StdioSession(
    "valgrind",
    [
      "--tool=callgrind",
      `--callgrind-out-file=${out}`,
      process.execPath,
      ...nodeArgs,
      join(dist, "cli/main.js"),
      "serve",
      "--orchestrator-addr",
      `127.0.0.1:${orch.port}`,
      "--certs-dir",
      certsDir,
      // Under valgrind a call takes ~50x longer: the default deadlines (5 s for list_tools) are too short.
      "--list-timeout",
      "120000",
      "--call-timeout",
      "120000",
    ],
    { stallMs: 300_000 },
  );
  try {
    await session.initialize();
    const warm = await driveEcho(session, { payload: PAYLOAD, inFlight: 8, calls: warmupCalls });
    const r = await driveEcho(session, { payload: PAYLOAD, inFlight, calls: n });
    if (warm.failures + r.failures > 0) throw new Error(`${tag}: ${warm.failures + r.failures} failed calls: ${r.firstFailure ?? warm.firstFailure}`);
  } finally {
    await session.close(120_000);
  }
  if (keep !== undefined) copyFileSync(out, join(keep, `callgrind-${tag}.out`));
  return Number(/^summary: (\d+)/m.exec(readFileSync(out, "utf8"))?.[1]);
}

/** Ir of one `QuicSender`-alone process (bench/call-direct.mjs): same warm-up, `n` calls at `inFlight`. */
async function directInstructions(dist, inFlight, n, tag) {
  const out = join(work, `callgrind-${tag}.out`);
  const args = ["--tool=callgrind", `--callgrind-out-file=${out}`, process.execPath, ...nodeArgs, join(ROOT, "bench/call-direct.mjs"), dist, String(orch.port), certsDir];
  await new Promise((resolve, reject) =>
    execFile("valgrind", [...args, String(warmupCalls), String(n), String(inFlight)], { maxBuffer: 64 * 1024 * 1024 }, (err, _stdout, stderr) =>
      err ? reject(new Error(`${tag}: ${err.message}\n${stderr.slice(-2000)}`)) : resolve(),
    ),
  );
  if (keep !== undefined) copyFileSync(out, join(keep, `callgrind-${tag}.out`));
  return Number(/^summary: (\d+)/m.exec(readFileSync(out, "utf8"))?.[1]);
}

console.log(`orchestrator: ${upstream ? "upstream Go" : "ours (the Go peer is missing)"}; ${PAYLOAD}-byte echo; ${calls} calls measured after ${warmupCalls} warm-up calls`);
console.log("| subject | in flight | instructions per call (thousands) |");
console.log("| --- | --- | --- |");
try {
  for (const inFlight of inFlights) {
    for (const s of subjects) {
      const base = Math.max(1, Math.round(calls / 4));
      const a = await instructions(s.dist, inFlight, base, `${s.label}-${inFlight}-a`);
      const b = await instructions(s.dist, inFlight, base + calls, `${s.label}-${inFlight}-b`);
      console.log(`| ${s.label} | ${inFlight} | ${((b - a) / calls / 1e3).toFixed(1)} |`);
      if (!withDirect) continue;
      const da = await directInstructions(s.dist, inFlight, base, `${s.label}-direct-${inFlight}-a`);
      const db = await directInstructions(s.dist, inFlight, base + calls, `${s.label}-direct-${inFlight}-b`);
      console.log(`| ${s.label}-direct | ${inFlight} | ${((db - da) / calls / 1e3).toFixed(1)} |`);
    }
  }
} finally {
  await orch.stop();
  rmSync(work, { recursive: true, force: true });
}
