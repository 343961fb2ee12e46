// `node bench/upstream-floor.mjs [--rounds N] [--calls N]`: what bounds the 1-in-flight target of
// issue 16 (our bridge ≥ 1.2× the Go bridge's calls/s against the upstream Go orchestrator).
// Three subjects against one upstream orchestrator (../shared/go-peer), sequential 100-byte echo
// `tool_call`s, rounds interleaved (the order reverses every round), medians over rounds:
// - direct: this process's `QuicSender` (dist/quic/quic-link.js), no stdio hop and no MCP: our
//   QUIC client and engine alone, the floor of our bridge;
// - go: the upstream Go bridge (`transport-stdio`) driven over stdio by bench/stdio-session.mjs;
// - ours: `serve` driven the same way.
// Per subject: calls/s, p50 latency (ms) and CPU ms per call of the process doing the QUIC side
// (this process for `direct`, the bridge otherwise). Each subject first makes 300 untimed calls.
// Needs `npm run build` and the Go peer (ORCHESTRA_GO_PEER_BIN); exits 2 without it.
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { create } from "@bufbuild/protobuf";
import { GO_PEER_BIN, ROOT, cliOf, goPeerMissing, median, provisionBridgeCert, quantile, startUpstreamOrchestrator, tempDir } from "./common.mjs";
import { StdioSession, driveEcho } from "./stdio-session.mjs";

const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const rounds = Number(option("--rounds", 3));
const calls = Number(option("--calls", 3000));
const missing = goPeerMissing();
if (missing) {
  console.error(`upstream-floor: ${missing}`);
  process.exit(2);
}
const DIST = join(ROOT, "dist");
const { QuicSender } = await import(join(DIST, "quic/quic-link.js"));
const { PluginRequestSchema, ToolRequestSchema } = await import(join(DIST, "gen/proto/orchestra/plugin/v1/plugin_pb.js"));
const certsDir = join(tempDir("orchestra-bench-floor-"), "certs");
const orch = await startUpstreamOrchestrator({ certsDir });
await provisionBridgeCert(certsDir);
const text = "x".repeat(100);
const addr = `127.0.0.1:${orch.port}`;

async function direct() {
  const sender = new QuicSender({ host: "127.0.0.1", port: orch.port, certsDir, serverName: "localhost", callTimeoutMs: 60_000 });
  const request = (i) =>
    create(PluginRequestSchema, { requestId: `floor-${i}`, request: { case: "toolCall", value: create(ToolRequestSchema, { toolName: "echo", arguments: { text } }) } });
  for (let i = 0; i < 300; i++) await sender.send(request(i));
  const lat = new Float64Array(calls);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    const r = await sender.send(request(i));
    if (r.response.case !== "toolCall" || r.response.value.result?.text?.length !== text.length) throw new Error(`direct: unexpected answer ${r.response.case}`);
    lat[i] = performance.now() - t;
  }
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  await sender.close();
  return {
    callsPerSec: (calls * 1000) / wallMs,
    p50Ms: quantile(
      Array.from(lat).sort((a, b) => a - b),
      0.5,
    ),
    cpuMsPerCall: (cpu.user + cpu.system) / 1000 / calls,
  };
}

async function viaStdio(command, args) {
  const session = new StdioSession(command, args);
  try {
    await session.initialize();
    await driveEcho(session, { payload: 100, inFlight: 8, calls: 300 });
    const cpu0 = session.cpuMs();
    const r = await driveEcho(session, { payload: 100, inFlight: 1, calls });
    if (r.failures) throw new Error(`${command}: ${r.failures} failed calls, first: ${r.firstFailure}`);
    return { callsPerSec: r.callsPerSec, p50Ms: r.p50Ms, cpuMsPerCall: (session.cpuMs() - cpu0) / calls };
  } finally {
    await session.close();
  }
}

const SUBJECTS = {
  direct: { label: "our QuicSender in this process (no stdio hop)", run: direct },
  go: { label: "Go bridge (transport-stdio)", run: () => viaStdio(join(GO_PEER_BIN, "transport-stdio"), ["--orchestrator-addr", addr, "--certs-dir", certsDir]) },
  ours: { label: "our bridge (serve)", run: () => viaStdio(process.execPath, [cliOf(DIST), "serve", "--orchestrator-addr", addr, "--certs-dir", certsDir]) },
};
const samples = Object.fromEntries(Object.keys(SUBJECTS).map((k) => [k, []]));
try {
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? ["ours", "go", "direct"] : ["direct", "go", "ours"];
    for (const id of order) {
      const s = await SUBJECTS[id].run();
      samples[id].push(s);
      console.error(`round ${r + 1}/${rounds} ${id.padEnd(6)} ${s.callsPerSec.toFixed(0)} calls/s, p50 ${s.p50Ms.toFixed(3)} ms, CPU ${s.cpuMsPerCall.toFixed(3)} ms/call`);
    }
  }
} finally {
  orch.abort?.();
  await orch.stop?.();
}
console.log(`Sequential echo calls against the upstream orchestrator (medians of ${rounds} rounds, ${calls} calls each):`);
console.log("| subject | calls/s | p50 ms | CPU ms per call |\n| --- | --- | --- | --- |");
for (const [id, list] of Object.entries(samples)) {
  const m = (f) => median(list.map(f));
  console.log(`| ${SUBJECTS[id].label} | ${m((s) => s.callsPerSec).toFixed(0)} | ${m((s) => s.p50Ms).toFixed(3)} | ${m((s) => s.cpuMsPerCall).toFixed(3)} |`);
}
const ratio = (a, b) => median(samples[a].map((s, i) => s.callsPerSec / samples[b][i].callsPerSec));
console.log(`our QuicSender alone ÷ Go bridge: ${ratio("direct", "go").toFixed(2)}; our bridge ÷ Go bridge: ${ratio("ours", "go").toFixed(2)} (target ≥ 1.2)`);
process.exit(0);
