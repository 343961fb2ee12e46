/**
 * `validate --jobs`: chunked validation (parse + schema checks per chunk, session rules in file
 * order) must report exactly what a single-threaded run reports, whatever the chunk boundaries.
 *
 * From TypeScript sources the chunks are processed in-process (same code as the worker threads
 * run); the last group runs the compiled CLI (dist/, built by the vitest global setup) so that
 * real worker threads are used. Validators are the built-in generated ones (no ../shared needed).
 */
import { execFile, spawn } from "node:child_process";
import { closeSync, openSync, statSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CLAIM_BACK,
  CLAIM_FREE,
  CLAIM_FRONT,
  claimForWorker,
  claimFront,
  ChunkProcessor,
  ChunkView,
  KIND_COMPACT,
  KIND_LOCAL,
  KIND_TOOLONG,
  readRange,
  releaseRows,
  type ChunkTask,
} from "../../src/validate/chunk.js";
import { MISS, newFacts } from "../../src/validate/facts.js";
import { IdRegistry, InflightTable, TokenTable } from "../../src/validate/ids.js";
import { IDLE_WORKERS_MS, LineSplitter, validateFiles, type Finding, type ValidateOptions, type ValidateResult } from "../../src/validate/index.js";
import { threadStats } from "../../src/validate/pipeline.js";
import { prepareValidators } from "../../src/validate/setup.js";
import { CLI, ROOT, requireBuiltCli, runCli } from "../e2e/helpers.js";
import { mulberry32 } from "../helpers/prng.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/validate/", import.meta.url));
const OLD = "2025-03-26";
const V = "2025-06-18";

type Dir = "c2s" | "s2c";
const rec = (dir: Dir, msg: unknown): string => JSON.stringify({ ts: "2025-06-18T10:00:00.000Z", dir, msg });

/**
 * A capture meant to hit every path of the chunked pipeline: a version switch (2025-03-26), a
 * restart with another version, requests answered far away (other chunks), string/null/fractional
 * ids, reused and duplicate ids, progress and cancellation, invalid messages and schema failures
 * (including bad base64), batches, unparsable and malformed records, blank and CRLF lines, a
 * byte-order mark, non-ASCII text, lines longer than small chunks, and no final newline.
 */
function mixedCapture(): string {
  const out: string[] = [];
  const c = (msg: unknown): void => void out.push(rec("c2s", msg));
  const s = (msg: unknown): void => void out.push(rec("s2c", msg));
  c({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: OLD, capabilities: { roots: {} }, clientInfo: { name: "t", version: "1" } } });
  s({ jsonrpc: "2.0", id: 0, result: { protocolVersion: OLD, capabilities: { tools: {}, logging: {} }, serverInfo: { name: "s", version: "1" } } });
  c({ jsonrpc: "2.0", method: "notifications/initialized" });
  // Needs the resources capability, which the initialize result above does not advertise: only
  // found when the main thread reads that result's capabilities (also when the result is a row).
  c({ jsonrpc: "2.0", id: 4242, method: "resources/list" });
  s({ jsonrpc: "2.0", id: 4242, result: { resources: [] } });
  const late: Array<() => void> = [];
  for (let i = 1; i <= 150; i++) {
    const id: string | number = i % 7 === 0 ? `q-${i}` : i % 23 === 0 ? i + 0.5 : i;
    const token = i % 3 === 0 ? `tok-${i}` : undefined;
    c({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: { text: `héllo ${i} ✓` }, ...(token ? { _meta: { progressToken: token } } : {}) } });
    if (token) {
      s({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: 2, total: 3 } });
      s({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: i % 9 === 0 ? 1 : 3 } });
    }
    const answer = (): void => {
      if (i % 11 === 0) s({ jsonrpc: "2.0", id, error: { code: -32602, message: "bad arguments" } });
      else if (i % 13 === 0) s({ jsonrpc: "2.0", id, result: { content: [{ type: "text" }] } });
      else if (i % 17 === 0) s({ jsonrpc: "2.0", id, result: { content: [{ type: "image", data: "not base64!", mimeType: "image/png" }] } });
      else if (i % 19 === 0) s({ jsonrpc: "2.0", id, result: { content: [{ type: "image", data: "aGVsbG8=".repeat(40), mimeType: "image/png" }] } });
      else s({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: `result ${i} `.repeat(1 + (i % 5)) }], isError: false } });
    };
    if (i % 5 === 0) late.push(answer); // answered a few dozen lines later (often another chunk)
    else if (i % 29 !== 0) answer();
    if (i % 29 === 0) c({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: "stop" } });
    if (late.length > 6) late.shift()!();
    if (i % 31 === 0) {
      out.push("");
      out.push(`${rec("c2s", { jsonrpc: "2.0", id: 9000 + i, method: "ping" })}\r`);
      s({ jsonrpc: "2.0", id: 9000 + i, result: {} });
      out.push(JSON.stringify({ ts: "x", dir: "c2s", raw: '{"jsonrpc":"2.0", oops' }));
      out.push("this is not a capture record");
      c([{ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "nope", progress: 1 } }, { jsonrpc: "2.0", id: 8000 + i, method: "ping" }]);
      s({ jsonrpc: "2.0", id: 8000 + i, result: {} });
      c({ jsonrpc: "1.0", id: 7000 + i, method: "ping" });
      s({ jsonrpc: "2.0", id: 7000 + i, result: {} });
      c({ jsonrpc: "2.0", method: "tools/list", id: true });
      s({ jsonrpc: "2.0", id: 424242, result: {} });
      s({ jsonrpc: "2.0", id: 6000 + i, error: { code: "E42", message: 7 } });
      c({ jsonrpc: "2.0", id: 1, method: "ping" }); // id 1 reused
      s({ jsonrpc: "2.0", id: 1, result: {} });
      c({ jsonrpc: "2.0", id: 5, method: "custom/thing", params: {} });
      s({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "x".repeat(3000) } });
    }
    if (i === 90) {
      // A restart that negotiates the default version.
      c({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: V, capabilities: {}, clientInfo: { name: "t", version: "2" } } });
      s({ jsonrpc: "2.0", id: 0, result: { protocolVersion: V, capabilities: { tools: {} }, serverInfo: { name: "s", version: "2" } } });
      c({ jsonrpc: "2.0", method: "notifications/initialized" });
    }
  }
  for (const a of late) a();
  c({ jsonrpc: "2.0", id: 99999, method: "tools/list" }); // never answered
  return `\ufeff${out.join("\n")}`; // no final newline
}

const strip = (r: ValidateResult): unknown => ({ findings: r.findings, files: r.summary.files });

let dir = "";
let capture = "";
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "orchestra-validate-jobs-"));
  capture = join(dir, "mixed.capture.jsonl");
  await writeFile(capture, mixedCapture());
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("--jobs gives the findings and summaries of a single-threaded run", () => {
  let single: ValidateResult;
  beforeAll(async () => {
    single = await validateFiles([capture], {});
  });

  it("the mixed capture breaks many rules (so the comparisons below are not vacuous)", () => {
    const rules = new Set(single.findings.map((f) => f.rule));
    for (const rule of [
      "schema/result",
      "schema/error-response",
      "schema/unknown-method",
      "json/parse-error",
      "input/malformed-record",
      "jsonrpc/invalid",
      "session/reused-request-id",
      "session/progress-not-increasing",
      "session/unmatched-response",
      "session/reinitialize",
      "session/batch-not-allowed",
      "session/unanswered-request",
      "session/missing-capability",
    ]) {
      expect(rules, rule).toContain(rule);
    }
    expect(single.summary.files[0]).toMatchObject({ format: "capture", sessions: 2, protocolVersions: [OLD, V] });
  });

  it.each([256, 700, 4096, 1 << 20])("with chunks of %i bytes", async (chunkBytes) => {
    const many = await validateFiles([capture], { jobs: 2, chunkBytes });
    expect(strip(many)).toEqual(strip(single));
  });

  it("shares a regular file between the calling thread (in order) and the workers (chunks ahead of it)", async () => {
    // From sources the pool is in-process and takes one chunk, as a worker would, per chunk the
    // calling thread validates, so both paths are exercised: direct validation and rows from chunks.
    for (const chunkBytes of [256, 700, 4096]) {
      const many = await validateFiles([capture], { jobs: 2, chunkBytes });
      expect(strip(many)).toEqual(strip(single));
      expect(threadStats.front, `front, chunks of ${chunkBytes}`).toBeGreaterThan(1);
      expect(threadStats.back, `back, chunks of ${chunkBytes}`).toBeGreaterThan(1);
      expect(Math.abs(threadStats.front - threadStats.back), `balance, chunks of ${chunkBytes}`).toBeLessThanOrEqual(1);
    }
  });

  it("with over-long lines dropped (maxLineBytes smaller than some lines, larger than the chunks)", async () => {
    const opts: ValidateOptions = { maxLineBytes: 2000 };
    const one = await validateFiles([capture], opts);
    expect(one.findings.some((f) => f.rule === "input/line-too-long")).toBe(true);
    for (const chunkBytes of [256, 1500, 8192]) {
      const many = await validateFiles([capture], { ...opts, jobs: 3, chunkBytes });
      expect(strip(many)).toEqual(strip(one));
    }
  });

  it("with --protocol-version forcing a version", async () => {
    const opts: ValidateOptions = { protocolVersion: V };
    const one = await validateFiles([capture], opts);
    expect(one.findings.some((f) => f.rule === "session/version-mismatch")).toBe(true);
    const many = await validateFiles([capture], { ...opts, jobs: 2, chunkBytes: 512 });
    expect(strip(many)).toEqual(strip(one));
  });

  it("for several inputs of every format, stdin and an unreadable path, in input order", async () => {
    const inputs = [
      capture,
      join(FIXTURES, "streamable-http.har"),
      join(dir, "missing.jsonl"),
      join(FIXTURES, "claude-desktop-mcp.log"),
      "-",
      join(FIXTURES, "client.c2s.jsonl"),
    ];
    const stdinText = mixedCapture();
    const run = (jobs: number) =>
      validateFiles(inputs, { jobs, chunkBytes: 300, direction: "s2c", stdin: Readable.from([Buffer.from(stdinText)]) });
    const one = await run(1);
    const many = await run(2);
    expect(strip(many)).toEqual(strip(one));
    expect(many.summary.files.map((f) => f.format ?? "unreadable")).toEqual(["capture", "har", "unreadable", "claude-log", "capture", "jsonl"]);
  });

  it("for a stdin that fails with a read error, before and after the format is sniffed and chunks were sent", async () => {
    // Regression: with --jobs an early error crashed (TypeError, no summary), and a later one lost
    // the lines read before it. Now both runs check the whole lines read and end unreadable.
    const data = Buffer.from(Array.from({ length: 40 }, () => mixedCapture().slice(1)).join("\n"));
    const failing = (at: number): Readable => {
      let pos = 0;
      return new Readable({
        highWaterMark: 1,
        read() {
          if (pos >= at) {
            this.destroy(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }));
            return;
          }
          const n = Math.min(4096, at - pos);
          this.push(data.subarray(pos, pos + n));
          pos += n;
        },
      });
    };
    for (const at of [0, 1000, 100_000, 300_000]) {
      const one = await validateFiles(["-"], { stdin: failing(at) });
      const many = await validateFiles(["-"], { jobs: 2, chunkBytes: 65536, stdin: failing(at) });
      expect(strip(many), `error after ${at} bytes`).toEqual(strip(one));
      const file = one.summary.files[0]!;
      expect(file.unreadable).toMatch(/ECONNRESET/);
      expect(file.bytes).toBe(at);
      if (at >= 100_000) {
        // Past the sniffed head: the lines read were checked, and counted.
        expect(one.findings.length).toBeGreaterThan(10);
        expect(file.lines).toBeGreaterThan(100);
        expect(file.messages).toBeGreaterThan(100);
      }
    }
  });

  it("for a Claude Desktop log interleaving two servers", async () => {
    const lines: string[] = [];
    for (const server of ["alpha", "beta"]) {
      lines.push(`2025-06-18T10:00:00.000Z [${server}] [info] Message from client: ${JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: V, capabilities: {}, clientInfo: { name: "c", version: "1" } } })} { metadata: undefined }`);
      lines.push(`2025-06-18T10:00:00.001Z [${server}] [info] Message from server: ${JSON.stringify({ jsonrpc: "2.0", id: 0, result: { protocolVersion: V, capabilities: { tools: {} }, serverInfo: { name: server, version: "1" } } })} { metadata: undefined }`);
      lines.push(`2025-06-18T10:00:00.002Z [${server}] [info] Message from client: {"jsonrpc":"2.0","method":"notifications/initialized"}`);
    }
    for (let i = 1; i <= 60; i++) {
      const server = i % 2 === 0 ? "alpha" : "beta";
      lines.push(`2025-06-18T10:00:01.000Z [${server}] [info] Message from client: {"jsonrpc":"2.0","id":${i},"method":"tools/list"} { metadata: undefined }`);
      lines.push(`2025-06-18T10:00:01.000Z [${server}] [debug] some unrelated log line ${i}`);
      if (i % 4 !== 0) lines.push(`2025-06-18T10:00:01.500Z [${server}] [info] Message from server: {"jsonrpc":"2.0","id":${i},"result":{"tools":${i % 9 === 0 ? "5" : "[]"}}}`);
    }
    const log = join(dir, "mcp.log");
    await writeFile(log, `${lines.join("\n")}\n`);
    const one = await validateFiles([log], {});
    expect(one.findings.map((f) => f.session)).toContain("beta");
    const many = await validateFiles([log], { jobs: 2, chunkBytes: 400 });
    expect(strip(many)).toEqual(strip(one));
  });

  it("a pasted Claude log with multi-line bodies, quote markers and a body-less line: the same findings with --jobs", async () => {
    const lines: string[] = [];
    const pretty = (m: object) => JSON.stringify(m, null, 2).split("\n");
    lines.push(...pretty({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } } }).map((l, i) => (i === 0 ? `> [info] [w] Message from client: ${l}` : `> ${l}`)));
    lines.push(`> [info] [w] Message from server: {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`);
    lines.push(`> [info] [w] Message from client: {"jsonrpc":"2.0","method":"notifications/initialized"}`);
    for (let i = 1; i <= 30; i++) {
      lines.push(...pretty({ jsonrpc: "2.0", id: i, method: "tools/list", params: i % 7 === 0 ? null : {} }).map((l, k) => (k === 0 ? `  [info] [w] Message from client: ${l}` : `  ${l}`)));
      if (i % 5 !== 0) lines.push(`[info] [w] Message from server: {"jsonrpc":"2.0","id":${i},"result":{"tools":${i % 9 === 0 ? "5" : "[]"}}}`);
      if (i === 11) lines.push(`2025-06-18T10:00:00.000Z [w] [info] Message from client method="tools/list" id=99`);
    }
    lines.push(`[info] [w] Message from client: {"jsonrpc":"2.0",`); // the input ends inside a body
    const log = join(dir, "pasted.log");
    await writeFile(log, `${lines.join("\n")}\n`);
    const one = await validateFiles([log], {});
    expect(one.findings.map((f) => f.rule)).toEqual(expect.arrayContaining(["json/parse-error", "schema/result", "session/unanswered-request"]));
    expect(one.findings.map((f) => f.rule)).not.toContain("input/unsupported-format"); // (it has messages with bodies)
    for (const chunkBytes of [256, 700, 4096]) expect(strip(await validateFiles([log], { jobs: 2, chunkBytes }))).toEqual(strip(one));
  });
});

describe("chunk processing (what a worker hands the main thread)", () => {
  it("summarises ordinary messages as compact rows with verdicts, and leaves the rest to the main thread", async () => {
    const setup = await prepareValidators({});
    const lines = [
      rec("c2s", { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: V, capabilities: {}, clientInfo: { name: "c", version: "1" } } }),
      rec("c2s", { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", _meta: { progressToken: "t1" } } }),
      rec("s2c", { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "t1", progress: 0.5 } }),
      rec("s2c", { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text" }] } }),
      rec("s2c", { jsonrpc: "2.0", id: "far", result: { content: [{ type: "text", text: "z".repeat(20_000) }] } }),
      rec("s2c", { jsonrpc: "2.0", id: "near", result: { content: [] } }),
      "not json",
      "x".repeat(30_001),
    ];
    const bytes = Buffer.from(lines.join("\n"));
    const buffer = new ArrayBuffer(bytes.length);
    bytes.copy(Buffer.from(buffer));
    const task: ChunkTask = { id: 1, buffer, length: bytes.length, first: true, file: { format: "capture", direction: "c2s", maxLineBytes: 30_000 }, hints: [["", V]] };
    const result = new ChunkProcessor(setup).process(task);
    const view = new ChunkView(result, () => {
      throw new Error("no re-read expected");
    });
    expect(result.lines).toBe(8);
    expect(Array.from({ length: result.count }, (_, r) => [view.line(r), view.kind(r)])).toEqual([
      [1, KIND_LOCAL],
      [2, KIND_COMPACT],
      [3, KIND_COMPACT],
      [4, KIND_COMPACT],
      [5, KIND_COMPACT],
      [6, KIND_COMPACT],
      [7, KIND_LOCAL],
      [8, KIND_TOOLONG],
    ]);
    // The request's checks ran in the worker; the answer to id 1 was checked as a CallToolResult.
    expect(view.verdict(1, "JSONRPCRequest", "message", V)).toBeNull();
    expect(view.verdict(1, "CallToolRequest", "message", V)).toBeNull();
    const issues = view.verdict(3, "CallToolResult", "result", V);
    expect(issues === MISS ? "miss" : issues?.[0]?.pointer).toBe("/content/0");
    // A large result whose request is elsewhere: the result definitions it passes are recorded;
    // failed ones, and small results, are left to the main thread.
    expect(view.verdict(4, "CallToolResult", "result", V)).toBeNull();
    expect(view.verdict(4, "ListToolsResult", "result", V)).toBe(MISS);
    expect(view.verdict(5, "EmptyResult", "result", V)).toBe(MISS);
    expect(view.verdict(5, "JSONRPCResponse", "message", V) === MISS ? "miss" : "checked").toBe("checked");
    // Another version, or a check the worker did not run: a miss (the main thread re-validates).
    expect(view.verdict(1, "JSONRPCRequest", "message", OLD)).toBe(MISS);
    expect(view.verdict(1, "ListToolsRequest", "message", V)).toBe(MISS);
    expect(view.tooLongBytes(7)).toBe(30_001);
  });
});

describe("request methods a worker remembers within a chunk", () => {
  it("a response gets its result verdict in the worker; after a later request took its id's ring slot, the main thread checks it, with the same findings", async () => {
    const setup = await prepareValidators({});
    const head = [
      rec("c2s", { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: V, capabilities: {}, clientInfo: { name: "c", version: "1" } } }),
      rec("s2c", { jsonrpc: "2.0", id: 0, result: { protocolVersion: V, capabilities: { tools: {} }, serverInfo: { name: "s", version: "1" } } }),
      rec("c2s", { jsonrpc: "2.0", method: "notifications/initialized" }),
    ];
    const body = [
      rec("c2s", { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "a" } }),
      rec("c2s", { jsonrpc: "2.0", id: 7, method: "tools/list" }),
      rec("s2c", { jsonrpc: "2.0", id: 7, result: { tools: "not a list" } }), // answered in the chunk
      rec("c2s", { jsonrpc: "2.0", id: 5 + 256, method: "tools/list" }), // same slot as id 5
      rec("s2c", { jsonrpc: "2.0", id: 5, result: { content: "not a list" } }), // its request forgotten
      rec("s2c", { jsonrpc: "2.0", id: 5 + 256, result: { tools: [] } }),
    ];
    const bytes = Buffer.from(body.join("\n"));
    const buffer = new ArrayBuffer(bytes.length);
    bytes.copy(Buffer.from(buffer));
    const result = new ChunkProcessor(setup).process({ id: 1, buffer, length: bytes.length, first: false, file: { format: "capture", direction: "c2s", maxLineBytes: 30_000 }, hints: [["", V]] });
    const view = new ChunkView(result, () => undefined);
    const failed = view.verdict(2, "ListToolsResult", "result", V);
    expect(failed === MISS || failed === null ? failed : failed[0]?.pointer).toBe("/tools");
    expect(view.verdict(4, "CallToolResult", "result", V)).toBe(MISS);
    expect(view.verdict(5, "ListToolsResult", "result", V)).toBeNull();
    // Through validateFiles: the same findings with and without --jobs (both results fail).
    const path = join(dir, "ring.capture.jsonl");
    await writeFile(path, [...head, ...body].join("\n"));
    const single = await validateFiles([path], {});
    expect(single.findings.filter((f) => f.rule === "schema/result").map((f) => f.line)).toEqual([6, 8]);
    for (const chunkBytes of [200, 4096]) expect(strip(await validateFiles([path], { jobs: 2, chunkBytes }))).toEqual(strip(single));
  });
});

describe("row stores (shared between a worker and the main thread)", () => {
  it("a released store is reused by the next chunk, one still in use is not, and reuse does not change the rows", async () => {
    const setup = await prepareValidators({});
    const processor = new ChunkProcessor(setup);
    const chunk = (first: number): ChunkTask => {
      const text = Array.from({ length: 50 }, (_, i) => rec("c2s", { jsonrpc: "2.0", id: first + i, method: "ping" })).join("\n");
      const bytes = Buffer.from(text);
      const buffer = new ArrayBuffer(bytes.length);
      bytes.copy(Buffer.from(buffer));
      return { id: first, buffer, length: bytes.length, first: false, file: { format: "capture", direction: "c2s", maxLineBytes: 30_000 }, hints: [["", V]] };
    };
    const ids = (r: ReturnType<ChunkProcessor["process"]>): number[] => {
      const view = new ChunkView(r, () => undefined);
      const facts = newFacts();
      return Array.from({ length: r.count }, (_, row) => {
        view.fill(row, facts);
        return facts.id as number;
      });
    };
    const a = processor.process(chunk(100));
    expect(a.rows.buffer).toBeInstanceOf(SharedArrayBuffer);
    const b = processor.process(chunk(200)); // a not released: another store
    expect(b.rows.buffer).not.toBe(a.rows.buffer);
    expect(ids(a)).toEqual(Array.from({ length: 50 }, (_, i) => 100 + i));
    releaseRows(a);
    const c = processor.process(chunk(300));
    expect(c.rows.buffer).toBe(a.rows.buffer);
    expect(ids(c)).toEqual(Array.from({ length: 50 }, (_, i) => 300 + i));
    expect(ids(b)).toEqual(Array.from({ length: 50 }, (_, i) => 200 + i)); // untouched by c
  });
});

describe("file byte ranges (what a worker reads)", () => {
  it("re-reads a line of a range task from the file, and says so without a chunk-relative line number when the file shrank", async () => {
    const setup = await prepareValidators({});
    const path = join(dir, "shrinks.capture.jsonl");
    const head = `${rec("c2s", { jsonrpc: "2.0", id: 9, method: "ping" })}\n`;
    const init = rec("c2s", { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: V, capabilities: {}, clientInfo: { name: "c", version: "1" } } });
    await writeFile(path, `${head}${head}${init}\n`);
    const fd = openSync(path, "r");
    try {
      // The chunk starting in the second line's range: lines 2 and 3 of the file.
      const size = statSync(path).size;
      const task: ChunkTask = { id: 1, range: { fd, start: head.length, end: size, size }, first: false, file: { format: "capture", direction: "c2s", maxLineBytes: 1 << 20 }, hints: [["", V]] };
      const result = new ChunkProcessor(setup).process(task);
      const view = new ChunkView(result, () => undefined, fd);
      expect(view.kind(1)).toBe(KIND_LOCAL); // initialize: the main thread reads it again
      expect(view.text(1)).toBe(init);
      await writeFile(path, head); // truncated under the reader
      expect(() => view.text(1)).toThrow(/^file shrank while being read$/);
    } finally {
      closeSync(fd);
    }
  });

  it("gives every line to exactly one range, whatever the range size; over-long lines are counted, not kept", async () => {
    const text = `${"\ufeff"}first\n\nsecond line\r\n${"c".repeat(50)}\nd\n${"e".repeat(30)}\r\nlast, no newline`;
    const path = join(dir, "ranges.txt");
    await writeFile(path, text);
    const fd = openSync(path, "r");
    try {
      const size = Buffer.byteLength(text);
      for (const step of [1, 2, 3, 5, 8, 13, 64, size]) {
        const kept: Buffer[] = [];
        const tooLong: number[] = [];
        for (let start = 0; start < size; start += step) {
          const r = readRange({ fd, start, end: Math.min(size, start + step), size }, 40);
          kept.push(Buffer.from(r.buffer.subarray(0, r.length)));
          if (r.tooLong >= 0) tooLong.push(r.tooLong);
        }
        const all = Buffer.concat(kept).toString("utf8");
        // A line too long to finish within its range is dropped there (the 50 c's); one that
        // fits in the bytes read is kept (the worker's line loop drops it, as the e's below).
        expect(all.replace("c".repeat(50) + "\n", "")).toBe(text.replace("c".repeat(50) + "\n", ""));
        if (all.includes("c".repeat(50))) expect(tooLong).toEqual([]);
        else expect(tooLong).toEqual([50]);
      }
    } finally {
      closeSync(fd);
    }
  });
});

describe("request id bookkeeping", () => {
  it("hands every chunk of a shared file to exactly one thread: workers ahead of the calling thread, then from the back", () => {
    const table = (n: number) => ({ claims: new Int32Array(new SharedArrayBuffer(4 * n)), position: new Int32Array(new SharedArrayBuffer(4)) });
    // The first free chunk at least `lookahead` ahead, at or after the worker's cursor...
    const t = table(40);
    t.position[0] = 3;
    expect(claimForWorker(t.claims, t.position, 16, 0)).toBe(19);
    expect(claimForWorker(t.claims, t.position, 16, 20)).toBe(20);
    expect(claimFront(t.claims, 19)).toBe(false);
    // ...else the last free one after the calling thread...
    t.position[0] = 30;
    expect(claimForWorker(t.claims, t.position, 16, 21)).toBe(39);
    expect(claimForWorker(t.claims, t.position, 16, 40)).toBe(38);
    // ...and none at or before its position.
    for (let j = 31; j < 38; j++) expect(claimFront(t.claims, j)).toBe(true);
    expect(claimForWorker(t.claims, t.position, 16, 40)).toBe(-1);
    expect(Atomics.load(t.claims, 30)).toBe(CLAIM_FREE);

    // Random interleavings of the calling thread and 1-3 workers: each chunk is taken once, by
    // the calling thread exactly when its claim wins, and a worker never takes a chunk the
    // calling thread has passed.
    const random = mulberry32(7);
    for (let trial = 0; trial < 300; trial++) {
      const n = 1 + Math.floor(random() * 80);
      const workers = 1 + Math.floor(random() * 3);
      const lookahead = 1 + Math.floor(random() * 20);
      const { claims, position } = table(n);
      const from = new Array<number>(workers).fill(0);
      const owner = new Array<string>(n).fill("");
      let k = 0;
      const done = new Array<boolean>(workers).fill(false);
      while (k < n) {
        const w = Math.floor(random() * (workers + 1)) - 1;
        if (w < 0 || done[w]) {
          Atomics.store(position, 0, k);
          if (claimFront(claims, k)) owner[k] = owner[k] === "" ? "front" : "twice";
          else expect(owner[k]).toMatch(/^w/);
          k++;
        } else {
          const j = claimForWorker(claims, position, lookahead, from[w]!);
          if (j < 0) done[w] = true;
          else {
            expect(j).toBeGreaterThan(Atomics.load(position, 0));
            owner[j] = owner[j] === "" ? `w${w}` : "twice";
            from[w] = j + 1;
          }
        }
      }
      expect(owner.filter((o) => o === "" || o === "twice")).toEqual([]);
      for (let j = 0; j < n; j++) expect(Atomics.load(claims, j)).toBe(owner[j] === "front" ? CLAIM_FRONT : CLAIM_BACK);
    }
  });

  it("remembers sequential, large, negative, fractional and string ids with their first line", () => {
    const ids = new IdRegistry();
    const all: Array<string | number> = [0, 1, 2, 5000, 3_000_000_000, -4, 2.5, "a", "2"];
    all.forEach((id, i) => {
      expect(ids.firstLine(id)).toBeUndefined();
      ids.remember(id, i + 10);
    });
    for (let n = 3; n < 200_000; n++) if (ids.firstLine(n) === undefined) ids.remember(n, 1000 + n); // grows the dense table
    all.forEach((id, i) => expect(ids.firstLine(id)).toBe(i + 10));
    expect(ids.firstLine(199_999)).toBe(200_999);
    expect(ids.firstLine(200_000)).toBeUndefined();
    expect(ids.firstLine("0")).toBeUndefined();
  });
});

describe("in-flight and progress-token tables", () => {
  /** Seeded random keys: sequential and colliding ring slots (mod 1024), -0, fractions, huge numbers, strings. */
  const keyStream = (seed: number): (() => string | number) => {
    let a = seed >>> 0;
    const rnd = (): number => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = Math.imul(a ^ (a >>> 15), a | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    let next = 0;
    return () => {
      const r = rnd();
      if (r < 0.4) return next++;
      if (r < 0.55) return Math.floor(rnd() * 40);
      if (r < 0.65) return Math.floor(rnd() * 6) * 1024 + Math.floor(rnd() * 3); // same ring slot
      if (r < 0.7) return [-0, -3, 0.5, 2 ** 31, 2 ** 31 - 1, 2 ** 40][Math.floor(rnd() * 6)]!;
      return `k${Math.floor(rnd() * 30)}`;
    };
  };

  it("InflightTable answers as a Map<id, entry> does, and iterates in Map order", () => {
    for (const seed of [1, 2, 3]) {
      const key = keyStream(seed);
      const table = new InflightTable<{ id: string | number; seq: number; n: number }>();
      const map = new Map<string | number, { id: string | number; seq: number; n: number }>();
      for (let n = 0; n < 20_000; n++) {
        const k = key();
        const op = n % 5;
        if (op < 2) {
          const e = { id: k, seq: 0, n };
          table.set(e);
          map.set(k, e);
        } else if (op < 4) {
          expect(table.get(k)).toBe(map.get(k));
        } else {
          table.delete(k);
          map.delete(k);
        }
        expect(table.size).toBe(map.size);
        if (n % 997 === 0) expect(table.values().map((e) => e.n)).toEqual([...map.values()].map((e) => e.n));
      }
      expect(table.values().map((e) => e.n)).toEqual([...map.values()].map((e) => e.n));
    }
  });

  it("TokenTable answers as a Map does, in and out of its array mode", () => {
    for (const seed of [4, 5]) {
      const key = keyStream(seed);
      const table = new TokenTable<number>();
      const map = new Map<string | number, number>();
      for (let n = 0; n < 20_000; n++) {
        const k = key();
        // Phases of many and of few live keys, so that the table moves between arrays and Map.
        const phase = Math.floor(n / 2000) % 2;
        const op = n % (phase === 0 ? 3 : 2);
        if (op === 0) {
          table.set(k, n);
          map.set(k, n);
        } else if (op === 1 && phase === 1) {
          for (const old of [...map.keys()].slice(0, 3)) {
            table.delete(old);
            map.delete(old);
          }
        } else {
          expect(table.get(k)).toBe(map.get(k));
          table.delete(k);
          map.delete(k);
        }
        for (const probe of [k, 0, -0, "k1", 1024]) expect(table.get(probe)).toBe(map.get(probe));
      }
    }
  });
});

describe("LineSplitter over-long lines", () => {
  it("drops a line longer than the limit whether or not it crosses a chunk boundary", () => {
    const text = `ok\n${"y".repeat(40)}\r\nend\n`;
    for (const size of [1000, 7]) {
      const bytes = Buffer.from(text);
      const seen: Array<[number, string | number]> = [];
      const s = new LineSplitter((t, n) => seen.push([n, t]), 30, (n, b) => seen.push([n, b]));
      for (let i = 0; i < bytes.length; i += size) s.push(bytes.subarray(i, i + size));
      s.end();
      expect(seen).toEqual([
        [1, "ok"],
        [2, 41],
        [3, "end"],
      ]);
    }
  });
});

/**
 * Runs `script` (an ES module, written to `name` in the test directory) in a child process, where
 * the compiled modules load without the test runner's transforms; env ROOT_URL (the checkout) and
 * INPUT. @returns its stdout. @throws when it fails or runs over 60 s.
 */
async function runScript(name: string, script: string, input: string): Promise<string> {
  const scriptPath = join(dir, name);
  await writeFile(scriptPath, script);
  return new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      [scriptPath],
      { env: { ...process.env, ROOT_URL: pathToFileURL(`${ROOT}/`).href, INPUT: input }, maxBuffer: 64 << 20, timeout: 60_000 },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
    );
  });
}

describe("compiled code with worker threads", () => {
  it("a pool of worker threads alone (no help from the calling thread) gives the single-threaded findings", async () => {
    requireBuiltCli();
    const script = `
      const dist = new URL("dist/validate/", process.env.ROOT_URL);
      const pipeline = await import(new URL("pipeline.js", dist));
      const { prepareValidators } = await import(new URL("setup.js", dist));
      const setup = await prepareValidators({});
      const pool = new pipeline.ThreadPool(pipeline.workerScript(), 2, {});
      const findings = [];
      const files = await pipeline.runPipeline([process.env.INPUT], { chunkBytes: 4096 }, setup, pool, 3, (f) => findings.push(f), () => {});
      process.stdout.write(JSON.stringify({ findings, files }));`;
    const out = await runScript("thread-pool.mjs", script, capture);
    const threaded = JSON.parse(out) as { findings: Finding[]; files: unknown };
    const one = await validateFiles([capture], {});
    expect(threaded.findings.length).toBeGreaterThan(0);
    expect(threaded.findings).toEqual(one.findings);
    expect(threaded.files).toEqual(one.summary.files);
  });

  it("shares files with warm workers: reused by the next run, and never keeping the process alive", async () => {
    requireBuiltCli();
    // About 5 MB in 16 KiB chunks: a warm worker takes part in every run.
    const big = join(dir, "warm.capture.jsonl");
    const body = mixedCapture().slice(1);
    await writeFile(big, `${Array.from({ length: 30 }, () => body).join("\n")}\n`);
    const script = `
      const lib = await import(new URL("dist/validate/index.js", process.env.ROOT_URL));
      const { threadStats } = await import(new URL("dist/validate/pipeline.js", process.env.ROOT_URL));
      const strip = (r) => JSON.stringify({ findings: r.findings, files: r.summary.files.map((f) => ({ ...f })) });
      const one = strip(await lib.validateFiles([process.env.INPUT], {}));
      const runs = [];
      for (let i = 0; i < 3; i++) {
        const many = strip(await lib.validateFiles([process.env.INPUT], { jobs: 2, chunkBytes: 16384 }));
        runs.push({ same: many === one, front: threadStats.front, back: threadStats.back, started: threadStats.workersStarted });
      }
      process.stdout.write(JSON.stringify({ runs, findings: JSON.parse(one).findings.length, end: Date.now() }));`;
    const out = await runScript("warm-pool.mjs", script, big);
    const exited = Date.now();
    const r = JSON.parse(out) as { runs: Array<{ same: boolean; front: number; back: number; started: number }>; findings: number; end: number };
    expect(r.findings).toBeGreaterThan(100);
    for (const run of r.runs) {
      expect(run.same).toBe(true);
      expect(run.front).toBeGreaterThan(0);
      expect(run.front + run.back).toBe(Math.ceil(statSync(big).size / 16384));
    }
    // One worker for all three runs (started by the first, idle and reused by the others)...
    expect(r.runs.map((x) => x.started)).toEqual([1, 1, 1]);
    // ...which, warm, takes chunks from the back...
    expect(r.runs[1]!.back + r.runs[2]!.back).toBeGreaterThan(0);
    // ...and does not hold the process until its idle timeout (IDLE_WORKERS_MS, 5 s).
    expect(exited - r.end).toBeLessThan(IDLE_WORKERS_MS - 1000);
  });

  it("validate into a pipe its reader closes early (| head -1) still exits 1 when errors were found", async () => {
    requireBuiltCli();
    // Regression: on EPIPE the JSON report exited 0 whatever the findings.
    const big = join(dir, "epipe.capture.jsonl");
    await writeFile(big, `${Array.from({ length: 30 }, () => mixedCapture().slice(1)).join("\n")}\n`);
    const child = spawn(process.execPath, [CLI, "validate", "--format", "json", big], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdout.once("data", () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
    expect(stderr).toBe("");
    expect(code).toBe(1);
  });

  it("validate --jobs takes decimal integers from 1 to 256 only (usage error, exit 2, otherwise)", async () => {
    requireBuiltCli();
    for (const bad of ["0", "257", "1e1", " 2", "0x2", "2.0", "-1", ""]) {
      const r = await runCli(["validate", "--jobs", bad, capture]);
      expect(r.code, `--jobs ${JSON.stringify(bad)}`).toBe(2);
      expect(r.stderr).toMatch(/must be an integer from 1 to 256/);
    }
    expect((await runCli(["validate", "--format", "json", "--jobs", "08", capture])).code).toBe(1);
  });

  it("validate --jobs 2 prints the same report and exit code as without --jobs", async () => {
    requireBuiltCli();
    // About 1.2 MB: the workers get a 1 MiB chunk and the rest.
    const big = join(dir, "big.capture.jsonl");
    const body = mixedCapture().slice(1);
    const copies: string[] = [];
    for (let k = 0; k < 7; k++) copies.push(body);
    await writeFile(big, `${copies.join("\n")}\n`);
    const withoutDuration = (out: string): string => out.replace(/"durationMs":[0-9.e+-]+/, '"durationMs":0');
    const one = await runCli(["validate", "--format", "json", big]);
    const many = await runCli(["validate", "--format", "json", "--jobs", "2", big]);
    expect(one.code).toBe(1);
    expect(many.stderr).toBe("");
    expect(many.code).toBe(one.code);
    expect(withoutDuration(many.stdout)).toBe(withoutDuration(one.stdout));
    const findings = one.stdout.split("\n").filter((l) => l.includes('"type":"finding"')).map((l) => JSON.parse(l) as Finding);
    expect(findings.length).toBeGreaterThan(100);
  });
});
