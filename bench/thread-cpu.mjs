// `node bench/thread-cpu.mjs [--calls N=4000] [--warmup N=3000] [--embedded]`
//
// Where `serve`'s CPU goes per sequential `tools/call` (100-byte echo), thread by thread: the
// user + system time of each thread of the bridge process (/proc/PID/task/*/stat, 10 ms ticks)
// over `--calls` calls at 1 in flight, after `--warmup` calls, against our orchestrator in a
// process of its own (or, with `--embedded`, the embedded one on the bridge's own thread). Linux
// only. Prints µs per call per thread (the main thread is the one whose id is the pid) and the
// calls/s of the measured part.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { cliOf, provisionBridgeCert, startOurOrchestrator, tempDir } from "./common.mjs";

const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) : fallback);
const calls = option("--calls", 4000);
const warmup = option("--warmup", 3000);
const embedded = argv.includes("--embedded");

const work = tempDir("orchestra-bench-thread-cpu-");
const certsDir = join(work, "certs");
const orchestrator = embedded ? undefined : await startOurOrchestrator({ certsDir });
if (!embedded) await provisionBridgeCert(certsDir);
const serveArgs = embedded ? [] : ["--orchestrator-addr", `127.0.0.1:${orchestrator.port}`, "--certs-dir", certsDir];
const bridge = spawn(process.execPath, [cliOf(), "serve", ...serveArgs], {
  stdio: ["pipe", "pipe", "ignore"],
  env: { ...process.env, XDG_CACHE_HOME: join(work, "cache") },
});

let pending = "";
let answer;
bridge.stdout.setEncoding("utf8").on("data", (chunk) => {
  pending += chunk;
  for (let end; (end = pending.indexOf("\n")) >= 0; pending = pending.slice(end + 1)) answer?.(pending.slice(0, end));
});
const request = (message) =>
  new Promise((resolve) => {
    answer = resolve;
    bridge.stdin.write(`${JSON.stringify(message)}\n`);
  });

/** CPU ms per thread of the bridge, keyed `<pid>`/`<tid> (<name>)`. */
function threadCpu() {
  const cpu = new Map();
  for (const tid of readdirSync(`/proc/${bridge.pid}/task`)) {
    const stat = readFileSync(`/proc/${bridge.pid}/task/${tid}/stat`, "utf8");
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    cpu.set(`${tid === String(bridge.pid) ? "main thread" : `thread ${tid}`} (${name})`, (Number(fields[11]) + Number(fields[12])) * 10);
  }
  return cpu;
}

let id = 0;
const echoCalls = async (n) => {
  for (let i = 0; i < n; i++) {
    const line = await request({ jsonrpc: "2.0", id: ++id, method: "tools/call", params: { name: "echo", arguments: { text: "x".repeat(100) } } });
    if (!line.includes('"result"')) throw new Error(`call ${id} failed: ${line.slice(0, 300)}`);
  }
};
try {
  await request({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } } });
  bridge.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  await echoCalls(warmup);
  const before = threadCpu();
  const started = performance.now();
  await echoCalls(calls);
  const seconds = (performance.now() - started) / 1000;
  const after = threadCpu();
  console.log(
    `serve (${embedded ? "embedded orchestrator" : "our orchestrator, separate process"}): ${calls} sequential calls after ${warmup}, ${(calls / seconds).toFixed(0)} calls/s`,
  );
  console.log("| thread | CPU µs per call |");
  console.log("| --- | --- |");
  let total = 0;
  for (const [thread, ms] of after) {
    const used = ms - (before.get(thread) ?? 0);
    total += used;
    if (used > 0) console.log(`| ${thread} | ${((used / calls) * 1000).toFixed(1)} |`);
  }
  console.log(`| all threads | ${((total / calls) * 1000).toFixed(1)} |`);
} finally {
  bridge.stdin.end();
  await new Promise((resolve) => bridge.once("close", resolve));
  await orchestrator?.stop();
  rmSync(work, { recursive: true, force: true });
}
