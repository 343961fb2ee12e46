// `node bench/serve-cpu.mjs [--rounds N=3] [--calls N=3000] [--warmup N=3000] [--in-flight 1,64] [--ours] [LABEL=/abs/dist ...]`
//
// CPU time `serve` spends per 100-byte echo `tools/call` against the upstream Go orchestrator
// (`--ours`: our orchestrator, a separate process), several builds side by side: per round, each
// build (default: this tree's dist) is spawned, makes `--warmup` calls (8 in flight), then
// `--calls` calls at each `--in-flight`; the order of the builds reverses every round. CPU is the
// user + system time of the bridge's threads from /proc/PID/task/TID/stat (10 ms ticks), main
// thread and all threads. Prints the median over rounds per build and in-flight count, and each
// round's figures on stderr. Linux only; needs `npm run build` of each build and, without
// `--ours`, the Go peer (ORCHESTRA_GO_PEER_BIN).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, goPeerMissing, median, provisionBridgeCert, startOurOrchestrator, startUpstreamOrchestrator, tempDir } from "./common.mjs";
import { StdioSession, driveEcho } from "./stdio-session.mjs";

const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const rounds = Number(option("--rounds", 3));
const calls = Number(option("--calls", 3000));
const warmup = Number(option("--warmup", 3000));
const inFlights = option("--in-flight", "1,64").split(",").map(Number);
const ours = argv.includes("--ours");
const subjects = argv.filter((a) => /^[^-][^=]*=/.test(a)).map((a) => ({ label: a.slice(0, a.indexOf("=")), dist: a.slice(a.indexOf("=") + 1) }));
if (subjects.length === 0) subjects.push({ label: "this", dist: join(ROOT, "dist") });
const missing = ours ? undefined : goPeerMissing();
if (missing) {
  console.error(`serve-cpu: ${missing}`);
  process.exit(2);
}

/** CPU ms of the main thread (and its system part) and of all threads of `pid` (/proc/PID/task/TID/stat, 10 ms ticks). */
function threadCpu(pid) {
  let main = 0;
  let mainSys = 0;
  let all = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ms = (Number(fields[11]) + Number(fields[12])) * 10;
    all += ms;
    if (tid === String(pid)) {
      main = ms;
      mainSys = Number(fields[12]) * 10;
    }
  }
  return { main, mainSys, all };
}

const certsDir = join(tempDir("orchestra-bench-serve-cpu-"), "certs");
const orch = ours ? await startOurOrchestrator({ certsDir }) : await startUpstreamOrchestrator({ certsDir });
await provisionBridgeCert(certsDir);
const addr = `127.0.0.1:${orch.port}`;
const samples = new Map(subjects.flatMap((s) => inFlights.map((n) => [`${s.label}/${n}`, []])));
try {
  for (let r = 0; r < rounds; r++) {
    for (const s of r % 2 ? [...subjects].reverse() : subjects) {
      const session = new StdioSession(process.execPath, [join(s.dist, "cli/main.js"), "serve", "--orchestrator-addr", addr, "--certs-dir", certsDir]);
      try {
        await session.initialize();
        await driveEcho(session, { payload: 100, inFlight: 8, calls: warmup });
        for (const inFlight of inFlights) {
          const before = threadCpu(session.pid);
          const result = await driveEcho(session, { payload: 100, inFlight, calls });
          const after = threadCpu(session.pid);
          if (result.failures) throw new Error(`${s.label}: ${result.failures} failed calls, first: ${result.firstFailure}`);
          const perCall = (ms) => (ms / calls) * 1000;
          const sample = {
            main: perCall(after.main - before.main),
            mainSys: perCall(after.mainSys - before.mainSys),
            all: perCall(after.all - before.all),
            callsPerSec: result.callsPerSec,
          };
          samples.get(`${s.label}/${inFlight}`).push(sample);
          console.error(
            `round ${r + 1}/${rounds} ${s.label} ${inFlight} in flight: main ${sample.main.toFixed(1)} µs (system ${sample.mainSys.toFixed(1)}), all ${sample.all.toFixed(1)} µs per call, ${sample.callsPerSec.toFixed(0)} calls/s`,
          );
        }
      } finally {
        await session.close();
      }
    }
  }
} finally {
  orch.abort?.();
  await orch.stop?.();
}
console.log(`serve against ${ours ? "our" : "the upstream"} orchestrator, ${calls} calls after ${warmup}, medians of ${rounds} rounds:`);
console.log("| build | in flight | main thread CPU µs per call | of which system | all threads | calls/s |\n| --- | --- | --- | --- | --- | --- |");
for (const [key, list] of samples) {
  const [label, inFlight] = key.split("/");
  const m = (f) => median(list.map(f));
  console.log(
    `| ${label} | ${inFlight} | ${m((x) => x.main).toFixed(1)} | ${m((x) => x.mainSys).toFixed(1)} | ${m((x) => x.all).toFixed(1)} | ${m((x) => x.callsPerSec).toFixed(0)} |`,
  );
}
process.exit(0);
