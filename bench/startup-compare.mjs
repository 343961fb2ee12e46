// `node bench/startup-compare.mjs [--runs N] [--embedded] [LABEL=MAIN.js ...]`: start-up of
// `serve` builds side by side, spawns interleaved (A B bare A B bare ...), so that a change is
// measured against its baseline in the same minute on a loaded machine. Default subject: this
// tree's bin, dist/cli/main.cjs (label "this"); give `base=/path/to/other/dist/cli/main.cjs` to compare
// (a copy of an earlier dist/ beside a node_modules link). Every subject runs
// `serve --orchestrator-addr` against one of our orchestrators (a separate process), or, with
// `--embedded`, `serve` with the embedded orchestrator (a private XDG_CACHE_HOME, made once).
// Per subject, medians (and minima) over N spawns (default 9) of:
// - spawn → `initialize` answered, spawn → first `tools/call` answered (ms, wall clock: load-dependent);
// - CPU time (user + system, all threads) of the process when it wrote the `initialize` answer
//   (bench/startup/probe.cjs, no loader hooks) and after the first call (/proc, 10 ms ticks):
//   these depend much less on the load than wall-clock figures.
// The bare Node server (bench/bare-node-server.mjs) runs in the same rounds: the ratios are to it,
// each the median of the per-round ratios (two subjects measured side by side in one round), and
// the order is reversed every other round, as in bench/anchors.mjs's start pass. One unmeasured
// round first (page cache; the code cache, in the run's own XDG_CACHE_HOME).
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { ROOT, cliOf, measuredEnvironment, median, provisionBridgeCert, startOurOrchestrator, tempDir } from "./common.mjs";
import { StdioSession } from "./stdio-session.mjs";

const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const runs = Number(option("--runs", 9));
const embedded = argv.includes("--embedded");
const PROBE = join(ROOT, "bench/startup/probe.cjs");
const subjects = argv.filter((a) => /^[^-][^=]*=/.test(a)).map((a) => ({ label: a.slice(0, a.indexOf("=")), main: a.slice(a.indexOf("=") + 1) }));
if (subjects.length === 0) subjects.push({ label: "this", main: cliOf() });
subjects.push({ label: "bare Node", bare: join(ROOT, "bench/bare-node-server.mjs") });

const work = tempDir("orchestra-bench-compare-");
const certsDir = join(work, "certs");
const orch = embedded ? undefined : await startOurOrchestrator({ certsDir });
if (!embedded) await provisionBridgeCert(certsDir);
const serveArgs = embedded ? [] : ["--orchestrator-addr", `127.0.0.1:${orch.port}`, "--certs-dir", certsDir];

// Without the caller's ORCHESTRA_* variables and NODE_EXTRA_CA_CERTS (common.mjs, UNMEASURED_VARIABLES).
const { env: environment } = measuredEnvironment();

async function spawnOnce(subject) {
  const dir = join(work, `run-${Math.random().toString(36).slice(2)}`);
  mkdirSync(dir);
  const args = subject.bare ? [subject.bare] : ["--require", PROBE, subject.main, "serve", ...serveArgs];
  const session = new StdioSession(process.execPath, args, {
    env: { ...environment, STARTUP_PROBE_OUT: join(dir, "probe.json"), XDG_CACHE_HOME: join(work, "cache") },
  });
  try {
    const initAt = await session.initialize();
    const first = await session.echo("x".repeat(100));
    if (!first.ok) throw new Error(`${subject.label}: first tools/call failed: ${JSON.stringify(first.message)}`);
    const cpuAfterCall = session.cpuMs();
    return { initializeMs: initAt - session.spawnedAt, firstCallMs: first.at - session.spawnedAt, cpuAfterCall, dir };
  } finally {
    await session.close();
  }
}

const samples = new Map(subjects.map((s) => [s.label, []]));
const load = [loadavg()[0]];
for (const s of subjects) await spawnOnce(s); // unmeasured: page cache, the embedded store
for (let round = 0; round < runs; round++) {
  for (const s of round % 2 ? [...subjects].reverse() : subjects) {
    const r = await spawnOnce(s);
    if (!s.bare) r.cpuAtInitialize = JSON.parse(readFileSync(join(r.dir, "probe.json"), "utf8")).firstLineCpuMs;
    samples.get(s.label).push(r);
  }
}
load.push(loadavg()[0]);
await orch?.stop();
rmSync(work, { recursive: true, force: true });

const f = (n) => (n === undefined || Number.isNaN(n) ? "–" : n.toFixed(1));
const stat = (list, key) => `${f(median(list.map((r) => r[key])))} (min ${f(Math.min(...list.map((r) => r[key])))})`;
const bare = samples.get("bare Node");
console.log(
  `\n${embedded ? "embedded" : "remote (our orchestrator)"}: medians (minima) of ${runs} interleaved spawns (order reversed every other round); ratios: median of per-round ratios to bare Node; load average ${load.map((l) => l.toFixed(2)).join(" → ")}`,
);
console.log("| subject | → initialize ms | ratio to bare | → first tools/call ms | ratio to bare | CPU ms at initialize | CPU ms after the call |");
console.log("| --- | --- | --- | --- | --- | --- | --- |");
for (const s of subjects) {
  const list = samples.get(s.label);
  const ratio = (key) => median(list.map((r, i) => r[key] / bare[i][key])).toFixed(2);
  console.log(
    `| ${s.label} | ${stat(list, "initializeMs")} | ${ratio("initializeMs")} | ${stat(list, "firstCallMs")} | ${ratio("firstCallMs")} | ${s.bare ? "–" : stat(list, "cpuAtInitialize")} | ${stat(list, "cpuAfterCall")} |`,
  );
}
