// `node bench/call-stage.mjs [--calls N] [--warmup N] [LABEL=/abs/dist ...]`: instructions (valgrind
// callgrind, `node --single-threaded --predictable`) that `serve` spends per sequential 100-byte
// echo `tools/call` above its sender, without network or timers: `StdioBridge` (the serve
// pipeline) in one process with a `PassThrough` stdin and a fake unary sender that encodes the
// request (`toBinary`) and answers on the next turn with a decoded echo (`fromBinary`). Per
// subject two processes, `--warmup` (default 3 000) calls and then N/4 resp. 5N/4 calls (default
// N 2 000); the difference divided by N. The harness's own client (its JSON, the `PassThrough`,
// the line split) is in the figure. `--child DIST WARMUP CALLS [SKIP]` runs the harness itself
// (SKIP `validate`: the generated validators answer valid at once; `abort`: a plain object in
// place of `AbortController`), printing CPU µs per call.
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PassThrough, Writable } from "node:stream";
import { ROOT, tempDir } from "./common.mjs";

const argv = process.argv.slice(2);
if (!argv.includes("--child")) {
  const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
  const calls = Number(option("--calls", 2000));
  const warmup = Number(option("--warmup", 3000));
  const subjects = argv.filter((a) => /^[^-][^=]*=/.test(a)).map((a) => ({ label: a.slice(0, a.indexOf("=")), dist: a.slice(a.indexOf("=") + 1) }));
  if (subjects.length === 0) subjects.push({ label: "this", dist: join(ROOT, "dist") });
  const work = tempDir("orchestra-bench-call-stage-");
  const run = (dist, n, tag) => {
    const out = join(work, `callgrind-${tag}.out`);
    const self = fileURLToPath(import.meta.url);
    execFileSync(
      "valgrind",
      ["--tool=callgrind", `--callgrind-out-file=${out}`, process.execPath, "--single-threaded", "--predictable", self, "--child", dist, String(warmup), String(n)],
      { stdio: "ignore" },
    );
    return Number(/^summary: (\d+)/m.exec(readFileSync(out, "utf8"))?.[1]);
  };
  console.log("| subject | instructions per call above the sender (thousands) |\n| --- | --- |");
  try {
    for (const s of subjects) {
      const base = Math.max(1, Math.round(calls / 4));
      const a = run(s.dist, base, `${s.label}-a`);
      const b = run(s.dist, base + calls, `${s.label}-b`);
      console.log(`| ${s.label} | ${((b - a) / calls / 1e3).toFixed(1)} |`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  process.exit(0);
}
const [dist, warmupText, callsText, skipText = ""] = argv.slice(argv.indexOf("--child") + 1);
const skip = new Set(skipText.split(",").filter(Boolean));
if (skip.has("abort")) {
  // A plain cancellation object in place of AbortController (what the session would use).
  class CheapSignal {
    aborted = false;
    reason = undefined;
    listener = undefined;
    addEventListener(_t, l) {
      this.listener = l;
    }
    removeEventListener(_t, l) {
      if (this.listener === l) this.listener = undefined;
    }
  }
  globalThis.AbortController = class {
    signal = new CheapSignal();
    abort(r) {
      this.signal.aborted = true;
      this.signal.reason = r;
      this.signal.listener?.();
    }
  };
}
const { StdioBridge } = await import(join(dist, "bridge/stdio-bridge.js"));
const pb = await import(join(dist, "gen/proto/orchestra/plugin/v1/plugin_pb.js"));
const { create, toBinary, fromBinary } = await import(join(dist, "../node_modules/@bufbuild/protobuf/dist/esm/index.js"));
const { validatorsFor } = await import(join(dist, "mcp/validation.js"));

if (skip.has("validate")) {
  const v = validatorsFor("2025-06-18");
  v.validate = () => null;
}

const text = "x".repeat(100);
const schema = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };
const toolsResponse = toBinary(
  pb.PluginResponseSchema,
  create(pb.PluginResponseSchema, { requestId: "", response: { case: "listTools", value: { tools: [{ name: "echo", description: "echo", inputSchema: schema }] } } }),
);
const sender = {
  address: "fake:1",
  send(request, options = {}) {
    const bytes = toBinary(pb.PluginRequestSchema, request);
    const signal = options.signal;
    const onAbort = () => {};
    signal?.addEventListener("abort", onAbort, { once: true });
    return new Promise((resolve) =>
      setImmediate(() => {
        signal?.removeEventListener("abort", onAbort);
        if (request.request.case === "listTools") return resolve(fromBinary(pb.PluginResponseSchema, toolsResponse));
        const args = request.request.value.arguments;
        const answer = toBinary(
          pb.PluginResponseSchema,
          create(pb.PluginResponseSchema, { requestId: request.requestId, response: { case: "toolCall", value: { success: true, result: { text: args.text } } } }),
        );
        void bytes;
        resolve(fromBinary(pb.PluginResponseSchema, answer));
      }),
    );
  },
  close: async () => {},
};

const input = new PassThrough();
let onLine;
const output = new Writable({
  write(chunk, _enc, cb) {
    const lines = chunk.toString("utf8").split("\n").filter(Boolean);
    cb();
    for (const l of lines) onLine?.(l);
  },
});
const bridge = new StdioBridge({ input, output, sender, serverInfo: { name: "x", version: "1" }, watchToolChanges: false });
void bridge.run();
let id = 0;
const request = (method, params) =>
  new Promise((resolve) => {
    onLine = resolve;
    input.write(`${JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params })}\n`);
  });
await request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "s", version: "1" } });
input.write(`{"jsonrpc":"2.0","method":"notifications/initialized"}\n`);
async function run(n) {
  for (let i = 0; i < n; i++) {
    const line = await request("tools/call", { name: "echo", arguments: { text } });
    if (!line.includes(text)) throw new Error(`bad answer ${line}`);
  }
}
await run(Number(warmupText));
const c0 = process.cpuUsage();
await run(Number(callsText));
const c = process.cpuUsage(c0);
console.log(`${((c.user + c.system) / Number(callsText)).toFixed(1)} µs CPU per call (skip: ${[...skip].join(",") || "none"})`);
input.end();
process.exit(0);
