/**
 * Findings of new users of `validate` (built-in validators): false positives, wrong version
 * labels, one defect reported twice. Each case is a small capture written here.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { gzipSync } from "node:zlib";
import { exitCodeFor, renderReport, validateFiles, type TimelineMessage } from "../../src/validate/index.js";
import { brief, captureText, err, handshake, init, initialized, initResult, ok, req, validateText, type Rec } from "../helpers/validate-records.js";

describe("null-id answers to invalid requests", () => {
  it("a request method sent without an id may be rejected with id null: only the null-id warning", async () => {
    const { findings } = await validateText(captureText([...handshake(), req("c2s", undefined, "tools/list"), err("s2c", null)]));
    expect(brief(findings)).toEqual(["4 error jsonrpc/kind-mismatch", "5 warning jsonrpc/null-id-error"]);
  });

  it("initialize sent without an id: one kind-mismatch (no initialize-first), and its null-id rejection is fine", async () => {
    const { findings, summary } = await validateText(captureText([init("2025-06-18", null), err("s2c", null)]));
    expect(brief(findings)).toEqual(["1 error jsonrpc/kind-mismatch", "2 warning jsonrpc/null-id-error"]);
    expect(summary.files[0]!.excerpt).not.toBe(true);
  });

  it("a duplicate in-flight id is an invalid request the peer may reject with id null (as serve does)", async () => {
    const records = [
      ...handshake(),
      req("c2s", 9, "tools/list"),
      req("c2s", 9, "tools/list"),
      err("s2c", null, -32600, "Invalid Request: request id 9 is already in flight"),
      ok("s2c", 9, { tools: [] }),
    ];
    const { findings } = await validateText(captureText(records));
    expect(brief(findings)).toEqual(["5 error session/duplicate-request-id", "6 warning jsonrpc/null-id-error"]);
  });
});

const V26 = "2026-07-28";
const meta26 = { _meta: { "io.modelcontextprotocol/protocolVersion": V26, "io.modelcontextprotocol/clientCapabilities": {} } };
const served26 = { resultType: "complete", _meta: { "io.modelcontextprotocol/serverInfo": { name: "s", version: "1" } }, ttlMs: 0, cacheScope: "private" };

describe("version labels", () => {
  it("a stateless 2026-07-28 session followed by initialize: two sessions, each with the version it was checked against", async () => {
    const records = [
      req("c2s", "d", "server/discover", meta26),
      ok("s2c", "d", { ...served26, supportedVersions: [V26], capabilities: { tools: {} } }),
      req("c2s", 1, "tools/list", meta26),
      ok("s2c", 1, { ...served26, tools: [] }),
      init(V26, 2),
      ok("s2c", 2, { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "s", version: "1" } }),
      req("c2s", undefined, "notifications/initialized"),
      req("c2s", 3, "tools/list"),
      ok("s2c", 3, { tools: [] }),
    ];
    const { findings, summary } = await validateText(captureText(records));
    expect(brief(findings)).toEqual([]);
    expect(summary.files[0]!.protocolVersions).toEqual([V26, "2025-11-25"]);
    expect(summary.files[0]!.sessions).toBe(2);
  });
});

describe("a bare ping in a stateless session", () => {
  it("is checked as serve serves it, under the newest initialize-based revision: its {} answer is fine, the next stateless request is checked as before", async () => {
    const records = [
      req("c2s", "d", "server/discover", meta26),
      ok("s2c", "d", { ...served26, supportedVersions: [V26], capabilities: { tools: {} } }),
      req("c2s", 100, "ping"),
      ok("s2c", 100, {}),
      req("c2s", 1, "tools/list", meta26),
      ok("s2c", 1, { tools: [] }),
    ];
    const { findings, summary } = await validateText(captureText(records));
    // (the tools/list answer lacks what 2026-07-28 requires: the session's revision still governs it)
    expect(brief(findings)).toEqual(["6 error schema/envelope"]);
    expect(summary.files[0]!.protocolVersions).toEqual([V26]);
  });
});

describe("requests in flight when a session splits carry on (serve answers each once)", () => {
  const progress = (token: string, n: number): Rec => req("s2c", undefined, "notifications/progress", { progressToken: token, progress: n });

  it("a stateless call in flight when initialize starts an initialize-based session: its answer matches it", async () => {
    const records = [
      req("c2s", 1, "tools/call", { name: "slow", arguments: { ms: 1500 }, ...meta26 }),
      init("2025-11-25", 2),
      ok("s2c", 2, { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "s", version: "1" } }),
      initialized,
      ok("s2c", 1, { ...served26, content: [{ type: "text", text: "done" }] }),
    ];
    const { findings, summary } = await validateText(captureText(records));
    expect(brief(findings)).toEqual([]);
    expect(summary.files[0]!.sessions).toBe(2);
  });

  it("a call in flight at a second initialize: only the reinitialize warning, its progress and answer match it", async () => {
    const records = [
      ...handshake(),
      req("c2s", 2, "tools/call", { name: "count", arguments: {}, _meta: { progressToken: "p" } }),
      progress("p", 1),
      init("2025-06-18", 3),
      initResult("2025-06-18", 3),
      initialized,
      progress("p", 2),
      ok("s2c", 2, { content: [{ type: "text", text: "done" }] }),
    ];
    const { findings } = await validateText(captureText(records));
    expect(brief(findings)).toEqual(["6 warning session/reinitialize"]);
  });

  it("a carried call that is never answered is still reported, once, at its own line", async () => {
    const records = [...handshake(), req("c2s", 2, "tools/call", { name: "slow", arguments: {} }), init("2025-06-18", 3), initResult("2025-06-18", 3), initialized];
    const { findings } = await validateText(captureText(records));
    expect(brief(findings).filter((f) => f.endsWith("unanswered-request"))).toEqual(["4 error session/unanswered-request"]);
  });
});

describe("one pairing of responses to requests for every reporter", () => {
  it("a duplicate in-flight id: the first response answers the earlier request, the second the duplicate (timeline `answers`)", async () => {
    const call = (id: number): Rec => req("c2s", id, "tools/call", { name: "a", arguments: {} });
    const records = [...handshake(), call(2), call(2), ok("s2c", 1, { content: [] }), ok("s2c", 2, { content: [] }), ok("s2c", 2, { content: [] }), ok("s2c", 77, { content: [] })];
    const timeline: TimelineMessage[] = [];
    const { findings } = await validateText(captureText(records), { partial: true, onMessage: (m) => timeline.push(m) });
    expect(brief(findings)).toEqual(["5 error session/duplicate-request-id"]);
    expect(timeline.filter((m) => m.kind === "result").map((m) => [m.line, m.answers?.line])).toEqual([
      [2, 1],
      [6, undefined],
      [7, 4],
      [8, 5],
      [9, undefined],
    ]);
  });
});

describe("the excerpt hint", () => {
  it("does not fire on a session that starts with initialize, whatever it answers", async () => {
    const { findings, summary } = await validateText(captureText([...handshake(), ok("s2c", 5, { tools: [] })]));
    expect(brief(findings)).toEqual(["4 error session/unmatched-response"]);
    expect(summary.files[0]!.excerpt).toBeUndefined();
  });

  it("does not fire on a complete capture whose client sent a request before initialize", async () => {
    const { findings, summary } = await validateText(captureText([req("c2s", 1, "tools/list"), err("s2c", 1, -32600, "not initialized"), ...handshake()]));
    expect(brief(findings)).toEqual(["1 error session/initialize-first"]);
    expect(summary.files[0]!.excerpt).toBeUndefined();
  });

  it("still fires on an excerpt that holds no initialize", async () => {
    const { summary } = await validateText(captureText([req("c2s", 1, "tools/list"), ok("s2c", 1, { tools: [] })]));
    expect(summary.files[0]!.excerpt).toBe(true);
  });
});

describe("plain JSONL direction", () => {
  it.each(["sampling/createMessage", "roots/list", "elicitation/create"])("a first server-only request (%s) is read as server→client, with the warning", async (method) => {
    const text = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method })}\n`;
    const { findings, summary } = await validateText(text, { inputFormat: undefined });
    expect(brief(findings)[0]).toBe("1 warning input/direction-guessed");
    const rules = findings.map((f) => f.rule);
    expect(rules).not.toContain("session/wrong-direction");
    expect(rules).not.toContain("schema/unknown-method");
    expect(summary.files[0]!.protocolVersions).toEqual(["2025-11-25"]);
  });
});

describe("batches by version", () => {
  it("a batch in a 2024-11-05 session is fine (its messages follow JSON-RPC 2.0, which has batches)", async () => {
    const batch: Rec = [
      "c2s",
      [
        { jsonrpc: "2.0", id: 1, method: "ping" },
        { jsonrpc: "2.0", id: 2, method: "ping" },
      ],
    ];
    const answers: Rec = [
      "s2c",
      [
        { jsonrpc: "2.0", id: 1, result: {} },
        { jsonrpc: "2.0", id: 2, result: {} },
      ],
    ];
    const { findings } = await validateText(captureText([...handshake("2024-11-05"), batch, answers]));
    expect(brief(findings)).toEqual([]);
    const later = await validateText(captureText([...handshake("2025-06-18"), batch, answers]));
    expect(brief(later.findings)).toContain("4 error session/batch-not-allowed");
  });

  it("a batch in a 2024-11-05 session may also be rejected as a whole with one null-id error (as serve does): only the null-id warning", async () => {
    const batch: Rec = ["c2s", [{ jsonrpc: "2.0", id: 2, method: "ping" }]];
    const rejection = err("s2c", null, -32600, "JSON-RPC batches are not supported in MCP protocol version 2024-11-05");
    const { findings } = await validateText(captureText([...handshake("2024-11-05"), batch, rejection]));
    expect(brief(findings)).toEqual(["5 warning jsonrpc/null-id-error"]);
  });
});

describe("inputs that are not text", () => {
  it("gzip, UTF-16 or binary input is one input/unreadable finding naming it (exit code 2), not one per line", async () => {
    const gz = gzipSync(Buffer.from(captureText(handshake()).repeat(20)));
    for (const [bytes, what] of [
      [gz, /gzip-compressed/],
      [Buffer.from([0x00, 0x01, 0x02, 0x0a, 0xff, 0x00, 0x0a]), /binary data/],
      // UTF-16, as Windows PowerShell's `>` writes a capture: with a byte order mark, and without
      [
        Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(captureText(handshake()), "utf16le")]),
        /^cannot read input: not a text capture in UTF-8: UTF-16 text \(little-endian, with a byte order mark\); convert it first: iconv/,
      ],
      [Buffer.from(captureText(handshake()), "utf16le"), /UTF-16 text \(little-endian\)/],
      [Buffer.from(captureText(handshake()), "utf16le").swap16(), /UTF-16 text \(big-endian\)/],
    ] as const) {
      const { findings, summary } = await validateText(bytes, { inputFormat: undefined });
      expect(findings.map((f) => f.rule)).toEqual(["input/unreadable"]);
      expect(findings[0]!.message).toMatch(what);
      expect(exitCodeFor(summary)).toBe(2);
    }
  });
});

describe("one defect, one finding", () => {
  it("a response with both result and error answers its request (no unanswered-request)", async () => {
    const records = [...handshake(), req("c2s", 1, "tools/list"), ["s2c", { jsonrpc: "2.0", id: 1, result: { tools: [] }, error: { code: 1, message: "x" } }] as Rec];
    const { findings } = await validateText(captureText(records));
    expect(brief(findings)).toEqual(["5 error jsonrpc/invalid"]);
  });

  it("a result without an id is one schema/envelope finding", async () => {
    const { findings } = await validateText(captureText([...handshake(), ["s2c", { jsonrpc: "2.0", result: {} }] as Rec]));
    expect(brief(findings)).toEqual(["4 error schema/envelope"]);
  });
});

describe("text report", () => {
  it('a file-level finding shows no line number ("-"), not line 0', async () => {
    const result = await validateText(gzipSync(Buffer.from("x\n")), { inputFormat: undefined });
    const out = renderReport("text", result.findings, result.summary);
    expect(out).toMatch(/^\s+-\s+error\s+input\/unreadable/m);
    expect(out).not.toMatch(/^\s+0\s+error/m);
  });
});

describe("an initialize request that did not parse", () => {
  it("the server's InitializeResult names the session's version", async () => {
    const log = [
      `2025-06-18T10:00:00.000Z [w] [info] Message from client: {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVe`,
      `2025-06-18T10:00:00.100Z [w] [info] Message from server: {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"w","version":"1"}}}`,
      `2025-06-18T10:00:00.200Z [w] [info] Message from client: {"jsonrpc":"2.0","method":"notifications/initialized"}`,
    ].join("\n");
    const { summary } = await validateText(`${log}\n`, { inputFormat: "claude-log" });
    expect(summary.files[0]!.protocolVersions).toEqual(["2025-06-18"]);
  });
});

describe("file arguments that name no file", () => {
  const expected = "expected a capture, JSONL, Claude Desktop log or HAR file, or - for stdin";

  it("a directory, an empty name and a missing file are each one input/unreadable finding in words, not Node's ENOENT/EISDIR", async () => {
    const dir = mkdtempSync(join(tmpdir(), "validate-args-"));
    try {
      const { findings, summary } = await validateFiles([dir, "", "no-such-capture.jsonl"], {});
      expect(findings.map((f) => `${f.rule} ${f.message}`)).toEqual([
        `input/unreadable cannot read input: ${dir} is a directory: ${expected} (the files in it, e.g. ${join(dir, "*.jsonl")})`,
        `input/unreadable cannot read input: the file name is empty: ${expected}`,
        `input/unreadable cannot read input: no such file: no-such-capture.jsonl (relative to the working directory ${process.cwd()})`,
      ]);
      expect(exitCodeFor(summary)).toBe(2);
      // --schema likewise (a usage error, exit 2)
      for (const [schemaPath, message] of [
        [dir, `bad schema file: ${dir} is a directory: expected an MCP schema.json file`],
        ["", "bad schema file: the file name is empty: expected an MCP schema.json file"],
      ] as const) {
        await expect(validateFiles(["-"], { schemaPath, stdin: Readable.from([""]) })).rejects.toMatchObject({ name: "ValidateUsageError", message });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a JSON document printed over several lines", () => {
  const pretty = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;
  const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } };

  it("is one message on line 1 (a request, a server's result), not a parse error per line", async () => {
    const one = await validateText(pretty(initialize), { inputFormat: undefined });
    expect(brief(one.findings)).toEqual([]);
    expect(one.summary.messages).toBe(1);
    const result = await validateText(pretty({ jsonrpc: "2.0", id: 1, result: { tools: [{ name: "t", inputSchema: { type: "object" } }] } }), { inputFormat: undefined });
    expect(brief(result.findings)).toEqual(["1 warning input/direction-guessed"]);
    const bad = await validateText(`\r\n${pretty({ ...initialize, params: { ...initialize.params, clientInfo: { name: 5, version: "1" } } }).replace(/\n/g, "\r\n")}`, {
      inputFormat: undefined,
    });
    expect(bad.findings.map((f) => `${f.line} ${f.rule} ${f.pointer}`)).toEqual(["1 schema/request /params/clientInfo/name"]);
  });

  it("that is not valid JSON is one json/parse-error", async () => {
    const { findings } = await validateText(`${pretty(initialize)}${pretty(initialize)}`, { inputFormat: undefined });
    expect(brief(findings)).toEqual(["1 error json/parse-error"]);
  });
});
