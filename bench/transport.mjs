// `node bench/transport.mjs [--quick] [--json FILE]`: the orchestrator transport alone, QUIC vs
// TLS-over-TCP (issue 5). The client is this process (QuicSender / TlsSender from dist/), the
// reference orchestrator runs as a separate process (`dist/cli/main.js orchestrator`). Every
// call is one PluginRequest{tool_call echo {text}} with the protocol's [u32 BE length][protobuf]
// framing, answered by the orchestrator's `echo` tool, for 100-byte and 100 KiB texts, 1 and 64
// calls in flight.
//
// Per case: calls/s, p50/p99 latency, CPU ms per call on each side (client: process.cpuUsage()
// deltas of this process; server: utime+stime from /proc/<pid>/stat before/after the case).
// QUIC datagrams per call come from a separate pass through a counting UDP relay on loopback
// (this process forwards every datagram between the sender and the orchestrator and counts them),
// so the relay's cost never pollutes the timed runs.
// Requires `npm run build` first (npm run bench does it).
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { create } from "@bufbuild/protobuf";
import { ROOT, cpuMsOf, quantile, startOurOrchestrator, startRelay } from "./common.mjs";

// BENCH_DIST: another build to measure (e.g. a copy of dist/ from before a change).
const DIST = process.env.BENCH_DIST ?? join(ROOT, "dist");
const args = process.argv.slice(2);
const quick = args.includes("--quick");
// --only quic|tls: one transport, no datagram pass and no ratios (for profiling with --cpu-prof).
const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : undefined;
const jsonOut = args.includes("--json") ? args[args.indexOf("--json") + 1] : join(ROOT, "bench/results/transport-latest.json");

const { QuicSender } = await import(join(DIST, "quic/quic-link.js"));
const { TlsSender } = await import(join(DIST, "tls/tls-link.js"));
const { PluginRequestSchema, ToolRequestSchema } = await import(join(DIST, "gen/proto/orchestra/plugin/v1/plugin_pb.js"));

// --small: only the 100-byte cases.
const small = args.includes("--small");
const CASES = [
  { payload: 100, inFlight: 1, calls: quick ? 300 : 2000 },
  { payload: 100, inFlight: 64, calls: quick ? 640 : 4000 },
  { payload: 100 * 1024, inFlight: 1, calls: quick ? 30 : 150 },
  { payload: 100 * 1024, inFlight: 64, calls: quick ? 64 : 192 },
].filter((c) => !small || c.payload === 100);
const DATAGRAM_CASES = [
  { payload: 100, inFlight: 1, calls: quick ? 100 : 400 },
  { payload: 100, inFlight: 64, calls: quick ? 256 : 1280 },
];
/** Our orchestrator as a separate process from DIST (ORCH_NODE_ARGS: extra Node flags, e.g. --cpu-prof). */
function startOrchestrator(transport, certsDir) {
  const nodeArgs = process.env.ORCH_NODE_ARGS ? process.env.ORCH_NODE_ARGS.split(" ") : [];
  return startOurOrchestrator({ dist: DIST, transport, certsDir, nodeArgs });
}

function makeSender(transport, port, certsDir) {
  const options = { host: "127.0.0.1", port, certsDir, serverName: "localhost", callTimeoutMs: 60_000 };
  return transport === "tls" ? new TlsSender(options) : new QuicSender(options);
}

function request(i, text) {
  return create(PluginRequestSchema, {
    requestId: `bench-${i}`,
    request: { case: "toolCall", value: create(ToolRequestSchema, { toolName: "echo", arguments: { text } }) },
  });
}

async function drive(sender, { payload, inFlight, calls }) {
  const text = "x".repeat(payload);
  const lat = new Float64Array(calls);
  let next = 0;
  let failures = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= calls) return;
      const t0 = performance.now();
      try {
        const r = await sender.send(request(i, text));
        if (r.response.case !== "toolCall" || r.response.value.result?.text?.length !== payload) failures++;
      } catch {
        failures++;
      }
      lat[i] = performance.now() - t0;
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  const wall = performance.now() - t0;
  const sorted = Array.from(lat).sort((a, b) => a - b);
  return { wallMs: wall, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), failures };
}

async function runTransport(transport, certsDir) {
  const orch = await startOrchestrator(transport, certsDir);
  const sender = makeSender(transport, orch.port, certsDir);
  const rows = [];
  try {
    await drive(sender, { payload: 100, inFlight: 8, calls: quick ? 100 : 400 }); // connect + warm up
    for (const c of CASES) {
      const cpu0 = process.cpuUsage();
      const s0 = cpuMsOf(orch.pids[0]);
      const r = await drive(sender, c);
      const cpu = process.cpuUsage(cpu0);
      const s1 = cpuMsOf(orch.pids[0]);
      rows.push({
        transport,
        payload: c.payload,
        inFlight: c.inFlight,
        calls: c.calls,
        failures: r.failures,
        callsPerSec: (c.calls * 1000) / r.wallMs,
        p50Ms: r.p50,
        p99Ms: r.p99,
        clientCpuMsPerCall: (cpu.user + cpu.system) / 1000 / c.calls,
        serverCpuMsPerCall: (s1 - s0) / c.calls,
      });
    }
  } finally {
    await sender.close();
    await orch.stop();
  }
  return rows;
}

async function datagramPass(certsDir) {
  const orch = await startOrchestrator("quic", certsDir);
  const relay = await startRelay(orch.port);
  const sender = makeSender("quic", relay.port, certsDir);
  const rows = [];
  try {
    await drive(sender, { payload: 100, inFlight: 8, calls: 50 });
    for (const c of DATAGRAM_CASES) {
      const up0 = relay.counts.up;
      const down0 = relay.counts.down;
      const r = await drive(sender, c);
      rows.push({
        payload: c.payload,
        inFlight: c.inFlight,
        calls: c.calls,
        failures: r.failures,
        clientDatagramsPerCall: (relay.counts.up - up0) / c.calls,
        serverDatagramsPerCall: (relay.counts.down - down0) / c.calls,
      });
    }
  } finally {
    await sender.close();
    await relay.close();
    await orch.stop();
  }
  return rows;
}

const size = (n) => (n >= 1024 ? `${n / 1024} KiB` : `${n} B`);
const f = (n, d = 2) => n.toFixed(d);

const certsDir = mkdtempSync(join(tmpdir(), "orchestra-bench-transport-"));
try {
  const started = performance.now();
  const rows = [];
  for (const t of ["quic", "tls"]) if (!only || only === t) rows.push(...(await runTransport(t, certsDir)));
  if (small && !only) throw new Error("--small needs --only quic|tls");
  const dgrams = only ? [] : await datagramPass(certsDir);
  console.log(`\nTransport benchmark (${quick ? "quick" : "full"}), orchestrator in a separate process, echo tool, Node ${process.version}`);
  console.log("| transport | payload | in flight | calls | calls/s | p50 ms | p99 ms | client CPU ms/call | server CPU ms/call | failures |");
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const r of rows) {
    console.log(
      `| ${r.transport} | ${size(r.payload)} | ${r.inFlight} | ${r.calls} | ${f(r.callsPerSec, 0)} | ${f(r.p50Ms, 3)} | ${f(r.p99Ms, 3)} | ${f(r.clientCpuMsPerCall, 3)} | ${f(r.serverCpuMsPerCall, 3)} | ${r.failures} |`,
    );
  }
  console.log("\nQUIC datagrams per call (separate pass through a counting UDP relay on loopback):");
  console.log("| payload | in flight | calls | client→server | server→client | failures |");
  console.log("| --- | --- | --- | --- | --- | --- |");
  for (const d of dgrams) {
    console.log(`| ${size(d.payload)} | ${d.inFlight} | ${d.calls} | ${f(d.clientDatagramsPerCall)} | ${f(d.serverDatagramsPerCall)} | ${d.failures} |`);
  }
  let ratios;
  if (!only) {
    const get = (t, p, n) => rows.find((r) => r.transport === t && r.payload === p && r.inFlight === n);
    ratios = {
      quicVsTlsCallsPerSec64: get("quic", 100, 64).callsPerSec / get("tls", 100, 64).callsPerSec,
      quicVsTlsP50At1: get("quic", 100, 1).p50Ms / get("tls", 100, 1).p50Ms,
    };
    console.log("\nIssue 5 targets (100-byte echo):");
    console.log(`  QUIC calls/s at 64 in flight ÷ TLS: ${f(ratios.quicVsTlsCallsPerSec64, 3)} (target ≥ 0.100: ${ratios.quicVsTlsCallsPerSec64 >= 0.1 ? "met" : "NOT met"})`);
    console.log(`  QUIC p50 at 1 in flight ÷ TLS:      ${f(ratios.quicVsTlsP50At1, 2)}× (target ≤ 3×: ${ratios.quicVsTlsP50At1 <= 3 ? "met" : "NOT met"})`);
  }
  console.log(`  total time ${f((performance.now() - started) / 1000, 1)} s`);
  mkdirSync(dirname(jsonOut), { recursive: true });
  writeFileSync(jsonOut, JSON.stringify({ date: new Date().toISOString(), quick, node: process.version, rows, datagrams: dgrams, ratios }, null, 2));
} finally {
  rmSync(certsDir, { recursive: true, force: true });
}
