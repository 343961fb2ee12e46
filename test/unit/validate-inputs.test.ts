/**
 * Input side of the offline validator: the chunked line splitter, format detection, and one
 * fixture per input format (capture, JSONL per direction, Claude Desktop log, HAR).
 * Schema checks use the official 2025-06-18 schema from ../shared (skipped when absent).
 */
import { constants } from "node:buffer";
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { compileValidatorsFromSchema, type ProtocolValidators } from "../../src/mcp/validation.js";
import { SNIFF_BYTES } from "../../src/validate/readers/detect.js";
import { textLineSplitter, detectFormat, exitCodeFor, validateFiles, type Finding, type ValidateOptions } from "../../src/validate/index.js";
import { jsonValueEnd } from "../../src/validate/readers/claude-log.js";
import { MAX_HAR_BYTES, sseData } from "../../src/validate/readers/har.js";
import { requireShared, sharedPath, skipTitle } from "../helpers/requires.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/validate/", import.meta.url));
const SHARED_SCHEMA = sharedPath("mcp-schema/2025-06-18/schema.json");
const sharedMissing = requireShared("mcp-schema/2025-06-18/schema.json");
let official: ProtocolValidators | undefined;
const validators = {
  resolve: (v: string) => {
    official ??= compileValidatorsFromSchema(JSON.parse(readFileSync(SHARED_SCHEMA, "utf8")) as object, "2025-06-18");
    return v === "2025-06-18" ? official : undefined;
  },
  latest: "2025-06-18",
};
const brief = (fs: Finding[]) => fs.map((f) => `${f.line} ${f.severity} ${f.rule}`);

function split(chunks: Buffer[], max?: number): { lines: Array<[number, string]>; tooLong: Array<[number, number]> } {
  const lines: Array<[number, string]> = [];
  const tooLong: Array<[number, number]> = [];
  const s = textLineSplitter(
    (t, n) => lines.push([n, t]),
    max,
    (n, b) => tooLong.push([n, b]),
  );
  for (const c of chunks) s.push(c);
  s.end();
  return { lines, tooLong };
}

describe("LineSplitter", () => {
  const text = "\ufeffalpha\r\nbeta\n\ngamma é ünïcode\r\nlast";
  const expected: Array<[number, string]> = [
    [1, "alpha"],
    [2, "beta"],
    [3, ""],
    [4, "gamma é ünïcode"],
    [5, "last"],
  ];

  it("splits one chunk into lines, dropping CR and a leading BOM, keeping a final unterminated line", () => {
    expect(split([Buffer.from(text)]).lines).toEqual(expected);
  });

  it("gives the same lines whatever the chunk boundaries (including inside CRLF and UTF-8 sequences)", () => {
    const bytes = Buffer.from(text);
    for (const size of [1, 2, 3, 5, 7]) {
      const chunks: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
      expect(split(chunks).lines).toEqual(expected);
    }
  });

  it("drops over-long lines without buffering them and keeps counting lines", () => {
    const long = "x".repeat(100);
    const bytes = Buffer.from(`short\n${long}\nafter\n${long}`);
    const chunks: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 16) chunks.push(bytes.subarray(i, i + 16));
    const { lines, tooLong } = split(chunks, 50);
    expect(lines).toEqual([
      [1, "short"],
      [3, "after"],
    ]);
    expect(tooLong).toEqual([
      [2, 100],
      [4, 100],
    ]);
  });

  it("reports lines that are not valid UTF-8, and not a sequence split across chunks", () => {
    const bytes = Buffer.concat([Buffer.from("é🙂\ufffd\n"), Buffer.from([0x61, 0xc3, 0x28, 0x0a]), Buffer.from("ok")]);
    for (const size of [1, 2, 3, 100]) {
      const bad: number[] = [];
      const lines: number[] = [];
      const s = textLineSplitter(
        (_t, n) => lines.push(n),
        undefined,
        undefined,
        (n) => bad.push(n),
      );
      for (let i = 0; i < bytes.length; i += size) s.push(bytes.subarray(i, i + size));
      s.end();
      expect(bad).toEqual([2]);
      expect(lines).toEqual([1, 2, 3]);
    }
  });

  it("emits nothing for empty input", () => {
    expect(split([]).lines).toEqual([]);
  });
});

describe("format detection", () => {
  const head = (name: string) => readFileSync(join(FIXTURES, name), "utf8").slice(0, 65536);
  it.each([
    ["good.capture.jsonl", "capture"],
    ["client.c2s.jsonl", "jsonl"],
    ["server.s2c.jsonl", "jsonl"],
    ["claude-desktop-mcp.log", "claude-log"],
  ])("detects %s as %s from its content", (name, format) => {
    expect(detectFormat(head(name), "input")).toBe(format);
  });

  it("detects a pretty-printed HAR from its content and a .har name from its name", () => {
    expect(detectFormat(head("streamable-http.har"), "recording.json")).toBe("har");
    expect(detectFormat("garbage", "x.HAR")).toBe("har");
    expect(detectFormat(JSON.stringify({ log: { entries: [] } }), "one-line")).toBe("har");
  });

  it("detects a capture whose first line is longer than the sniffed head", () => {
    // Regression: a first record over 64 KiB (a big first message) was taken for JSONL.
    const record = JSON.stringify({
      ts: "2025-06-18T10:00:00.000Z",
      dir: "s2c",
      msg: { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "x".repeat(70_000) }] } },
    });
    expect(detectFormat(record.slice(0, SNIFF_BYTES), "input")).toBe("capture");
    expect(detectFormat(record.slice(0, SNIFF_BYTES).replace('"dir":"s2c"', '"dir":"up"'), "input")).toBe("jsonl");
    // Written by other JSON writers: spaces between tokens (Python's json.dumps), dir before ts.
    const spaced = record.replace('{"ts":"2025-06-18T10:00:00.000Z","dir":"s2c","msg":', '{"ts": "2025-06-18T10:00:00.000Z", "dir": "s2c", "msg": ');
    expect(spaced.startsWith('{"ts": ')).toBe(true);
    expect(detectFormat(spaced.slice(0, SNIFF_BYTES), "input")).toBe("capture");
    expect(detectFormat(`{ "dir": "c2s", "ts": "t", "raw": "${"x".repeat(70_000)}`.slice(0, SNIFF_BYTES), "input")).toBe("capture");
  });

  it("detects a capture whose first line was cut short (tail -c) from its next line", () => {
    const text = readFileSync(join(FIXTURES, "good.capture.jsonl"), "utf8");
    const cut = text.slice(text.indexOf("\n") - 30);
    expect(JSON.parse(cut.slice(cut.indexOf("\n") + 1).split("\n")[0]!)).toHaveProperty("dir");
    expect(detectFormat(cut, "input")).toBe("capture");
    expect(detectFormat("hello world\nmore words\n", "x")).toBe("jsonl");
  });

  it("falls back to jsonl for text that is nothing known", () => {
    expect(detectFormat("hello world\n", "x")).toBe("jsonl");
    expect(detectFormat("", "x")).toBe("jsonl");
  });
});

describe("reader helpers", () => {
  it("finds the end of the JSON value in a log line, honouring strings", () => {
    const line = '{"a":"}{\\"x","b":[1,{"c":2}]} { metadata: undefined }';
    const end = jsonValueEnd(line, 0);
    expect(JSON.parse(line.slice(0, end))).toEqual({ a: '}{"x', b: [1, { c: 2 }] });
    expect(jsonValueEnd('{"open": true', 0)).toBe(-1);
    expect(jsonValueEnd("plain", 0)).toBe(-1);
  });

  it("splits an SSE body into message events, joining data lines and skipping comments and other events", () => {
    const body = ': hi\r\nevent: message\r\ndata: {"a":\r\ndata: 1}\r\n\r\nevent: ping\ndata: x\n\ndata:2\n\nid: 7\n\n';
    expect(sseData(body)).toEqual(['{"a":\n1}', "2"]);
  });
});

describe.skipIf(sharedMissing !== undefined)(skipTitle("one fixture per input format", sharedMissing), () => {
  it("capture: conforming, 19 messages, one session", async () => {
    const { findings, summary } = await validateFiles([join(FIXTURES, "good.capture.jsonl")], { validators });
    expect(brief(findings)).toEqual([]);
    expect(summary.files[0]).toMatchObject({ format: "capture", messages: 19, sessions: 1, lines: 19 });
  });

  it("jsonl of client messages (--direction c2s): conforming; one-direction rules only", async () => {
    const { findings, summary } = await validateFiles([join(FIXTURES, "client.c2s.jsonl")], { validators, direction: "c2s" });
    expect(brief(findings)).toEqual([]);
    expect(summary.files[0]).toMatchObject({ format: "jsonl", messages: 9 });
  });

  it("jsonl of server messages (--direction s2c): conforming; the initialize result is recognised", async () => {
    const { findings, summary } = await validateFiles([join(FIXTURES, "server.s2c.jsonl")], { validators, direction: "s2c" });
    expect(brief(findings)).toEqual([]);
    expect(summary.files[0]).toMatchObject({ format: "jsonl", messages: 10 });
  });

  it("jsonl: the direction matters (server messages read as client ones break rules)", async () => {
    const { findings } = await validateFiles([join(FIXTURES, "server.s2c.jsonl")], { validators, direction: "c2s" });
    expect(findings.map((f) => f.rule)).toContain("session/initialize-first");
    expect(findings.map((f) => f.rule)).toContain("session/wrong-direction");
  });

  it("jsonl: request id reuse is caught in one direction", async () => {
    const lines = [
      { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } } },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 1, method: "ping" },
      "{not json",
      { jsonrpc: "2.0", id: 1, method: "ping" },
    ].map((m) => (typeof m === "string" ? m : JSON.stringify(m)));
    const { findings } = await validateFiles(["-"], { validators, inputFormat: "jsonl", stdin: Readable.from([lines.join("\n")]) });
    expect(brief(findings)).toEqual(["4 error json/parse-error", "5 error session/reused-request-id"]);
  });

  it("claude-log: one session per server, noise lines skipped and counted", async () => {
    const { findings, summary } = await validateFiles([join(FIXTURES, "claude-desktop-mcp.log")], { validators });
    expect(brief(findings)).toEqual([]);
    expect(summary.files[0]).toMatchObject({ format: "claude-log", messages: 22, sessions: 2, skipped: 4 });
  });

  it("claude-log: findings name the server session; a restart starts a fresh session", async () => {
    const at = (t: string, server: string, who: string, msg: object) => `${t} [${server}] [info] Message from ${who}: ${JSON.stringify(msg)} { metadata: undefined }`;
    const initMsg = (id: number) => ({
      jsonrpc: "2.0",
      id,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } },
    });
    const initRes = (id: number) => ({ jsonrpc: "2.0", id, result: { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "s", version: "1" } } });
    const t = "2025-06-18T10:00:00.000Z";
    const log = [
      at(t, "weather", "client", initMsg(0)),
      at(t, "weather", "server", initRes(0)),
      at(t, "weather", "client", { jsonrpc: "2.0", method: "notifications/initialized" }),
      at(t, "weather", "client", { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
      `${t} [weather] [info] Server transport closed`,
      at(t, "weather", "client", initMsg(0)),
      at(t, "weather", "server", initRes(0)),
      at(t, "weather", "client", { jsonrpc: "2.0", method: "notifications/initialized" }),
      at(t, "weather", "client", { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
      `${t} [weather] [info] Message from server: {"jsonrpc":"2.0","id":1,"result":{"tools":[]} { metadata: undefined }`,
    ].join("\n");
    const { findings, summary } = await validateFiles(["-"], { validators, stdin: Readable.from([log]) });
    // End-of-session findings of the first session come when it restarts (line 6 onwards).
    expect(findings.map((f) => `${f.line} ${f.rule} ${f.session}`)).toEqual([
      "4 session/missing-capability weather",
      "4 session/unanswered-request weather",
      "9 session/missing-capability weather#2",
      "10 json/parse-error weather#2",
      "9 session/unanswered-request weather#2",
    ]);
    expect(summary.files[0]).toMatchObject({ format: "claude-log", sessions: 2, skipped: 1 });
  });

  it("har: Streamable HTTP traffic from POST bodies, JSON, SSE and base64 bodies, in time order", async () => {
    const { findings, summary } = await validateFiles([join(FIXTURES, "streamable-http.har")], { validators });
    expect(brief(findings)).toEqual([]);
    expect(summary.files[0]).toMatchObject({ format: "har", messages: 11, lines: 6, skipped: 1 });
  });

  it("har: findings carry the entry number and part", async () => {
    const har = JSON.parse(readFileSync(join(FIXTURES, "streamable-http.har"), "utf8")) as { log: { entries: Array<{ response: { content: { text: string } } }> } };
    har.log.entries[2]!.response.content.text = 'data: {"jsonrpc":"2.0","id":1,"result":{"tools":5}}\n\n';
    const { findings } = await validateFiles(["-"], { validators, inputFormat: "har", stdin: Readable.from([JSON.stringify(har)]) });
    expect(findings.map((f) => [f.line, f.location, f.rule])).toEqual([[3, "response event 1", "schema/result"]]);
  });

  it("har: a file that is not HAR is unreadable (exit code 2)", async () => {
    const { findings, summary } = await validateFiles(["-"], { validators, inputFormat: "har", stdin: Readable.from(['{"no": "log"}']) });
    expect(brief(findings)).toEqual(["0 error input/unreadable"]);
    expect(summary.unreadable).toBe(1);
  });

  describe("an input that yields no message is input/no-messages (exit code 2), never a silent pass", () => {
    const run = async (text: string, inputFormat?: ValidateOptions["inputFormat"], jobs = 1) => {
      const opts: ValidateOptions = { validators, stdin: Readable.from([Buffer.from(text)]), jobs };
      if (inputFormat !== undefined) opts.inputFormat = inputFormat;
      const { findings, summary } = await validateFiles(["-"], opts);
      return { brief: brief(findings), findings, summary, exit: exitCodeFor(summary) };
    };
    const capture = readFileSync(join(FIXTURES, "good.capture.jsonl"), "utf8");

    it("--input-format claude-log on a file that is not a Claude log", async () => {
      for (const jobs of [1, 2]) {
        const r = await run(capture, "claude-log", jobs);
        expect(r.brief).toEqual(["0 error input/no-messages"]);
        expect(r.findings[0]!.message).toMatch(/claude-log.*forced by --input-format/);
        expect(r.summary.files[0]!.format).toBe("claude-log");
        expect(r.exit).toBe(2);
      }
    });

    it("--input-format claude-log on a real Claude log passes", async () => {
      const r = await run(readFileSync(join(FIXTURES, "claude-desktop-mcp.log"), "utf8"), "claude-log");
      expect(r.brief).toEqual([]);
      expect(r.exit).toBe(0);
    });

    it("--input-format capture on plain JSONL: malformed records and no messages", async () => {
      const r = await run('{"jsonrpc":"2.0","id":1,"method":"ping"}\n', "capture");
      expect(r.brief).toEqual(["1 error input/malformed-record", "0 error input/no-messages"]);
      expect(r.exit).toBe(2);
    });

    it("--input-format jsonl on text: every line is a message that fails to parse (exit 1, not 2)", async () => {
      const r = await run("hello\nworld\n", "jsonl");
      expect(r.brief).toEqual(["1 error json/parse-error", "2 error json/parse-error"]);
      expect(r.exit).toBe(1);
    });

    it("--input-format har on a HAR without MCP bodies", async () => {
      const r = await run(JSON.stringify({ log: { entries: [{ request: { method: "GET" }, response: { content: {} } }] } }), "har");
      expect(r.brief).toEqual(["0 error input/no-messages"]);
      expect(r.exit).toBe(2);
    });

    it("an empty input and one of blank lines (auto-detected) do not pass", async () => {
      for (const text of ["", "\n\n  \r\n"]) {
        for (const jobs of [1, 2]) {
          const r = await run(text, undefined, jobs);
          expect(r.brief).toEqual(["0 error input/no-messages"]);
          expect(r.exit).toBe(2);
        }
      }
    });
  });

  it("har: the not-a-HAR message stays on one line", async () => {
    const { findings } = await validateFiles(["-"], { validators, inputFormat: "har", stdin: Readable.from(["hello\nworld\n"]) });
    expect(brief(findings)).toEqual(["0 error input/unreadable"]);
    expect(findings[0]!.message).not.toMatch(/\n/);
  });

  it("several files are separate sessions, reported in input order", async () => {
    const files = ["good.capture.jsonl", "streamable-http.har", "claude-desktop-mcp.log"].map((n) => join(FIXTURES, n));
    const done: string[] = [];
    const { summary } = await validateFiles(files, { validators, onFileDone: (f) => done.push(f.file) });
    expect(done).toEqual(files);
    expect(summary.files.map((f) => f.format)).toEqual(["capture", "har", "claude-log"]);
    expect(summary.errors + summary.warnings).toBe(0);
  });

  it("--jobs gives the same findings in the same order (in-process when run from sources)", async () => {
    const bad = join(FIXTURES, "client.c2s.jsonl");
    const files = [join(FIXTURES, "good.capture.jsonl"), bad, bad];
    const opts: ValidateOptions = { validators, direction: "s2c" };
    const one = await validateFiles(files, opts);
    const many = await validateFiles(files, { ...opts, jobs: 2 });
    expect(many.findings).toEqual(one.findings);
    expect(one.findings.length).toBeGreaterThan(0);
  });

  it("reports progress per chunk with the file size", async () => {
    const events: Array<[number, number | undefined]> = [];
    await validateFiles([join(FIXTURES, "good.capture.jsonl")], { validators, onProgress: (e) => events.push([e.bytesRead, e.totalBytes]) });
    const size = readFileSync(join(FIXTURES, "good.capture.jsonl")).length;
    expect(events.at(-1)).toEqual([size, size]);
  });
});

describe.skipIf(sharedMissing !== undefined)(skipTitle("input/invalid-utf8", sharedMissing), () => {
  const hs = readFileSync(join(FIXTURES, "good.capture.jsonl"), "utf8").split("\n").slice(0, 3).join("\n");
  const call = (name: Buffer | string) =>
    Buffer.concat([
      Buffer.from('{"ts":"t","dir":"c2s","msg":{"jsonrpc":"2.0","id":901,"method":"ping","params":{"_meta":{"x":"'),
      Buffer.isBuffer(name) ? name : Buffer.from(name),
      Buffer.from('"}}}}\n{"ts":"t","dir":"s2c","msg":{"jsonrpc":"2.0","id":901,"result":{}}}\n'),
    ]);
  const run = async (line: Buffer, jobs: number) => {
    const { findings } = await validateFiles(["-"], { validators, jobs, chunkBytes: 256, stdin: Readable.from([Buffer.concat([Buffer.from(`${hs}\n`), line])]) });
    return brief(findings);
  };

  it("a line with bytes that are not UTF-8 breaks only input/invalid-utf8 (also with --jobs)", async () => {
    for (const jobs of [1, 2]) expect(await run(call(Buffer.from([0x61, 0xff, 0xfe, 0x62])), jobs)).toEqual(["4 error input/invalid-utf8"]);
  });

  it("a real U+FFFD character and other non-ASCII text are fine", async () => {
    for (const jobs of [1, 2]) expect(await run(call("a\ufffdb é 🙂"), jobs)).toEqual([]);
  });
});

describe.skipIf(sharedMissing !== undefined)(skipTitle("HAR order, sessions and limits; crashed-server logs; dropped capture records", sharedMissing), () => {
  interface EntrySpec {
    at: string;
    time: number;
    /** POST body (omit for a GET). */
    req?: unknown;
    /** JSON response body. */
    res?: unknown;
    /** SSE response events. */
    sse?: unknown[];
    /** Mcp-Session-Id on the request and on the response. */
    sid?: string;
    resSid?: string;
  }
  const header = (name: string, value: string | undefined) => (value === undefined ? [] : [{ name, value }]);
  const entry = (e: EntrySpec) => ({
    startedDateTime: e.at,
    time: e.time,
    request: {
      method: e.req === undefined ? "GET" : "POST",
      url: "http://127.0.0.1:3000/mcp",
      headers: header("Mcp-Session-Id", e.sid),
      ...(e.req === undefined ? {} : { postData: { mimeType: "application/json", text: JSON.stringify(e.req) } }),
    },
    response: {
      status: e.res === undefined && e.sse === undefined ? 202 : 200,
      headers: header("mcp-session-id", e.resSid ?? e.sid),
      content:
        e.sse !== undefined
          ? { mimeType: "text/event-stream", text: e.sse.map((m) => `event: message\ndata: ${JSON.stringify(m)}\n\n`).join("") }
          : e.res !== undefined
            ? { mimeType: "application/json", text: JSON.stringify(e.res) }
            : { mimeType: "", text: "" },
    },
  });
  const harOf = (entries: EntrySpec[]) => JSON.stringify({ log: { version: "1.2", creator: { name: "test", version: "1" }, entries: entries.map(entry) } });
  const check = async (text: string | Buffer, jobs = 1, opts: Partial<ValidateOptions> = {}) => {
    const r = await validateFiles(["-"], { validators, jobs, stdin: Readable.from([Buffer.from(text)]), ...opts });
    return { ...r, brief: brief(r.findings), exit: exitCodeFor(r.summary) };
  };
  const init = (caps: object = {}) => ({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: caps, clientInfo: { name: "c", version: "1" } },
  });
  const initRes = { jsonrpc: "2.0", id: 0, result: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "s", version: "1" } } };
  const initialized = { jsonrpc: "2.0", method: "notifications/initialized" };
  const t = (s: string) => `2025-06-18T10:00:${s}Z`;

  describe("HAR: server requests on SSE streams (finding 1)", () => {
    it("a sampling/createMessage request on a POST's SSE stream, answered by a client POST while the stream is open, is clean", async () => {
      const har = harOf([
        { at: t("00.000"), time: 10, req: init({ sampling: {} }), res: initRes },
        { at: t("01.000"), time: 10, req: initialized },
        {
          at: t("02.000"),
          time: 3000,
          req: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "summarize" } },
          sse: [
            { jsonrpc: "2.0", id: "srv-1", method: "sampling/createMessage", params: { messages: [], maxTokens: 5 } },
            { jsonrpc: "2.0", id: 1, result: { content: [] } },
          ],
        },
        { at: t("03.000"), time: 10, req: { jsonrpc: "2.0", id: "srv-1", result: { role: "assistant", content: { type: "text", text: "x" }, model: "m" } } },
      ]);
      for (const jobs of [1, 2]) {
        const r = await check(har, jobs, { inputFormat: "har" });
        expect(r.brief).toEqual([]);
        expect(r.summary.files[0]).toMatchObject({ format: "har", messages: 7 });
      }
    });

    it("a roots/list request on a long-lived GET stream, answered during the stream, is clean; an unanswered one is still reported", async () => {
      const entries: EntrySpec[] = [
        { at: t("00.000"), time: 10, req: init({ roots: {} }), res: initRes },
        { at: t("01.000"), time: 10, req: initialized },
        { at: t("02.000"), time: 30000, sse: [{ jsonrpc: "2.0", id: "s1", method: "roots/list" }] },
        { at: t("03.000"), time: 10, req: { jsonrpc: "2.0", id: "s1", result: { roots: [] } } },
        { at: t("04.000"), time: 10, req: { jsonrpc: "2.0", id: 1, method: "tools/list" }, res: { jsonrpc: "2.0", id: 1, result: { tools: [] } } },
      ];
      expect((await check(harOf(entries), 1, { inputFormat: "har" })).brief).toEqual([]);
      // Without the answer, the request stays unanswered (the causal order invents nothing).
      const unanswered = await check(harOf(entries.filter((_, i) => i !== 3)), 1, { inputFormat: "har" });
      expect(unanswered.brief).toEqual(["3 error session/unanswered-request"]);
      // An answer that comes before the stream was opened still matches nothing.
      const early = await check(harOf([entries[0]!, entries[1]!, { ...entries[3]!, at: t("01.500") }, entries[2]!]), 1, { inputFormat: "har" });
      expect(early.brief).toEqual(["3 error session/unmatched-response", "4 error session/unanswered-request"]);
    });
  });

  it("HAR: sessions are told apart by Mcp-Session-Id, assigned by the initialize response (finding 2)", async () => {
    const entries: EntrySpec[] = [
      { at: t("00.000"), time: 10, req: init(), res: initRes, resSid: "A" },
      { at: t("01.000"), time: 10, req: initialized, sid: "A" },
      { at: t("02.000"), time: 10, req: init(), res: initRes, resSid: "B" },
      { at: t("03.000"), time: 10, req: initialized, sid: "B" },
      { at: t("04.000"), time: 10, req: { jsonrpc: "2.0", id: 1, method: "tools/list" }, res: { jsonrpc: "2.0", id: 1, result: { tools: [] } }, sid: "A" },
      { at: t("05.000"), time: 10, req: { jsonrpc: "2.0", id: 1, method: "tools/list" }, res: { jsonrpc: "2.0", id: 1, result: { tools: [] } }, sid: "B" },
    ];
    const ok = await check(harOf(entries), 1, { inputFormat: "har" });
    expect(ok.brief).toEqual([]);
    expect(ok.summary.files[0]).toMatchObject({ sessions: 2, messages: 10 });
    // A finding names the session it belongs to.
    entries.push({ at: t("06.000"), time: 10, req: { jsonrpc: "2.0", id: 2, method: "prompts/list" }, res: { jsonrpc: "2.0", id: 2, result: { prompts: [] } }, sid: "B" });
    const bad = await check(harOf(entries), 1, { inputFormat: "har" });
    expect(bad.findings.map((f) => `${f.line} ${f.rule} ${f.session}`)).toEqual(["7 session/missing-capability B"]);
  });

  describe("HAR: millisecond ties keep the order of the file (finding 3)", () => {
    const session = (at: (i: number) => string, time: number): EntrySpec[] => [
      { at: at(0), time, req: init(), res: initRes },
      { at: at(1), time, req: initialized },
      { at: at(2), time, req: { jsonrpc: "2.0", id: 1, method: "tools/list" }, res: { jsonrpc: "2.0", id: 1, result: { tools: [] } } },
      {
        at: at(3),
        time,
        req: { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "a", _meta: { progressToken: 1 } } },
        sse: [
          { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 1 } },
          { jsonrpc: "2.0", id: 2, result: { content: [] } },
        ],
      },
    ];

    it("entries at the same millisecond (time 1) replay in file order, request before response", async () => {
      const r = await check(harOf(session(() => t("00.000"), 1)), 1, { inputFormat: "har" });
      expect(r.brief).toEqual([]);
      expect(r.summary.files[0]).toMatchObject({ messages: 8 });
    });

    it("entries 1 ms apart lasting 1.2 ms: each response comes before the next request", async () => {
      const r = await check(harOf(session((i) => t(`00.00${i}`), 1.2)), 1, { inputFormat: "har" });
      expect(r.brief).toEqual([]);
    });

    it("a response never comes before its own request, whatever the times say (time 0, negative or missing)", async () => {
      for (const time of [0, -1, undefined]) {
        const entries = session(() => t("00.000"), 0).map((e) => ({ ...e, time: time as number }));
        const r = await check(harOf(entries), 1, { inputFormat: "har" });
        expect(r.brief).toEqual([]);
      }
    });

    it("entries that really overlap (longer than the resolution) keep their time order", async () => {
      // tools/list sent at 10.000 (answered at 10.500) and a second tools/list with the same id at
      // 10.100: the second request is in flight while the first is, so it is a duplicate id.
      const entries = session((i) => t(`0${i}.000`), 10).slice(0, 3);
      entries.push({ at: t("02.005"), time: 10, req: { jsonrpc: "2.0", id: 1, method: "tools/list" }, res: { jsonrpc: "2.0", id: 1, result: { tools: [] } } });
      const r = await check(harOf(entries), 1, { inputFormat: "har" });
      expect(r.brief[0]).toBe("4 error session/duplicate-request-id");
    });
  });

  describe("HAR input limits (finding 4)", () => {
    it("a HAR starting with a UTF-8 BOM is read (detected by content and forced)", async () => {
      const har =
        "\ufeff" +
        harOf([
          { at: t("00.000"), time: 10, req: init(), res: initRes },
          { at: t("01.000"), time: 10, req: initialized },
        ]);
      for (const opts of [{}, { inputFormat: "har" as const }]) {
        for (const jobs of [1, 2]) {
          const r = await check(har, jobs, opts);
          expect(r.brief).toEqual([]);
          expect(r.summary.files[0]).toMatchObject({ format: "har", messages: 3 });
        }
      }
    });

    it("a HAR over the string limit is input/unreadable with a message naming the limit, not V8's", async () => {
      expect(MAX_HAR_BYTES).toBe(constants.MAX_STRING_LENGTH);
      const tmp = mkdtempSync(join(tmpdir(), "har-limit-"));
      try {
        const file = join(tmp, "huge.har");
        writeFileSync(file, '{"log":{"entries":[');
        truncateSync(file, MAX_HAR_BYTES + 1); // sparse: nothing is written
        for (const jobs of [1, 2]) {
          const { findings, summary } = await validateFiles([file], { validators, jobs });
          expect(brief(findings)).toEqual(["0 error input/unreadable"]);
          expect(findings[0]!.message).toContain(`HAR file of ${MAX_HAR_BYTES + 1} bytes`);
          expect(findings[0]!.message).toContain(`limited to ${MAX_HAR_BYTES} bytes`);
          expect(findings[0]!.message).not.toMatch(/0x1fffffe8/);
          expect(exitCodeFor(summary)).toBe(2);
        }
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
      // From stdin (size unknown): the reading stops once past the limit.
      const chunk = Buffer.alloc(1 << 20, 0x20);
      chunk.write('{"log":{"entries":[');
      function* big(): Generator<Buffer> {
        for (let i = 0; i <= MAX_HAR_BYTES / chunk.length + 1; i++) yield chunk; // the same buffer: no memory
      }
      const { findings } = await validateFiles(["-"], { validators, inputFormat: "har", stdin: Readable.from(big()) });
      expect(brief(findings)).toEqual(["0 error input/unreadable"]);
      expect(findings[0]!.message).toMatch(/^cannot read input: HAR file of more than \d+ bytes .* is too large: .*limited to \d+ bytes/);
    }, 60_000);
  });

  describe("a Claude Desktop log without message lines (finding 5)", () => {
    const crashed = [
      "2026-11-29T10:00:00.000Z [orchestra] [info] Initializing server...",
      '2026-11-29T10:00:00.100Z [orchestra] [error] spawn node ENOENT {"context":"connection","stack":"Error: spawn node ENOENT"}',
      "2026-11-29T10:00:00.200Z [orchestra] [info] Server transport closed",
      "",
    ].join("\n");

    it("is detected as claude-log from the timestamp [name] [level] prefix (either order)", () => {
      expect(detectFormat(crashed, "mcp-server-orchestra.log")).toBe("claude-log");
      expect(detectFormat("\ufeff2025-06-18T10:00:00.000+02:00 [info] [weather] Server started\n", "x")).toBe("claude-log");
      expect(detectFormat("2025-06-18T10:00:00Z [weather] something else\n", "x")).toBe("jsonl");
      expect(detectFormat("[info] [weather] no timestamp\n", "x")).toBe("jsonl");
    });

    it("validates as input/no-messages (exit code 2), not as JSON parse errors", async () => {
      for (const jobs of [1, 2]) {
        const r = await check(crashed, jobs);
        expect(r.brief).toEqual(["0 error input/no-messages"]);
        expect(r.findings[0]!.message).toMatch(/claude-log format \(detected\)/);
        expect(r.summary.files[0]!.format).toBe("claude-log");
        expect(r.exit).toBe(2);
      }
    });
  });

  describe("capture: a dropped-message record (finding 6)", () => {
    const rec = (dir: string, msg: unknown) => JSON.stringify({ ts: "2025-06-18T10:00:00.000Z", dir, msg });
    const dropped = (bytes: number) => JSON.stringify({ ts: "2025-06-18T10:00:00.000Z", dir: "c2s", dropped: { bytes, limit: 16777216, reason: "line-too-long" } });
    const head = [rec("c2s", init()), rec("s2c", initRes), rec("c2s", initialized)];
    const tooLong = (id: unknown) => ({
      jsonrpc: "2.0",
      id,
      error: { code: -32600, message: "Message of 17000000 bytes exceeds the 16777216-byte limit", data: { bytes: 17000000, maxBytes: 16777216 } },
    });

    it("is a warning naming the size; the bridge's -32600 reply to it (recovered id) is not blamed", async () => {
      const text = [
        ...head,
        dropped(17000000),
        rec("s2c", tooLong("huge")),
        rec("c2s", { jsonrpc: "2.0", id: 2, method: "ping" }),
        rec("s2c", { jsonrpc: "2.0", id: 2, result: {} }),
      ].join("\n");
      for (const jobs of [1, 2]) {
        const r = await check(text, jobs, { chunkBytes: 256 });
        expect(r.brief).toEqual(["4 warning input/dropped-message"]);
        expect(r.findings[0]!.message).toContain("client→server message of 17000000 bytes over the 16777216-byte line limit");
        expect(r.exit).toBe(0);
      }
    });

    it("also when the reply has a null id (the id was not in the line's head), and as the first line", async () => {
      const text = [dropped(20000000), rec("s2c", tooLong(null)), ...head].join("\n");
      const r = await check(text);
      expect(r.brief).toEqual(["1 warning input/dropped-message", "2 warning jsonrpc/null-id-error"]);
      expect(r.summary.files[0]!.format).toBe("capture");
    });

    it("without the record, the same reply is an error (what the record prevents)", async () => {
      const r = await check([...head, rec("s2c", tooLong("huge"))].join("\n"));
      expect(r.brief).toEqual(["4 error session/unmatched-response"]);
    });

    it("a malformed dropped record is input/malformed-record", async () => {
      const r = await check([...head, JSON.stringify({ ts: "t", dir: "c2s", dropped: { size: 1 } })].join("\n"));
      expect(r.brief).toEqual(["4 error input/malformed-record"]);
    });
  });
});

describe("a live input (a pipe whose writer pauses)", () => {
  /** Capture lines of a session whose tools/call result breaks its schema (line 5). */
  const lines = (): string => {
    const rec = (dir: string, msg: unknown): string => JSON.stringify({ ts: "2025-06-18T10:00:00.000Z", dir, msg });
    return `${[
      rec("c2s", { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } } }),
      rec("s2c", { jsonrpc: "2.0", id: 1, result: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "s", version: "1" } } }),
      rec("c2s", { jsonrpc: "2.0", method: "notifications/initialized" }),
      rec("c2s", { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "x", arguments: {} } }),
      rec("s2c", { jsonrpc: "2.0", id: 2, result: { content: "not a list" } }),
    ].join("\n")}\n`;
  };

  // Far less than the 64 KiB sniffed head and the 1 MiB chunk: before, nothing was checked until
  // the writer closed the pipe (or wrote that much more).
  it.each([
    ["without --jobs, format detected", {}],
    ["without --jobs, --input-format", { inputFormat: "capture" as const }],
    ["--jobs 2, format detected", { jobs: 2 }],
    ["--jobs 2, --input-format", { jobs: 2, inputFormat: "capture" as const }],
  ])("reports what has arrived while the pipe stays open (%s)", async (_name, opts) => {
    const stdin = new Readable({ read() {} });
    stdin.push(lines());
    let ended = false;
    const seen: Array<{ rule: string; line: number; beforeEnd: boolean }> = [];
    let found!: () => void;
    const first = new Promise<void>((resolve) => (found = resolve));
    const run = validateFiles(["-"], {
      ...opts,
      stdin,
      onFinding: (f) => {
        seen.push({ rule: f.rule, line: f.line, beforeEnd: !ended });
        found();
      },
    });
    // The writer pauses: the pipe ends only after a finding came out (or, if none comes, after 5 s).
    await Promise.race([first, new Promise((resolve) => setTimeout(resolve, 5000))]);
    ended = true;
    stdin.push(null);
    const { summary } = await run;
    expect(seen[0]).toEqual({ rule: "schema/result", line: 5, beforeEnd: true });
    expect(summary.messages).toBe(5);
  });
});

describe.skipIf(sharedMissing !== undefined)(skipTitle("a live input that pauses where detection cannot decide yet", sharedMissing), () => {
  /** Findings and summary of `bytes` fed as `parts` with pauses between them (longer than the idle time). */
  const paused = async (parts: Buffer[], opts: ValidateOptions): Promise<unknown> => {
    const stdin = new Readable({ read() {} });
    const run = validateFiles(["-"], { ...opts, stdin });
    for (let i = 0; i < parts.length; i++) {
      stdin.push(parts[i]);
      if (i < parts.length - 1) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    stdin.push(null);
    const r = await run;
    return { findings: r.findings, files: r.summary.files.map((f) => ({ ...f, durationMs: 0 })) };
  };
  const whole = async (bytes: Buffer, opts: ValidateOptions): Promise<unknown> => {
    const r = await validateFiles(["-"], { ...opts, stdin: Readable.from([bytes]) });
    return { findings: r.findings, files: r.summary.files.map((f) => ({ ...f, durationMs: 0 })) };
  };
  const fixture = (name: string): Buffer => readFileSync(join(FIXTURES, name));
  const cases: Array<[string, Buffer, number, string]> = [
    ["a capture after blank lines", Buffer.concat([Buffer.from("\n   \n"), fixture("good.capture.jsonl")]), 5, "capture"],
    ["a pretty-printed HAR after its first `{`", fixture("streamable-http.har"), 2, "har"],
    ["a Claude log after a line that is not a log line", Buffer.concat([Buffer.from("hello world\n"), fixture("claude-desktop-mcp.log")]), 12, "claude-log"],
    ["a capture whose first line is not complete", fixture("good.capture.jsonl"), 20, "capture"],
    ["a Claude log after a JSON line of its own", Buffer.concat([Buffer.from('{"level":"info","msg":"starting"}\n'), fixture("claude-desktop-mcp.log")]), 35, "claude-log"],
    ["a Claude log after its first line", fixture("claude-desktop-mcp.log"), fixture("claude-desktop-mcp.log").indexOf("\n") + 1, "claude-log"],
  ];
  it.each(cases)("%s: detected as from the whole input", async (_name, bytes, at, format) => {
    for (const jobs of [1, 2]) {
      const expected = await whole(bytes, { validators, jobs });
      expect((expected as { files: Array<{ format: string }> }).files[0]!.format).toBe(format);
      expect(await paused([bytes.subarray(0, at), bytes.subarray(at)], { validators, jobs }), `jobs ${jobs}`).toEqual(expected);
    }
  });
});
