// `npm run bench`: tools/call echo through the whole chain (MCP SDK client → `orchestra-stdio
// serve` process → QUIC → embedded reference orchestrator) against a baseline measured in the
// same run: the same echo tool served directly by the SDK's McpServer over stdio.
// Reports p50/p99 latency and calls/s per (payload, in-flight) case, and the ratios.
// The bridge is measured on both transports (QUIC, the default, and --transport tls).
// Usage: node bench/run.mjs [--quick] [--json FILE]
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { cliOf, quantile } from "./common.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const quick = args.includes("--quick");
const jsonOut = args.includes("--json") ? args[args.indexOf("--json") + 1] : join(ROOT, "bench/results/latest.json");

const SUBJECTS = {
  bridge: { command: process.execPath, args: [cliOf(), "serve"] },
  bridgeTls: { command: process.execPath, args: [cliOf(), "serve", "--transport", "tls"] },
  baseline: { command: process.execPath, args: [join(ROOT, "bench/baseline-server.mjs")] },
};
const CASES = [
  { payload: 100, inFlight: 1, calls: quick ? 100 : 400 },
  { payload: 100, inFlight: 64, calls: quick ? 256 : 2000 },
  { payload: 100 * 1024, inFlight: 1, calls: quick ? 50 : 200 },
  { payload: 100 * 1024, inFlight: 64, calls: quick ? 128 : 640 },
];

async function connect(subject) {
  const transport = new StdioClientTransport({ ...SUBJECTS[subject], stderr: "inherit" });
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

async function runCase(client, { payload, inFlight, calls }) {
  const text = "x".repeat(payload);
  // warm-up: connection set-up, JIT
  await Promise.all(Array.from({ length: Math.min(inFlight, 16) }, () => client.callTool({ name: "echo", arguments: { text } })));
  const latencies = [];
  let next = 0;
  const start = performance.now();
  async function worker() {
    while (next < calls) {
      next++;
      const t0 = performance.now();
      const result = await client.callTool({ name: "echo", arguments: { text } });
      latencies.push(performance.now() - t0);
      if (result.content[0].text.length !== payload) throw new Error("wrong echo");
    }
  }
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return { callsPerSecond: calls / seconds, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) };
}

const results = [];
for (const subject of ["baseline", "bridge", "bridgeTls"]) {
  const client = await connect(subject);
  for (const c of CASES) {
    const r = await runCase(client, c);
    results.push({ subject, ...c, ...r });
    process.stderr.write(
      `${subject.padEnd(8)} ${String(c.payload).padStart(6)} B  x${String(c.inFlight).padStart(2)}: ${r.callsPerSecond.toFixed(0)} calls/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms\n`,
    );
  }
  await client.close();
}

const rows = CASES.map((c) => {
  const pick = (s) => results.find((r) => r.subject === s && r.payload === c.payload && r.inFlight === c.inFlight);
  const b = pick("bridge");
  const t = pick("bridgeTls");
  const base = pick("baseline");
  return {
    ...c,
    bridge: b,
    bridgeTls: t,
    baseline: base,
    throughputRatio: b.callsPerSecond / base.callsPerSecond,
    tlsThroughputRatio: t.callsPerSecond / base.callsPerSecond,
    p50Ratio: b.p50 / base.p50,
  };
});
const fmt = (n, d = 2) => n.toFixed(d);
const table = [
  "| payload | in flight | bridge (QUIC) calls/s | bridge (TLS) calls/s | baseline calls/s | QUIC/baseline | TLS/baseline | bridge (QUIC) p50 / p99 ms | baseline p50 / p99 ms | QUIC p50 ratio |",
  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ...rows.map(
    (r) =>
      `| ${r.payload >= 1024 ? r.payload / 1024 + " KB" : r.payload + " B"} | ${r.inFlight} | ${fmt(r.bridge.callsPerSecond, 0)} | ${fmt(r.bridgeTls.callsPerSecond, 0)} | ${fmt(r.baseline.callsPerSecond, 0)} | ${fmt(r.throughputRatio)} | ${fmt(r.tlsThroughputRatio)} | ${fmt(r.bridge.p50)} / ${fmt(r.bridge.p99)} | ${fmt(r.baseline.p50)} / ${fmt(r.baseline.p99)} | ${fmt(r.p50Ratio)}x |`,
  ),
].join("\n");
console.log(table);
mkdirSync(dirname(jsonOut), { recursive: true });
writeFileSync(jsonOut, JSON.stringify({ date: new Date().toISOString(), node: process.version, rows }, null, 2));
