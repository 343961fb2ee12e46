// throwaway analysis (not committed): latency floor at 1 in flight against the upstream orchestrator
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { create } from "@bufbuild/protobuf";
import { ROOT, GO_PEER_BIN, provisionBridgeCert, startUpstreamOrchestrator, tempDir, cpuMsOf } from "./common.mjs";
import { StdioSession, driveEcho } from "./stdio-session.mjs";
const DIST = join(ROOT, "dist");
const { QuicSender } = await import(join(DIST, "quic/quic-link.js"));
const { PluginRequestSchema, ToolRequestSchema } = await import(join(DIST, "gen/proto/orchestra/plugin/v1/plugin_pb.js"));
const certsDir = join(tempDir("floor-"), "certs");
const orch = await startUpstreamOrchestrator({ certsDir });
await provisionBridgeCert(certsDir);
const N = 3000;
const text = "x".repeat(100);
async function direct() {
  const s = new QuicSender({ host: "127.0.0.1", port: orch.port, certsDir, serverName: "localhost", callTimeoutMs: 60000 });
  const req = (i) => create(PluginRequestSchema, { requestId: `f-${i}`, request: { case: "toolCall", value: create(ToolRequestSchema, { toolName: "echo", arguments: { text } }) } });
  for (let i = 0; i < 300; i++) await s.send(req(i));
  const lat = [];
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) { const a = performance.now(); await s.send(req(i)); lat.push(performance.now() - a); }
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  await s.close();
  lat.sort((a, b) => a - b);
  return { cps: (N * 1000) / wall, p50: lat[N >> 1], cpu: (c.user + c.system) / 1000 / N };
}
async function viaStdio(cmd, args) {
  const session = new StdioSession(cmd, args);
  await session.initialize();
  await driveEcho(session, { payload: 100, inFlight: 8, calls: 300 });
  const b0 = session.cpuMs();
  const r = await driveEcho(session, { payload: 100, inFlight: 1, calls: N });
  const cpu = (session.cpuMs() - b0) / N;
  await session.close();
  return { cps: r.callsPerSec, p50: r.p50Ms, cpu };
}
const addr = `127.0.0.1:${orch.port}`;
const subjects = {
  direct: () => direct(),
  go: () => viaStdio(join(GO_PEER_BIN, "transport-stdio"), ["--orchestrator-addr", addr, "--certs-dir", certsDir]),
  ours: () => viaStdio(process.execPath, [join(DIST, "cli/main.js"), "serve", "--orchestrator-addr", addr, "--certs-dir", certsDir]),
};
const rounds = Number(process.argv[2] ?? 3);
const res = {};
for (let r = 0; r < rounds; r++) {
  const order = r % 2 ? ["ours", "go", "direct"] : ["direct", "go", "ours"];
  for (const k of order) { const x = await subjects[k](); (res[k] ??= []).push(x); console.error(`round ${r} ${k} ${x.cps.toFixed(0)}/s p50 ${x.p50.toFixed(3)} cpu ${x.cpu.toFixed(3)}`); }
}
const med = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
for (const k of Object.keys(res)) console.log(k, "calls/s", med(res[k].map((x) => x.cps)).toFixed(0), "p50", med(res[k].map((x) => x.p50)).toFixed(3), "cpu/call", med(res[k].map((x) => x.cpu)).toFixed(3));
orch.abort?.(); await orch.stop?.();
process.exit(0);
