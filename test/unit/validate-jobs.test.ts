/**
 * `validate --jobs`: several files validated at once, one whole file per thread, on the one line
 * path; the findings and summaries must be exactly those of a single-threaded run, in input
 * order, whatever the read sizes (`chunkBytes`) and however the files are spread over threads.
 *
 * From TypeScript sources the files run one after the other in-process; the last group runs the
 * compiled code (dist/, built by the vitest global setup) so that real worker threads are used.
 * Validators are the built-in generated ones (no ../shared needed).
 */
import { execFile, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IdRegistry, InflightTable, TokenTable } from "../../src/validate/ids.js";
import { IDLE_WORKERS_MS, textLineSplitter, MIN_BYTES_FOR_NEW_THREADS, validateFiles, type Finding, type ValidateOptions, type ValidateResult } from "../../src/validate/index.js";
import { CLI, cliEnvironment, ROOT, requireBuiltCli, runCli } from "../helpers/cli.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/validate/", import.meta.url));
const OLD = "2025-03-26";
const V = "2025-06-18";

type Dir = "c2s" | "s2c";
const rec = (dir: Dir, msg: unknown): string => JSON.stringify({ ts: "2025-06-18T10:00:00.000Z", dir, msg });

/**
 * A capture meant to hit many paths of the line path and the session rules: a version switch (2025-03-26), a
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
    if (i % 5 === 0)
      late.push(answer); // answered a few dozen lines later (often another chunk)
    else if (i % 29 !== 0) answer();
    if (i % 29 === 0) c({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: "stop" } });
    if (late.length > 6) late.shift()!();
    if (i % 31 === 0) {
      out.push("");
      out.push(`${rec("c2s", { jsonrpc: "2.0", id: 9000 + i, method: "ping" })}\r`);
      s({ jsonrpc: "2.0", id: 9000 + i, result: {} });
      out.push(JSON.stringify({ ts: "x", dir: "c2s", raw: '{"jsonrpc":"2.0", oops' }));
      out.push("this is not a capture record");
      c([
        { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "nope", progress: 1 } },
        { jsonrpc: "2.0", id: 8000 + i, method: "ping" },
      ]);
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

/** Inputs of every format, an unreadable path and stdin. */
const everyFormat = (): string[] => [
  capture,
  join(FIXTURES, "streamable-http.har"),
  join(dir, "missing.jsonl"),
  join(FIXTURES, "claude-desktop-mcp.log"),
  "-",
  join(FIXTURES, "client.c2s.jsonl"),
];

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

  it.each([256, 700, 4096, 1 << 20])("with reads of %i bytes", async (chunkBytes) => {
    const many = await validateFiles([capture], { jobs: 2, chunkBytes });
    expect(strip(many)).toEqual(strip(single));
  });

  it("with over-long lines dropped (maxLineBytes smaller than some lines, larger than the reads)", async () => {
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
    const inputs = everyFormat();
    const stdinText = mixedCapture();
    const run = (jobs: number) => validateFiles(inputs, { jobs, chunkBytes: 300, direction: "s2c", stdin: Readable.from([Buffer.from(stdinText)]) });
    const one = await run(1);
    const many = await run(2);
    expect(strip(many)).toEqual(strip(one));
    expect(many.summary.files.map((f) => f.format ?? "unreadable")).toEqual(["capture", "har", "unreadable", "claude-log", "capture", "jsonl"]);
  });

  it("for a stdin that fails with a read error, before and after the format is sniffed", async () => {
    // Regression (kept from the chunked pipeline): an early error crashed (TypeError, no summary),
    // and a later one lost the lines read before it. Both runs check the whole lines read and end unreadable.
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
      lines.push(
        `2025-06-18T10:00:00.000Z [${server}] [info] Message from client: ${JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: V, capabilities: {}, clientInfo: { name: "c", version: "1" } } })} { metadata: undefined }`,
      );
      lines.push(
        `2025-06-18T10:00:00.001Z [${server}] [info] Message from server: ${JSON.stringify({ jsonrpc: "2.0", id: 0, result: { protocolVersion: V, capabilities: { tools: {} }, serverInfo: { name: server, version: "1" } } })} { metadata: undefined }`,
      );
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
    lines.push(
      ...pretty({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } } }).map(
        (l, i) => (i === 0 ? `> [info] [w] Message from client: ${l}` : `> ${l}`),
      ),
    );
    lines.push(
      `> [info] [w] Message from server: {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
    );
    lines.push(`> [info] [w] Message from client: {"jsonrpc":"2.0","method":"notifications/initialized"}`);
    for (let i = 1; i <= 30; i++) {
      lines.push(
        ...pretty({ jsonrpc: "2.0", id: i, method: "tools/list", params: i % 7 === 0 ? null : {} }).map((l, k) => (k === 0 ? `  [info] [w] Message from client: ${l}` : `  ${l}`)),
      );
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

describe("request id bookkeeping", () => {
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
      const s = textLineSplitter(
        (t, n) => seen.push([n, t]),
        30,
        (n, b) => seen.push([n, b]),
      );
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
  it("worker threads validate files of every format, stdin and an unreadable path: the single-threaded findings, in input order", async () => {
    requireBuiltCli();
    // Regular files of every format go to the workers (stdin stays on the calling thread); each
    // input's own options (FILE:OPT) go with it.
    const inputs = [...everyFormat(), capture, join(FIXTURES, "client.c2s.jsonl")];
    const script = `
      const { Readable } = await import("node:stream");
      const lib = await import(new URL("dist/validate/index.js", process.env.ROOT_URL));
      const { threadStats } = await import(new URL("dist/validate/jobs.js", process.env.ROOT_URL));
      const inputs = JSON.parse(process.env.INPUT);
      const stdin = () => Readable.from([Buffer.from(${JSON.stringify(mixedCapture())})]);
      const perFile = inputs.map((p, i) => (i === 7 ? { direction: "s2c" } : undefined));
      const order = [];
      const run = (jobs) => lib.validateFiles(inputs, { jobs, minThreadBytes: 0, perFile, stdin: stdin(), onFileDone: (f) => order.push(jobs + " " + f.file) });
      const one = await run(1);
      const many = await run(3);
      process.stdout.write(JSON.stringify({ one: { findings: one.findings, files: one.summary.files }, many: { findings: many.findings, files: many.summary.files }, onWorkers: threadStats.filesOnWorkers, order }));`;
    const r = JSON.parse(await runScript("thread-pool.mjs", script, JSON.stringify(inputs))) as {
      one: { findings: Finding[]; files: unknown[] };
      many: { findings: Finding[]; files: unknown[] };
      onWorkers: number;
      order: string[];
    };
    expect(r.one.findings.length).toBeGreaterThan(100);
    expect(r.many).toEqual(r.one);
    expect(r.onWorkers).toBeGreaterThan(0);
    expect(r.order).toEqual([...inputs.map((p) => `1 ${p}`), ...inputs.map((p) => `3 ${p}`)]);
  });

  it("workers take the run's --input-format and --direction as well as each file's own", async () => {
    requireBuiltCli();
    // Regression: the workers got only the per-file options, so a run-wide --direction s2c (or a
    // forced format) was lost on them and their files were read with the detected ones.
    const jsonl = join(dir, "server-side.jsonl");
    const messages = mixedCapture()
      .slice(1)
      .split("\n")
      .flatMap((l) => {
        try {
          const msg = (JSON.parse(l) as { msg?: unknown }).msg;
          return msg === undefined ? [] : [JSON.stringify(msg)];
        } catch {
          return [];
        }
      });
    await writeFile(jsonl, `${messages.join("\n")}\n`);
    const inputs = [jsonl, jsonl, capture];
    const script = `
      const lib = await import(new URL("dist/validate/index.js", process.env.ROOT_URL));
      const inputs = JSON.parse(process.env.INPUT);
      const strip = (r) => ({ findings: r.findings, files: r.summary.files });
      const out = {};
      for (const [name, o] of [["direction", { direction: "s2c" }], ["format", { inputFormat: "jsonl", perFile: [undefined, { direction: "c2s" }, { inputFormat: "capture" }] }]]) {
        out[name] = { one: strip(await lib.validateFiles(inputs, o)), many: strip(await lib.validateFiles(inputs, { ...o, jobs: 3, minThreadBytes: 0 })) };
      }
      process.stdout.write(JSON.stringify(out));`;
    const r = JSON.parse(await runScript("run-options.mjs", script, JSON.stringify(inputs))) as Record<string, { one: { findings: Finding[] }; many: unknown }>;
    for (const [name, { one, many }] of Object.entries(r)) {
      expect(one.findings.length, name).toBeGreaterThan(10);
      expect(many, name).toEqual(one);
    }
    // (s2c JSONL reads its responses as such: no direction guess, unlike the detected c2s reading)
    expect(r.direction!.one.findings.some((f) => f.rule === "input/direction-guessed")).toBe(false);
  });

  it("a later file finished before an earlier one waits for its turn: findings stream in input order", async () => {
    requireBuiltCli();
    // A big first file on the calling thread and small ones on a worker: they finish first, and
    // their findings must still come after all of the first file's.
    const big = join(dir, "first-big.capture.jsonl");
    await writeFile(big, `${Array.from({ length: 20 }, () => mixedCapture().slice(1)).join("\n")}\n`);
    const inputs = [big, capture, join(FIXTURES, "client.c2s.jsonl"), capture];
    const script = `
      const lib = await import(new URL("dist/validate/index.js", process.env.ROOT_URL));
      const inputs = JSON.parse(process.env.INPUT);
      const seen = [];
      const run = async (jobs) => {
        const events = [];
        await lib.validateFiles(inputs, { jobs, minThreadBytes: 0, onFinding: (f) => events.push(f), onFileDone: (f) => events.push({ done: f.file }) });
        return events;
      };
      process.stdout.write(JSON.stringify({ one: await run(1), many: await run(2) }));`;
    const r = JSON.parse(await runScript("in-order.mjs", script, JSON.stringify(inputs))) as { one: unknown[]; many: unknown[] };
    expect(r.one.length).toBeGreaterThan(1000);
    expect(r.many).toEqual(r.one);
  });

  it("keeps warm workers: reused by the next run, and never keeping the process alive", async () => {
    requireBuiltCli();
    const script = `
      const lib = await import(new URL("dist/validate/index.js", process.env.ROOT_URL));
      const { threadStats } = await import(new URL("dist/validate/jobs.js", process.env.ROOT_URL));
      const inputs = [process.env.INPUT, process.env.INPUT, process.env.INPUT];
      const strip = (r) => JSON.stringify({ findings: r.findings, files: r.summary.files });
      const one = strip(await lib.validateFiles(inputs, {}));
      const runs = [];
      for (let i = 0; i < 3; i++) {
        // (the first run starts its worker for small inputs only because it is told to)
        const many = strip(await lib.validateFiles(inputs, { jobs: 2, ...(i === 0 ? { minThreadBytes: 0 } : {}) }));
        runs.push({ same: many === one, started: threadStats.workersStarted, onWorkers: threadStats.filesOnWorkers });
      }
      process.stdout.write(JSON.stringify({ runs, findings: JSON.parse(one).findings.length, end: Date.now() }));`;
    const out = await runScript("warm-pool.mjs", script, capture);
    const exited = Date.now();
    const r = JSON.parse(out) as { runs: Array<{ same: boolean; started: number; onWorkers: number }>; findings: number; end: number };
    expect(r.findings).toBeGreaterThan(100);
    for (const run of r.runs) expect(run.same).toBe(true);
    // One worker for all three runs (started by the first, idle and reused by the others, whose
    // small inputs would not start one)...
    expect(r.runs.map((x) => x.started)).toEqual([1, 1, 1]);
    expect(r.runs[1]!.onWorkers + r.runs[2]!.onWorkers).toBeGreaterThan(0);
    // ...and does not hold the process until its idle timeout (IDLE_WORKERS_MS, 5 s).
    expect(exited - r.end).toBeLessThan(IDLE_WORKERS_MS - 1000);
  });

  it("starts the workers while this thread prepares its validators, and stops them when the options are rejected", async () => {
    requireBuiltCli();
    // The rejected run must not leave its (referenced) worker running: the process would then
    // never exit, and runScript fail on its timeout.
    const script = `
      const lib = await import(new URL("dist/validate/index.js", process.env.ROOT_URL));
      const { threadStats } = await import(new URL("dist/validate/jobs.js", process.env.ROOT_URL));
      let error;
      try {
        await lib.validateFiles([process.env.INPUT, process.env.INPUT], { jobs: 2, minThreadBytes: 0, protocolVersion: "1999-01-01" });
      } catch (err) {
        error = err.message;
      }
      process.stdout.write(JSON.stringify({ error, started: threadStats.workersStarted }));`;
    const r = JSON.parse(await runScript("rejected-options.mjs", script, capture)) as { error: string; started: number };
    expect(r.error).toMatch(/unsupported protocol version 1999-01-01/);
    expect(r.started).toBe(1);
  });

  it("validate into a pipe its reader closes early (| head -1) still exits 1 when errors were found", async () => {
    requireBuiltCli();
    // Regression: on EPIPE the JSON report exited 0 whatever the findings.
    const big = join(dir, "epipe.capture.jsonl");
    await writeFile(big, `${Array.from({ length: 30 }, () => mixedCapture().slice(1)).join("\n")}\n`);
    const child = spawn(process.execPath, [CLI, "validate", "--format", "json", big], { stdio: ["ignore", "pipe", "pipe"], env: cliEnvironment() });
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
    // Two files and, after the first, more than MIN_BYTES_FOR_NEW_THREADS: a worker takes part.
    const big = join(dir, "big.capture.jsonl");
    const body = mixedCapture().slice(1);
    const copies: string[] = [];
    while (copies.length * body.length < MIN_BYTES_FOR_NEW_THREADS + 65536) copies.push(body);
    await writeFile(big, `${copies.join("\n")}\n`);
    const withoutDuration = (out: string): string => out.replace(/"durationMs":[0-9.e+-]+/, '"durationMs":0');
    const args = ["validate", "--format", "json", capture, big];
    const one = await runCli(args);
    const many = await runCli([...args.slice(0, 3), "--jobs", "2", ...args.slice(3)]);
    expect(one.code).toBe(1);
    expect(many.stderr).toBe("");
    expect(many.code).toBe(one.code);
    expect(withoutDuration(many.stdout)).toBe(withoutDuration(one.stdout));
    const findings = one.stdout
      .split("\n")
      .filter((l) => l.includes('"type":"finding"'))
      .map((l) => JSON.parse(l) as Finding);
    expect(findings.length).toBeGreaterThan(100);
  });
});
