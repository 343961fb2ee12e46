// `node --require ./bench/startup/probe.cjs ...`: records what a process loads before its first
// line on stdout (the first JSON-RPC response of an MCP stdio server) and writes it, at exit, to
// the file named by STARTUP_PROBE_OUT as JSON:
//   { bootstrapMs, firstLineMs, firstLineMonoUs, firstLineCpuMs, modules: [{ url, format, bytes, at }] }
// Times are ms since the process started (performance.timeOrigin); `firstLineMonoUs` is the same
// instant on the monotonic clock in µs (process.hrtime), the clock of a --cpu-prof profile; `firstLineCpuMs`: the process's CPU time (user + system, all threads) by then. `modules`: every ES module
// (loader hooks, ./loader-hooks.mjs) and CommonJS module (Module.prototype._compile; `at` is when
// its compilation began) in load order; `bytes`: source size. Used by bench/startup-profile.mjs.
// CommonJS, loaded with --require: an --import preload starts Node's ES module loader in every
// process it measures (the CLI's bin, dist/cli/main.cjs, starts without it). The module listing
// (STARTUP_PROBE_MODULES=1, loader hooks) works only under --import.
const { subscribe } = require("node:diagnostics_channel");
const { statSync, writeFileSync } = require("node:fs");
const { fileURLToPath, pathToFileURL } = require("node:url");
const Module = require("node:module");

const out = process.env.STARTUP_PROBE_OUT;
const now = () => performance.now();
const record = { bootstrapMs: now(), firstLineMs: undefined, firstLineMonoUs: undefined, firstLineCpuMs: undefined, modules: [] };

// STARTUP_PROBE_MODULES=1: every ES module through loader hooks as well (they start a thread and
// slow every import, and need --import: under --require the process ends without a word).
if (process.env.STARTUP_PROBE_MODULES === "1") {
  const { port1, port2 } = new MessageChannel();
  port1.on("message", (m) => record.modules.push({ ...m, at: m.at - performance.timeOrigin }));
  port1.unref();
  Module.register("./loader-hooks.mjs", pathToFileURL(__filename), { data: { port: port2 }, transferList: [port2] });
}

// The CLI bundle's scripts (src/cli/script-loader.ts runs them, not Node's loader).
subscribe("orchestra-stdio:script", (m) =>
  record.modules.push({ url: m.url, format: `script (code cache: ${m.cachedData})`, bytes: statSync(fileURLToPath(m.url)).size, at: now() }),
);

const compile = Module.prototype._compile;
Module.prototype._compile = function (content, filename) {
  record.modules.push({ url: `file://${filename}`, format: "commonjs-require", bytes: Buffer.byteLength(content), at: now() });
  return compile.call(this, content, filename);
};

const write = process.stdout.write;
process.stdout.write = function (chunk, ...rest) {
  if (record.firstLineMs === undefined) {
    record.firstLineMs = now();
    record.firstLineMonoUs = Number(process.hrtime.bigint() / 1000n);
    const cpu = process.cpuUsage();
    record.firstLineCpuMs = (cpu.user + cpu.system) / 1000;
    // STARTUP_PROBE_EXIT=first-line: exit as soon as the first line is written (bench/startup-instructions.mjs
    // counts the instructions up to there). On Linux a write to a pipe or a file is done when
    // write() returns; waiting for its callback would also count what the process does next
    // (microtasks, e.g. modules it imports after the answer).
    if (process.env.STARTUP_PROBE_EXIT === "first-line") {
      write.call(this, chunk, ...rest);
      process.exit(0);
    }
  }
  return write.call(this, chunk, ...rest);
};

process.on("exit", () => {
  if (out) writeFileSync(out, JSON.stringify(record));
});
