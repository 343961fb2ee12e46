// `node bench/call-transport.mjs [--rounds N=3] [--calls N=40000] [--in-flight N=64] [--transport quic|tls|both] [LABEL=/abs/dist ...]`
//
// CPU time per 100-byte echo call of the transport alone, on both sides, several builds side by
// side: per round and build (default: this tree's dist), the build's `QuicSender` / `TlsSender`
// runs in a Node process of its own (this script with `--child`: builds measured in one process
// disturb each other) against the same build's reference orchestrator in another process,
// makes 3,000 warm-up calls (8 in flight), then `--calls` calls at `--in-flight`. Client CPU is
// `process.cpuUsage()` (all threads of the child), server CPU the orchestrator's utime+stime
// (/proc, 10 ms ticks). The order of the builds reverses every round. Prints each round on
// stderr and the medians. Long runs (40,000 calls) resolve what bench/transport.mjs's 4,000 do not.
// Requires `npm run build` of each build.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { create } from "@bufbuild/protobuf";
import { ROOT, cpuMsOf, median, startOurOrchestrator, tempDir } from "./common.mjs";

const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const rounds = Number(option("--rounds", 3));
const calls = Number(option("--calls", 40000));
const inFlight = Number(option("--in-flight", 64));
const which = option("--transport", "quic");
const transports = which === "both" ? ["quic", "tls"] : [which];
const subjects = argv.filter((a) => /^[^-][^=]*=/.test(a)).map((a) => ({ label: a.slice(0, a.indexOf("=")), dist: a.slice(a.indexOf("=") + 1) }));
if (subjects.length === 0) subjects.push({ label: "this", dist: join(ROOT, "dist") });

/** One build, one transport: warm-up, then the timed calls; CPU µs per call on each side. */
async function measure(dist, transport, certsDir) {
  const { QuicSender } = await import(join(dist, "quic/quic-link.js"));
  const { TlsSender } = await import(join(dist, "tls/tls-link.js"));
  const { PluginRequestSchema, ToolRequestSchema } = await import(join(dist, "gen/proto/orchestra/plugin/v1/plugin_pb.js"));
  const orch = await startOurOrchestrator({ dist, transport, certsDir });
  const options = { host: "127.0.0.1", port: orch.port, certsDir, serverName: "localhost", callTimeoutMs: 60_000 };
  const sender = transport === "tls" ? new TlsSender(options) : new QuicSender(options);
  const text = "x".repeat(100);
  const request = (i) =>
    create(PluginRequestSchema, { requestId: `b-${i}`, request: { case: "toolCall", value: create(ToolRequestSchema, { toolName: "echo", arguments: { text } }) } });
  let failures = 0;
  const drive = async (n, width) => {
    let next = 0;
    const worker = async () => {
      for (;;) {
        const i = next++;
        if (i >= n) return;
        const r = await sender.send(request(i));
        if (r.response.value?.result?.text?.length !== 100) failures++;
      }
    };
    await Promise.all(Array.from({ length: width }, worker));
  };
  try {
    await drive(3000, 8);
    const c0 = process.cpuUsage();
    const s0 = cpuMsOf(orch.pids[0]);
    const t0 = performance.now();
    await drive(calls, inFlight);
    const wall = performance.now() - t0;
    const c = process.cpuUsage(c0);
    const s1 = cpuMsOf(orch.pids[0]);
    return { callsPerSec: (calls * 1000) / wall, clientUs: (c.user + c.system) / calls, serverUs: ((s1 - s0) * 1000) / calls, failures };
  } finally {
    await sender.close();
    await orch.stop();
  }
}

if (argv[0] === "--child") {
  const m = await measure(argv[1], argv[2], argv[3]);
  console.log(JSON.stringify(m));
  process.exit(0);
}

const certsDir = tempDir("orchestra-bench-call-transport-");
const self = fileURLToPath(import.meta.url);
const samples = new Map();
for (let r = 0; r < rounds; r++) {
  for (const s of r % 2 ? [...subjects].reverse() : subjects) {
    for (const t of transports) {
      const out = execFileSync(process.execPath, [self, "--child", s.dist, t, certsDir, "--calls", String(calls), "--in-flight", String(inFlight)], { encoding: "utf8" });
      const m = JSON.parse(out.trim().split("\n").pop());
      const key = `${s.label}/${t}`;
      if (!samples.has(key)) samples.set(key, []);
      samples.get(key).push(m);
      console.error(
        `round ${r + 1}/${rounds} ${key}: client ${m.clientUs.toFixed(1)} µs, server ${m.serverUs.toFixed(1)} µs per call, ${Math.round(m.callsPerSec)} calls/s, ${m.failures} failures`,
      );
    }
  }
}
console.log(`transport alone, ${calls} calls at ${inFlight} in flight after 3000, medians of ${rounds} rounds:`);
console.log("| build | transport | client CPU µs per call | server CPU µs per call | calls/s | failures |");
console.log("| --- | --- | --- | --- | --- | --- |");
for (const [key, ms] of samples) {
  const [label, t] = key.split("/");
  const f = (k) => median(ms.map((m) => m[k]));
  console.log(`| ${label} | ${t} | ${f("clientUs").toFixed(1)} | ${f("serverUs").toFixed(1)} | ${Math.round(f("callsPerSec"))} | ${ms.reduce((a, m) => a + m.failures, 0)} |`);
}
