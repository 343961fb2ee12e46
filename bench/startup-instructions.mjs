// `node bench/startup-instructions.mjs [LABEL=MAIN.js ...]`: machine instructions (valgrind
// callgrind's Ir, all threads) a `serve` process executes from exec until its `initialize` answer
// is written (bench/startup/probe.cjs, STARTUP_PROBE_EXIT=first-line), beside the bare Node server
// (bench/bare-node-server.mjs) doing the same: a start-up figure that does not depend on the load
// of the machine (each run takes 10-30 s under valgrind). `serve --orchestrator-addr` points at a
// port where nothing listens (initialize never waits for the orchestrator); the cert store is
// made once. Default subject: this tree's bin, dist/cli/main.cjs. Each subject runs twice with a fresh
// XDG_CACHE_HOME: "cold" (no code cache yet; it is written at that process's exit, which is
// counted) and "warm" (the CLI's code cache from the cold run, src/cli/code-cache.ts); a build
// without a code cache gives the same figure twice. The modules column counts what each run
// compiled (bench/startup/probe.cjs): the bundle's scripts, with how many V8 accepted cached data
// for, and the CommonJS files (`require`); compare runs whose counts match. The subjects run
// without the caller's ORCHESTRA_* variables and NODE_EXTRA_CA_CERTS (common.mjs, UNMEASURED_VARIABLES).
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ROOT, cliOf, measuredEnvironment, provisionBridgeCert, startOurOrchestrator, tempDir } from "./common.mjs";

const argv = process.argv.slice(2);
const subjects = argv.filter((a) => /^[^-][^=]*=/.test(a)).map((a) => ({ label: a.slice(0, a.indexOf("=")), main: a.slice(a.indexOf("=") + 1) }));
if (subjects.length === 0) subjects.push({ label: "this", main: cliOf() });
subjects.push({ label: "bare Node", bare: join(ROOT, "bench/bare-node-server.mjs") });
execFileSync("valgrind", ["--version"]); // throws when valgrind is missing

const work = tempDir("orchestra-bench-instructions-");
const certsDir = join(work, "certs");
// An orchestrator makes the store (its CA) and is stopped: the address then has no listener.
const orch = await startOurOrchestrator({ certsDir });
await provisionBridgeCert(certsDir);
const address = `127.0.0.1:${orch.port}`;
await orch.stop();

const initialize = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } } })}\n`;
const PROBE = join(ROOT, "bench/startup/probe.cjs");
const { env: environment } = measuredEnvironment();
console.log("| subject | instructions to the initialize answer (millions) | ratio to bare Node | modules: scripts (cached data accepted) + CommonJS |");
console.log("| --- | --- | --- | --- |");
let bare;
const rows = [];
const runs = [
  subjects.at(-1),
  ...subjects.slice(0, -1).flatMap((s, i) => ["cold", "warm"].map((start) => ({ ...s, label: `${s.label} (${start})`, cache: join(work, `cache-${i}`) }))),
];
for (const s of runs) {
  const out = join(work, `callgrind-${rows.length}.out`);
  const probeOut = join(work, `probe-${rows.length}.json`);
  const args = s.bare ? [s.bare] : ["--require", PROBE, s.main, "serve", "--orchestrator-addr", address, "--certs-dir", certsDir];
  const run = spawnSync("valgrind", ["--tool=callgrind", `--callgrind-out-file=${out}`, process.execPath, ...args], {
    input: initialize,
    encoding: "utf8",
    env: {
      ...environment,
      STARTUP_PROBE_EXIT: "first-line",
      STARTUP_PROBE_OUT: probeOut,
      ORCHESTRA_LOG_LEVEL: "warn",
      ...(s.cache ? { XDG_CACHE_HOME: s.cache } : {}),
    },
  });
  if (!run.stdout.includes('"id":1')) throw new Error(`${s.label}: no initialize answer; stderr:\n${run.stderr}`);
  const ir = Number(/^summary: (\d+)/m.exec(readFileSync(out, "utf8"))?.[1] ?? /Collected : (\d+)/.exec(run.stderr)?.[1]);
  if (s.bare) bare = ir;
  rows.push({ label: s.label, ir, modules: s.bare ? "" : moduleCounts(JSON.parse(readFileSync(probeOut, "utf8")).modules) });
}
for (const r of rows) console.log(`| ${r.label} | ${(r.ir / 1e6).toFixed(0)} | ${(r.ir / bare).toFixed(2)} | ${r.modules} |`);
rmSync(work, { recursive: true, force: true });

/** "33 (33) + 0": scripts compiled (with cached data accepted), CommonJS files required. */
function moduleCounts(modules) {
  const scripts = modules.filter((m) => m.format.startsWith("script"));
  const accepted = scripts.filter((m) => m.format.includes("accepted")).length;
  return `${scripts.length} (${accepted}) + ${modules.length - scripts.length}`;
}
