#!/usr/bin/env node
/**
 * Benchmark of the offline validator (`orchestra-stdio validate`) on a generated capture.
 *
 *   npm run build && node bench/validate-bench.mjs [sizeMB=200] [--keep]
 *
 * Writes a `serve --capture`-style file of about `sizeMB` MB into os.tmpdir() (a realistic
 * session: handshake, then tools/call with progress notifications, results, pings, list calls),
 * then measures, in the same run and on the same file:
 *   1. node:readline line iteration (reference for the splitter),
 *   2. read + split (our chunked LineSplitter, lines decoded to strings),
 *   3. read + split + JSON.parse of every line,
 *   4. full validation (validateFiles: parse, per-method schema checks, session rules),
 * and reports MB/s, lines/s, and each stage's throughput relative to read + split.
 * Peak RSS after each stage shows that memory stays flat. The file is deleted unless --keep.
 * Imports the compiled code from dist/ (run `npm run build` first).
 */
import { createReadStream, createWriteStream, statSync, unlinkSync } from "node:fs";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";

const args = process.argv.slice(2);
const keep = args.includes("--keep");
const sizeMB = Number(args.find((a) => !a.startsWith("--")) ?? 200);
if (!Number.isFinite(sizeMB) || sizeMB <= 0) {
  console.error("usage: node bench/validate-bench.mjs [sizeMB=200] [--keep]");
  process.exit(2);
}

let lib;
try {
  lib = await import(new URL("../dist/validate/index.js", import.meta.url).href);
} catch (err) {
  console.error(`cannot load dist/validate/index.js (run npm run build first): ${err.message}`);
  process.exit(2);
}
const { LineSplitter, validateFiles } = lib;

// ---- generate ------------------------------------------------------------------------------
const file = join(tmpdir(), `orchestra-validate-bench-${process.pid}.capture.jsonl`);
const target = Math.floor(sizeMB * 1e6);

async function generate() {
  const out = createWriteStream(file);
  let written = 0;
  let t = Date.parse("2025-06-18T10:00:00.000Z");
  const rec = (dir, msg) => `${JSON.stringify({ ts: new Date((t += 3)).toISOString(), dir, msg })}\n`;
  const V = "2025-06-18";
  let buf = "";
  buf += rec("c2s", { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: V, capabilities: { roots: { listChanged: true } }, clientInfo: { name: "bench-client", version: "1.0.0" } } });
  buf += rec("s2c", { jsonrpc: "2.0", id: 0, result: { protocolVersion: V, capabilities: { tools: { listChanged: true } }, serverInfo: { name: "bench-server", version: "1.0.0" } } });
  buf += rec("c2s", { jsonrpc: "2.0", method: "notifications/initialized" });
  const text = "lorem ipsum dolor sit amet ".repeat(12);
  let id = 1;
  while (written < target) {
    for (let k = 0; k < 500; k++) {
      const n = id++;
      if (n % 50 === 0) {
        buf += rec("c2s", { jsonrpc: "2.0", id: n, method: "tools/list", params: {} });
        buf += rec("s2c", { jsonrpc: "2.0", id: n, result: { tools: [{ name: "echo", description: "Echo", inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } }, { name: "sum", inputSchema: { type: "object" } }] } });
      } else if (n % 10 === 0) {
        buf += rec("c2s", { jsonrpc: "2.0", id: n, method: "ping" });
        buf += rec("s2c", { jsonrpc: "2.0", id: n, result: {} });
      } else {
        buf += rec("c2s", { jsonrpc: "2.0", id: n, method: "tools/call", params: { name: "echo", arguments: { text: `${text}${n}` }, _meta: { progressToken: `p${n}` } } });
        buf += rec("s2c", { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: `p${n}`, progress: 1, total: 2 } });
        buf += rec("s2c", { jsonrpc: "2.0", id: n, result: { content: [{ type: "text", text: `${text}${n}` }], isError: false } });
      }
    }
    written += Buffer.byteLength(buf);
    if (!out.write(buf)) await once(out, "drain");
    buf = "";
  }
  out.end();
  await once(out, "finish");
}

// ---- stages --------------------------------------------------------------------------------
async function readlineStage() {
  let lines = 0;
  const rl = createInterface({ input: createReadStream(file, { highWaterMark: 1 << 20 }), crlfDelay: Infinity });
  for await (const _line of rl) lines++;
  return lines;
}

async function splitStage(parse) {
  let lines = 0;
  let chars = 0;
  const splitter = new LineSplitter(
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

async function fullStage() {
  const { summary } = await validateFiles([file], { inputFormat: "capture" });
  if (summary.errors > 0) throw new Error(`generated capture has ${summary.errors} errors`);
  return summary.messages;
}

async function measure(name, fn) {
  const t0 = performance.now();
  const count = await fn();
  const s = (performance.now() - t0) / 1000;
  return { name, seconds: s, count, maxRssMB: process.resourceUsage().maxRSS / 1024 };
}

// ---- run -----------------------------------------------------------------------------------
try {
  const g0 = performance.now();
  await generate();
  const bytes = statSync(file).size;
  console.log(`generated ${(bytes / 1e6).toFixed(1)} MB capture in ${((performance.now() - g0) / 1000).toFixed(1)} s: ${file}`);
  console.log(`node ${process.version}, ${process.platform}/${process.arch}\n`);

  // Warm the page cache so the first stage is not penalised.
  await splitStage(false);
  const results = [
    await measure("node:readline (reference)", readlineStage),
    await measure("read + split", () => splitStage(false)),
    await measure("read + split + JSON.parse", () => splitStage(true)),
    await measure("full validation", fullStage),
  ];
  const base = results[1];
  const pad = (s, n) => String(s).padEnd(n);
  const padl = (s, n) => String(s).padStart(n);
  console.log(`${pad("stage", 28)}${padl("seconds", 9)}${padl("MB/s", 9)}${padl("lines/s", 12)}${padl("vs split", 10)}${padl("peak RSS MB", 13)}`);
  for (const r of results) {
    const mbps = bytes / 1e6 / r.seconds;
    console.log(
      `${pad(r.name, 28)}${padl(r.seconds.toFixed(2), 9)}${padl(mbps.toFixed(1), 9)}${padl(Math.round(r.count / r.seconds).toLocaleString("en-US"), 12)}` +
        `${padl(`${(base.seconds / r.seconds).toFixed(2)}x`, 10)}${padl(r.maxRssMB.toFixed(0), 13)}`,
    );
  }
  const [rl, split, parse, full] = results;
  console.log(
    `\nratios: split is ${(rl.seconds / split.seconds).toFixed(2)}x readline; JSON.parse costs ${(parse.seconds / split.seconds).toFixed(2)}x split; ` +
      `full validation costs ${(full.seconds / parse.seconds).toFixed(2)}x split+parse (${(full.seconds / split.seconds).toFixed(2)}x split)`,
  );
  console.log(`messages validated: ${full.count.toLocaleString("en-US")}`);
} finally {
  if (!keep) {
    try {
      unlinkSync(file);
    } catch {
      // not created
    }
  }
}
