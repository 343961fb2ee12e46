#!/usr/bin/env node
/**
 * Benchmark of the offline validator (`orchestra-stdio validate`) on a generated capture.
 *
 *   npm run build && node bench/validate-bench.mjs [sizeMB=200] [--jobs N=2] [--runs R=3] [--keep] [--file PATH] [--dist DIR] [--no-cli]
 *
 * Writes a `serve --capture`-style file of about `sizeMB` MB into os.tmpdir() (or uses `--file`),
 * then measures, in the same run and on the same file:
 *   1. read + split      (chunked reads, our line splitter, lines decoded to strings),
 *   2. read + split + JSON.parse of every line,
 *   3. full validation on one thread (validateFiles: parse, schema checks, session rules),
 *   4. read + split + JSON.parse of the file on each of N worker threads at once (workers kept
 *      between rounds): the machine's ceiling for N files on N threads right now,
 *   5. full validation of N files (the file given N times) on one thread,
 *   6. the same N files with `jobs: N` (one file per thread: the calling thread and N - 1 worker
 *      threads; default 2; the workers are kept between runs, as `validateFiles` keeps them),
 * all measured warm (one unmeasured round first); then the CLI, one process per run, on the N
 * files with `--jobs 1` and `--jobs N` (start-up included; `--no-cli` skips it),
 * and reports MB/s, messages/s (capture lines = JSON-RPC messages), and the ratios the targets
 * are stated in (one thread vs split+parse of the same file; N files on N threads vs on one). Each stage runs `R` times, stages
 * interleaved round by round so that a noisy neighbour hits all of them alike; the median is
 * reported, with the CPU seconds the process used (all threads) during the stage. The file is
 * deleted unless --keep (or --file) is given. `--dist DIR` benchmarks another build of the
 * project (default: this checkout's dist/). As the machine may be shared, it also reports the load
 * average and how much a second thread speeds up a plain JSON.parse workload at the time.
 *
 * The generated session is meant to look like real MCP traffic: initialize exchange, tools/list
 * and prompts/list results with several entries, many tools/call requests with arguments and
 * results with text (some with structured content, resource links, embedded resources or
 * isError), progress notifications, pings both ways, cancellations, JSON-RPC error responses,
 * and now and then a large base64 image (48–768 KiB) or audio (0.5–1.5 MiB) block.
 * Imports the compiled code from dist/ (run `npm run build` first).
 */
import { createReadStream, createWriteStream, readdirSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { once } from "node:events";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
};
const positional = args.filter((a, i) => !a.startsWith("--") && !(i > 0 && ["--jobs", "--runs", "--file", "--dist"].includes(args[i - 1])));
// (--no-cli: skip the one-process-per-run CLI stages)
const sizeMB = Number(positional[0] ?? 200);
const jobs = Number(option("--jobs", 2));
const runs = Number(option("--runs", 3));
const given = option("--file", undefined);
const dist = option("--dist", undefined);
const keep = flag("--keep") || given !== undefined;
const cores = availableParallelism();
if (!Number.isFinite(sizeMB) || sizeMB <= 0 || !Number.isInteger(jobs) || jobs < 1 || !Number.isInteger(runs) || runs < 1) {
  console.error("usage: node bench/validate-bench.mjs [sizeMB=200] [--jobs N=2] [--runs R=3] [--keep] [--file PATH] [--dist DIR] [--no-cli]");
  process.exit(2);
}

let lib;
const distBase = dist === undefined ? new URL("../dist/", import.meta.url) : pathToFileURL(`${resolve(dist)}/`);
try {
  lib = await import(new URL("validate/index.js", distBase).href);
} catch (err) {
  console.error(`cannot load dist/validate/index.js (run npm run build first): ${err.message}`);
  process.exit(2);
}
const { textLineSplitter, validateFiles } = lib;
const { threadStats } = await import(new URL("validate/jobs.js", distBase).href).catch(() => ({ threadStats: undefined }));

// ---- generate ------------------------------------------------------------------------------
const file = given ?? join(tmpdir(), `orchestra-validate-bench-${process.pid}.capture.jsonl`);
const target = Math.floor(sizeMB * 1e6);

/** Deterministic pseudo-random numbers (mulberry32), so every run generates the same file. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS =
  "the server returned a list of matching files in the repository and the client asked for more context about each function call result value error timeout retry cache index query table row column user session token request response stream buffer chunk line message schema".split(
    " ",
  );

const TOOLS = [
  {
    name: "read_file",
    title: "Read file",
    description: "Read a text file from the workspace and return its contents.",
    inputSchema: {
      type: "object",
      properties: { path: { type: "string", description: "Path relative to the workspace root" }, offset: { type: "integer" }, limit: { type: "integer" } },
      required: ["path"],
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: "write_file",
    description: "Write text to a file, creating it if needed.",
    inputSchema: { type: "object", properties: { path: { type: "string" }, text: { type: "string" } }, required: ["path", "text"] },
    annotations: { destructiveHint: true, idempotentHint: true },
  },
  {
    name: "search",
    title: "Search code",
    description: "Full-text search over the workspace; returns matching lines with locations.",
    inputSchema: {
      type: "object",
      properties: { query: { type: "string" }, glob: { type: "string" }, maxResults: { type: "integer", minimum: 1, maximum: 500 } },
      required: ["query"],
    },
    outputSchema: { type: "object", properties: { matches: { type: "array" }, truncated: { type: "boolean" } }, required: ["matches"] },
  },
  {
    name: "run_tests",
    description: "Run the project's test suite and summarise failures.",
    inputSchema: { type: "object", properties: { filter: { type: "string" }, timeoutSeconds: { type: "number" } } },
  },
  {
    name: "screenshot",
    title: "Take screenshot",
    description: "Capture the current screen as a PNG image.",
    inputSchema: { type: "object", properties: { display: { type: "integer" }, scale: { type: "number" } } },
    annotations: { readOnlyHint: true },
  },
  {
    name: "speak",
    description: "Synthesise speech for a short text and return WAV audio.",
    inputSchema: { type: "object", properties: { text: { type: "string" }, voice: { type: "string", enum: ["alto", "tenor"] } }, required: ["text"] },
  },
  {
    name: "http_get",
    description: "Fetch a URL and return the response body as text.",
    inputSchema: { type: "object", properties: { url: { type: "string", format: "uri" }, headers: { type: "object" } }, required: ["url"] },
    annotations: { openWorldHint: true, readOnlyHint: true },
  },
  {
    name: "sql_query",
    title: "Query database",
    description: "Run a read-only SQL query and return the rows as JSON.",
    inputSchema: { type: "object", properties: { sql: { type: "string" }, params: { type: "array" } }, required: ["sql"] },
    outputSchema: { type: "object", properties: { rows: { type: "array" }, rowCount: { type: "integer" } }, required: ["rows"] },
  },
];

const PROMPTS = [
  {
    name: "code_review",
    title: "Code review",
    description: "Review a change for bugs and style.",
    arguments: [{ name: "diff", description: "Unified diff", required: true }, { name: "focus" }],
  },
  { name: "summarise", description: "Summarise a document.", arguments: [{ name: "text", required: true }] },
  { name: "explain_error", description: "Explain a stack trace.", arguments: [{ name: "trace", required: true }, { name: "language" }] },
];

/**
 * Writes the capture. Returns counts for the report: messages (= lines), bytes in base64 blocks,
 * and how many invalid messages were planted (`faults`: each gives schema/result findings).
 */
async function generate() {
  const rand = rng(20250618);
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const sentence = (n) => {
    const w = [];
    for (let i = 0; i < n; i++) w.push(pick(WORDS));
    return w.join(" ");
  };
  // A few blobs reused throughout (random bytes, so base64 looks like real media).
  const bytes = (n) => {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256);
    return b;
  };
  const images = [48, 128, 256, 768].map((kib) => bytes(kib * 1024).toString("base64"));
  const audios = [512, 1536].map((kib) => bytes(kib * 1024).toString("base64"));
  const smallBlob = bytes(3000).toString("base64");

  const out = createWriteStream(file);
  let written = 0;
  let messages = 0;
  let base64Bytes = 0;
  let t = Date.parse("2025-06-18T10:00:00.000Z");
  let buf = "";
  const rec = (dir, msg) => {
    messages++;
    buf += `${JSON.stringify({ ts: new Date((t += 1 + Math.floor(rand() * 40))).toISOString(), dir, msg })}\n`;
  };
  const V = "2025-06-18";
  rec("c2s", {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: V,
      capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: {} },
      clientInfo: { name: "bench-client", title: "Bench Client", version: "1.4.2" },
    },
  });
  rec("s2c", {
    jsonrpc: "2.0",
    id: 0,
    result: {
      protocolVersion: V,
      capabilities: { tools: { listChanged: true }, prompts: { listChanged: false }, logging: {}, completions: {} },
      serverInfo: { name: "bench-server", version: "0.9.0" },
      instructions: "Use read_file before write_file. Searches are case-insensitive.",
    },
  });
  rec("c2s", { jsonrpc: "2.0", method: "notifications/initialized" });

  let id = 1; // client request ids
  let sid = 1; // server request ids ("s-<n>")
  let faults = 0;
  while (written < target) {
    for (let k = 0; k < 200; k++) {
      const n = id++;
      const r = rand();
      if (n % 400 === 1) {
        rec("c2s", { jsonrpc: "2.0", id: n, method: "tools/list", params: {} });
        rec("s2c", { jsonrpc: "2.0", id: n, result: { tools: TOOLS } });
      } else if (n % 997 === 0) {
        rec("c2s", { jsonrpc: "2.0", id: n, method: "prompts/list" });
        rec("s2c", { jsonrpc: "2.0", id: n, result: { prompts: PROMPTS } });
      } else if (n % 331 === 0) {
        rec("c2s", { jsonrpc: "2.0", id: n, method: "prompts/get", params: { name: "code_review", arguments: { diff: sentence(40), focus: "errors" } } });
        rec("s2c", {
          jsonrpc: "2.0",
          id: n,
          result: {
            description: "Review",
            messages: [
              { role: "user", content: { type: "text", text: sentence(60) } },
              { role: "assistant", content: { type: "text", text: sentence(20) } },
            ],
          },
        });
      } else if (r < 0.05) {
        rec("c2s", { jsonrpc: "2.0", id: n, method: "ping" });
        rec("s2c", { jsonrpc: "2.0", id: n, result: {} });
      } else if (r < 0.07) {
        const s = `s-${sid++}`;
        rec("s2c", { jsonrpc: "2.0", id: s, method: "ping" });
        rec("c2s", { jsonrpc: "2.0", id: s, result: {} });
      } else {
        // tools/call
        const tool = pick(TOOLS);
        const token = rand() < 0.4 ? `tok-${n}` : undefined;
        const params = {
          name: tool.name,
          arguments: tool.name === "write_file" ? { path: `src/module${n % 97}.ts`, text: sentence(80) } : { path: `src/file${n % 113}.ts`, query: sentence(4), maxResults: 50 },
        };
        if (token !== undefined) params._meta = { progressToken: token };
        rec("c2s", { jsonrpc: "2.0", id: n, method: "tools/call", params });
        if (token !== undefined) {
          const steps = 1 + Math.floor(rand() * 3);
          for (let p = 1; p <= steps; p++)
            rec("s2c", { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: p, total: steps, message: `step ${p} of ${steps}` } });
        }
        const kind = rand();
        let result;
        if (kind < 0.0015) {
          const data = pick(images);
          base64Bytes += data.length;
          result = {
            content: [
              { type: "image", data, mimeType: "image/png" },
              { type: "text", text: "Screenshot taken." },
            ],
          };
        } else if (kind < 0.0017) {
          const data = pick(audios);
          base64Bytes += data.length;
          result = { content: [{ type: "audio", data, mimeType: "audio/wav", annotations: { audience: ["user"], priority: 0.5 } }] };
        } else if (kind < 0.03) {
          rec("s2c", { jsonrpc: "2.0", id: n, error: { code: -32602, message: `Unknown tool arguments for ${tool.name}`, data: { field: "path" } } });
          continue;
        } else if (kind < 0.035) {
          rec("c2s", { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: n, reason: "user pressed stop" } });
          continue;
        } else if (kind < 0.06) {
          result = { content: [{ type: "text", text: `Error: ${sentence(12)}` }], isError: true };
        } else if (kind < 0.12) {
          result = {
            content: [{ type: "text", text: JSON.stringify({ matches: [sentence(8), sentence(8)], truncated: false }) }],
            structuredContent: { matches: [sentence(8), sentence(8)], truncated: false },
          };
        } else if (kind < 0.15) {
          base64Bytes += smallBlob.length;
          result = {
            content: [
              { type: "resource_link", uri: `file:///workspace/src/file${n % 113}.ts`, name: `file${n % 113}.ts`, mimeType: "text/typescript" },
              { type: "resource", resource: { uri: `file:///workspace/assets/icon${n % 7}.png`, mimeType: "image/png", blob: smallBlob } },
            ],
          };
        } else {
          const blocks = [{ type: "text", text: sentence(20 + Math.floor(rand() * 150)) }];
          if (rand() < 0.3) blocks.push({ type: "text", text: sentence(30), annotations: { audience: ["assistant"], priority: 0.2 } });
          result = { content: blocks, isError: false };
        }
        if (n % 20011 === 0) {
          // A planted fault: a text block without its text (schema/result errors).
          result = { content: [{ type: "text" }] };
          faults++;
        }
        rec("s2c", { jsonrpc: "2.0", id: n, result });
      }
    }
    written += Buffer.byteLength(buf);
    if (!out.write(buf)) await once(out, "drain");
    buf = "";
  }
  out.end();
  await once(out, "finish");
  return { messages, base64Bytes, faults };
}

// ---- stages --------------------------------------------------------------------------------
async function splitStage(parse) {
  let lines = 0;
  let chars = 0;
  const splitter = textLineSplitter(
    parse
      ? (text) => {
          lines++;
          JSON.parse(text);
        }
      : (text) => {
          lines++;
          chars += text.length;
        },
  );
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) splitter.push(chunk);
  splitter.end();
  if (chars < 0) console.log(chars); // keep the work observable
  return lines;
}

/**
 * Split + JSON.parse of the whole file on each of `threads` worker threads at once (N files on N
 * threads, as `--jobs N` splits N files): what this machine gives right now for the parsing alone
 * with that many threads, the ceiling for `--jobs`. The workers are started once and kept between
 * rounds (as `--jobs` keeps its workers).
 */
let parseWorkers;
async function parallelParseStage(threads) {
  const { Worker } = await import("node:worker_threads");
  if (parseWorkers === undefined) {
    const body = `
      const { parentPort, workerData } = await import("node:worker_threads");
      const { createReadStream } = await import("node:fs");
      const { textLineSplitter } = await import(new URL("validate/index.js", workerData.dist).href);
      parentPort.on("message", async () => {
        let lines = 0;
        const splitter = textLineSplitter((text) => { lines++; JSON.parse(text); });
        for await (const chunk of createReadStream(workerData.file, { highWaterMark: 1 << 20 })) splitter.push(chunk);
        splitter.end();
        parentPort.postMessage(lines);
      });
      parentPort.postMessage("ready");`;
    parseWorkers = await Promise.all(
      Array.from({ length: threads }, () => {
        const w = new Worker(new URL(`data:text/javascript,${encodeURIComponent(body)}`), { workerData: { dist: distBase.href, file } });
        w.unref();
        return new Promise((resolveReady, reject) => {
          w.once("message", () => resolveReady(w));
          w.once("error", reject);
        });
      }),
    );
  }
  const counts = await Promise.all(
    parseWorkers.map(
      (w) =>
        new Promise((resolveRun) => {
          w.once("message", resolveRun);
          w.postMessage("run");
        }),
    ),
  );
  return counts.reduce((a, b) => a + b, 0);
}

/**
 * The CLI as a user runs it, one process per run (start-up, loading and cold code included):
 * `validate --format json FILE...` (the file N times) with `--jobs 1` and `--jobs N`, interleaved, `runs` times each;
 * prints the medians and their ratio.
 */
async function cliStages() {
  const { execFile } = await import("node:child_process");
  const cli = new URL("cli/main.js", distBase);
  const once = (jobCount) =>
    new Promise((resolveRun, reject) => {
      const t0 = performance.now();
      execFile(
        process.execPath,
        [cli.pathname, "validate", "--format", "json", "--input-format", "capture", "--jobs", String(jobCount), ...Array(jobs).fill(file)],
        { maxBuffer: 256 << 20 },
        (err) => {
          // Exit code 1: the planted faults were found.
          if (err !== null && err.code !== 1) reject(err);
          else resolveRun((performance.now() - t0) / 1000);
        },
      );
    });
  const one = [];
  const many = [];
  for (let i = 0; i < runs; i++) {
    one.push(await once(1));
    many.push(await once(jobs));
  }
  const a = median(one);
  const b = median(many);
  console.log(
    `\nCLI, one process per run (node start-up and cold code included), median of ${runs}: --jobs 1 ${a.toFixed(2)} s, --jobs ${jobs} ${b.toFixed(2)} s ` +
      `(${(a / b).toFixed(2)}x); runs: ${one.map((x) => x.toFixed(2)).join(" ")} / ${many.map((x) => x.toFixed(2)).join(" ")}`,
  );
}

let plantedFaults;
let referenceFindings;
/** Full validation of the file given `copies` times, on `jobCount` threads. */
async function fullStage(jobCount, copies = 1) {
  const { findings, summary } = await validateFiles(Array(copies).fill(file), { inputFormat: "capture", jobs: jobCount });
  // Every planted fault must be found, and every thread count must report the same findings.
  if (plantedFaults !== undefined && (summary.errors < plantedFaults * copies || findings.some((f) => f.rule !== "schema/result"))) {
    throw new Error(`expected only schema/result findings for ${plantedFaults} planted faults, got ${summary.errors} errors (jobs ${jobCount})`);
  }
  const text = JSON.stringify(findings.slice(0, findings.length / copies));
  referenceFindings ??= text;
  if (text !== referenceFindings || JSON.stringify(findings) !== JSON.stringify(Array(copies).fill(JSON.parse(text)).flat())) {
    throw new Error(`jobs ${jobCount} reported other findings than the first full validation`);
  }
  return summary.messages;
}

/**
 * How much a second thread helps on this machine right now (it is shared: 2 cores, other jobs):
 * the same JSON.parse workload on 1 thread, then on 2 threads at once; returns the throughput gain
 * (2.0 = two free cores, 1.0 = no parallelism available).
 */
async function parallelCapacity() {
  const body = `
    const s = JSON.stringify({ a: Array.from({ length: 200 }, (_, i) => ({ id: i, name: "item" + i, v: [1, 2, 3] })) });
    let k = 0;
    for (let i = 0; i < 1500; i++) k += JSON.parse(s).a.length;
    require("node:worker_threads").parentPort?.postMessage(k);`;
  const { Worker } = await import("node:worker_threads");
  const run = () =>
    new Promise((resolveRun, reject) => {
      const w = new Worker(body, { eval: true });
      w.once("message", () => void w.terminate().then(resolveRun));
      w.once("error", reject);
    });
  await run(); // warm-up
  let t0 = performance.now();
  await run();
  const one = performance.now() - t0;
  t0 = performance.now();
  await Promise.all([run(), run()]);
  const two = performance.now() - t0;
  return (2 * one) / two;
}

/**
 * CPU milliseconds (user + system) of each thread of this process so far, by thread id, from
 * /proc/self/task (Linux; an empty map elsewhere). 10 ms ticks.
 */
function threadCpu() {
  const out = new Map();
  let tasks;
  try {
    tasks = readdirSync("/proc/self/task");
  } catch {
    return out;
  }
  for (const tid of tasks) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(tid, (Number(fields[11]) + Number(fields[12])) * 10);
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/**
 * The CPU milliseconds threads used between two {@link threadCpu} snapshots: this (the main)
 * thread, the `busiest` other threads that used most (the worker threads of a stage with that
 * many), and all the others together (V8's and libuv's helper threads: GC, compilation, reads).
 */
function threadSplit(before, after, busiest) {
  const main = (after.get(String(process.pid)) ?? 0) - (before.get(String(process.pid)) ?? 0);
  const others = [...after]
    .filter(([tid]) => tid !== String(process.pid))
    .map(([tid, ms]) => ms - (before.get(tid) ?? 0))
    .sort((a, b) => b - a);
  const top = others.slice(0, busiest);
  return { main, top, rest: others.slice(busiest).reduce((a, b) => a + b, 0) };
}

async function measure(fn, busiest = 0) {
  const c0 = process.cpuUsage();
  const threads0 = threadCpu();
  const t0 = performance.now();
  const count = await fn();
  const cpu = process.cpuUsage(c0);
  return { seconds: (performance.now() - t0) / 1000, cpu: (cpu.user + cpu.system) / 1e6, count, threads: threadSplit(threads0, threadCpu(), busiest) };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
};

// ---- run -----------------------------------------------------------------------------------
try {
  let info = { messages: undefined, base64Bytes: undefined, faults: undefined };
  if (given === undefined) {
    const g0 = performance.now();
    info = await generate();
    plantedFaults = info.faults;
    console.log(`generated ${(statSync(file).size / 1e6).toFixed(1)} MB capture in ${((performance.now() - g0) / 1000).toFixed(1)} s: ${file}`);
  }
  const bytes = statSync(file).size;
  console.log(
    `node ${process.version}, ${process.platform}/${process.arch}, ${cpus().length} CPUs (${cpus()[0]?.model ?? "?"})` +
      (info.messages === undefined
        ? ""
        : `\n${info.messages.toLocaleString("en-US")} messages, ${((100 * info.base64Bytes) / bytes).toFixed(0)}% of bytes in base64 blocks, ${info.faults} planted faults`),
  );

  const stages = [
    ["read + split", () => splitStage(false)],
    ["read + split + JSON.parse", () => splitStage(true)],
    ["full validation, 1 thread", () => fullStage(1)],
    // (name, run, files, worker threads)
    [`split + JSON.parse, ${jobs} files, ${jobs} threads`, () => parallelParseStage(jobs), jobs, jobs],
    [`full, ${jobs} files, 1 thread`, () => fullStage(1, jobs), jobs],
    [`full, ${jobs} files, --jobs ${jobs}`, () => fullStage(jobs, jobs), jobs, jobs - 1],
  ];
  await splitStage(false); // warm the page cache
  // One unmeasured round: every stage is measured warm (compiled code, loaded validators, and the
  // worker threads that --jobs and the parallel parse stage keep between runs). A one-shot CLI
  // run pays the start-up: see the CLI stages below.
  for (const [, fn] of stages) await fn();
  const capacityBefore = await parallelCapacity();
  const times = stages.map(() => []);
  const cpuTimes = stages.map(() => []);
  const counts = stages.map(() => 0);
  /** Per stage, the CPU of each thread in the last round (see threadSplit). */
  const threadTimes = stages.map(() => undefined);
  for (let round = 0; round < runs; round++) {
    for (let i = 0; i < stages.length; i++) {
      const r = await measure(stages[i][1], stages[i][3] ?? 0);
      times[i].push(r.seconds);
      cpuTimes[i].push(r.cpu);
      counts[i] = r.count;
      threadTimes[i] = r.threads;
    }
  }
  const secs = times.map(median);
  const cpuSecs = cpuTimes.map(median);
  const pad = (s, n) => String(s).padEnd(n);
  const padl = (s, n) => String(s).padStart(n);
  console.log(`\nmedian of ${runs} run(s) per stage, ${(bytes / 1e6).toFixed(1)} MB\n`);
  console.log(`${pad("stage", 30)}${padl("seconds", 9)}${padl("MB/s", 9)}${padl("messages/s", 13)}${padl("vs parse", 10)}${padl("CPU s", 8)}`);
  for (let i = 0; i < stages.length; i++) {
    // (MB/s and "vs parse" per byte: a stage over N files reads N times the bytes)
    const copies = stages[i][2] ?? 1;
    const mbps = (copies * bytes) / 1e6 / secs[i];
    console.log(
      `${pad(stages[i][0], 30)}${padl(secs[i].toFixed(2), 9)}${padl(mbps.toFixed(1), 9)}${padl(Math.round(counts[i] / secs[i]).toLocaleString("en-US"), 13)}` +
        `${padl(`${((copies * secs[1]) / secs[i]).toFixed(2)}x`, 10)}${padl(cpuSecs[i].toFixed(2), 8)}`,
    );
  }
  console.log(`\nall runs (s): ${stages.map((s, i) => `${s[0]}: ${times[i].map((x) => x.toFixed(2)).join(" ")}`).join("; ")}`);
  if (threadStats !== undefined) console.log(`--jobs ${jobs}, last run: the workers validated ${threadStats.filesOnWorkers} of the ${jobs} files`);
  // Where the CPU of the last round went, per thread: for --jobs, whether the threads share the
  // work evenly and what the helper threads (GC, compilation, reads) take besides.
  const split = (t) => (t === undefined ? "?" : `main ${t.main} ms${t.top.map((ms) => `, worker ${ms} ms`).join("")}, other threads ${t.rest} ms`);
  console.log(`CPU per thread, last round: ${stages.map((st, i) => `${st[0]}: ${split(threadTimes[i])}`).join("; ")}`);
  // The same round read as load-independently as CPU allows: how much of --jobs' work ran off the
  // calling thread, what the threads used against the same files on one thread, and the speed-up
  // their CPU allows at most. On one thread the helper threads (GC, compilation, libuv's reads)
  // run on an idle core, so its wall time is about its calling thread's CPU; with --jobs every
  // core may run a validating thread, and the helpers take from the same cores: its wall time
  // cannot be less than the busiest thread's CPU, nor than all its threads' CPU over the cores.
  const solo = threadTimes[4];
  const par = threadTimes[5];
  if (solo !== undefined && par !== undefined && jobs > 1) {
    const sum = (t) => t.main + t.top.reduce((a, b) => a + b, 0) + t.rest;
    const js = par.main + par.top.reduce((a, b) => a + b, 0);
    console.log(
      `--jobs ${jobs}, last round: ${((100 * (js - par.main)) / Math.max(1, js)).toFixed(0)} % of the validating threads' CPU off the calling thread; ` +
        `all threads ${sum(par)} ms against ${sum(solo)} ms for the same files on one thread (${(sum(par) / Math.max(1, sum(solo))).toFixed(2)}x); ` +
        `helper threads ${par.rest} ms against ${solo.rest} ms; the CPU allows at most ` +
        `${(solo.main / Math.max(1, par.main, ...par.top, sum(par) / cores)).toFixed(2)}x (the calling thread's CPU on one thread / the larger of the busiest thread's and all threads' over ${cores} cores)`,
    );
  }
  const capacityAfter = await parallelCapacity();
  console.log(
    `machine: load average at the end ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}; ` + `a second thread gave ${capacityBefore.toFixed(2)}x before and ${capacityAfter.toFixed(2)}x after the stages (2.00x = two free cores)`,
  );
  const one = secs[1] / secs[2];
  const ceiling = (jobs * secs[1]) / secs[3];
  const scaling = secs[4] / secs[5];
  console.log(
    `\nfull validation on one thread runs at ${one.toFixed(2)}x the split+parse rate (target >= 1.0x); ` +
      `${jobs} files with --jobs ${jobs} at ${scaling.toFixed(2)}x the same files on one thread (target >= 1.8x for 2), ` +
      `where split+parse of ${jobs} files on ${jobs} threads reached ${ceiling.toFixed(2)}x split+parse on one`,
  );
  console.log(`messages validated: ${counts[2].toLocaleString("en-US")}`);
  if (!flag("--no-cli")) await cliStages();
} finally {
  if (!keep) {
    try {
      unlinkSync(file);
    } catch {
      // not created
    }
  }
}
