/**
 * Issue 17: inputs as people have them. Each case is a small capture of our own in the shape
 * found in real logs (Claude Desktop logs as pasted, excerpts, per-file options).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { detectFormat, exitCodeFor, validateFiles, type Finding, type ValidateOptions } from "../../src/validate/index.js";

const dir = mkdtempSync(join(tmpdir(), "validate-real-world-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
/** Writes `text` to a fresh file named `name` and returns its path. */
function file(text: string, name = `input-${++n}.log`): string {
  const path = join(dir, `${++n}-${name}`);
  writeFileSync(path, text);
  return path;
}
const brief = (fs: Finding[]) => fs.map((f) => `${f.line} ${f.severity} ${f.rule}`);
const run = (text: string, options: ValidateOptions = {}, name?: string) => validateFiles([file(text, name)], options);

const init = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } } };
const initResult = { jsonrpc: "2.0", id: 0, result: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "s", version: "1" } } };
const initialized = { jsonrpc: "2.0", method: "notifications/initialized" };
const toolsList = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };
const toolsResult = { jsonrpc: "2.0", id: 1, result: { tools: [] } };
/** A whole, valid session as [direction, message] pairs. */
const SESSION: Array<["client" | "server", object]> = [
  ["client", init],
  ["server", initResult],
  ["client", initialized],
  ["client", toolsList],
  ["server", toolsResult],
];

/** The session as Claude Desktop log lines, with `prefix(i)` before each line's bracket groups. */
function claudeLog(line: (who: string, json: string, i: number) => string, messages = SESSION): string {
  return messages.map(([who, m], i) => line(who, JSON.stringify(m), i)).join("\n") + "\n";
}
const ts = (i: number) => `2025-06-18T10:00:0${i}.000Z`;

describe("Claude Desktop logs as people paste them", () => {
  const shapes: Array<[string, string]> = [
    ["with the timestamp", claudeLog((w, j, i) => `${ts(i)} [weather] [info] Message from ${w}: ${j} { metadata: undefined }`)],
    ["without the timestamp", claudeLog((w, j) => `[info] Message from ${w}: ${j}`)],
    ["without the timestamp, with the server name", claudeLog((w, j) => `[weather] [info] Message from ${w}: ${j}`)],
    ["indented by two spaces", claudeLog((w, j, i) => `  ${ts(i)} [weather] [info] Message from ${w}: ${j}`)],
    ["quoted with > markers", claudeLog((w, j, i) => `> ${ts(i)} [info] [weather] Message from ${w}: ${j}`)],
    ["in backticks", claudeLog((w, j, i) => `\`${ts(i)} [weather] [info] Message from ${w}: ${j}\``)],
    ["in a fenced block", "```\n" + claudeLog((w, j) => `[info] Message from ${w}: ${j}`) + "```\n"],
  ];
  for (const [what, text] of shapes) {
    it(`${what}: detected as claude-log, every message read, no finding`, async () => {
      expect(detectFormat(text, "mcp.log")).toBe("claude-log");
      const { findings, summary } = await run(text);
      expect(brief(findings)).toEqual([]);
      expect(summary.files[0]).toMatchObject({ format: "claude-log", messages: 5 });
      expect(exitCodeFor(summary)).toBe(0);
    });
  }

  it("multi-line (pretty-printed) JSON bodies, also quoted, are read whole with the line they start on", async () => {
    const pretty = (m: object) => JSON.stringify(m, null, 2);
    const text =
      SESSION.map(([w, m], i) => `${ts(i)} [weather] [info] Message from ${w}: ${pretty(m)}`).join("\n") +
      "\n" +
      // and once quoted as pasted into an issue, with a bad request in it
      `> ${ts(6)} [weather] [info] Message from client: ${pretty({ jsonrpc: "2.0", id: 2, method: "tools/call", params: {} }).split("\n").join("\n> ")}\n`;
    const { findings, summary } = await run(text);
    expect(summary.files[0]).toMatchObject({ format: "claude-log", messages: 6 });
    const startLine = text.split("\n").findIndex((l) => l.startsWith(`> ${ts(6)}`)) + 1;
    expect(findings.map((f) => `${f.line} ${f.rule}`)).toContain(`${startLine} schema/request`);
    expect(findings.every((f) => f.rule === "schema/request" || f.rule === "session/unanswered-request")).toBe(true);
  });

  it("a body the input ends inside is one parse error, not one per line", async () => {
    const text = claudeLog((w, j, i) => `${ts(i)} [weather] [info] Message from ${w}: ${j}`) + `${ts(7)} [weather] [info] Message from client: {\n  "jsonrpc": "2.0",\n`;
    const { findings } = await run(text);
    expect(brief(findings)).toEqual(["6 error json/parse-error"]);
  });

  it("the newer body-less Claude log is exactly one input/unsupported-format finding, exit 2", async () => {
    const text = [
      `${ts(0)} [weather] [info] Message from client method="initialize" id=0`,
      `${ts(1)} [weather] [info] Message from server id=0`,
      `${ts(2)} [weather] [info] Message from client method="tools/list" id=1`,
      `${ts(3)} [weather] [info] Message from client method="notifications/initialized"`,
    ].join("\n");
    expect(detectFormat(text, "mcp.log")).toBe("claude-log");
    const { findings, summary } = await run(text);
    expect(brief(findings)).toEqual(["1 error input/unsupported-format"]);
    expect(findings[0]!.message).toMatch(/no message bodies/);
    expect(exitCodeFor(summary)).toBe(2);
  });
});

/** A capture record line. */
const rec = (d: "c2s" | "s2c", m: object, t = 0) => JSON.stringify({ ts: `2025-06-18T10:00:0${t}.000Z`, dir: d, msg: m });

describe("a Claude log that has both", () => {
  it("message lines with bodies and body-less lines: the messages are checked, the body-less lines skipped", async () => {
    const text = claudeLog((w, j, i) => `${ts(i)} [weather] [info] Message from ${w}: ${j}`) + `${ts(8)} [weather] [info] Message from client method="tools/list" id=5\n`;
    const { findings, summary } = await run(text);
    expect(brief(findings)).toEqual([]);
    expect(summary.files[0]).toMatchObject({ messages: 5, skipped: 1 });
    expect(exitCodeFor(summary)).toBe(0);
  });
});

describe("excerpts (--partial)", () => {
  // From the middle of a session: answers a request before the excerpt, leaves one open at its end,
  // and the first and last lines are cut short.
  const lines = [
    rec("s2c", toolsResult).slice(20), // cut: starts mid-record
    rec("s2c", { jsonrpc: "2.0", id: 7, result: { tools: [] } }),
    rec("c2s", { jsonrpc: "2.0", id: 8, method: "tools/list" }),
    rec("s2c", { jsonrpc: "2.0", id: 8, result: { tools: [] } }),
    rec("c2s", { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "x" } }),
    rec("c2s", { jsonrpc: "2.0", id: 10, method: "tools/list" }).slice(0, 40), // cut: ends mid-record
  ];
  const text = lines.join("\n") + "\n";

  it("without --partial: initialize-first, unmatched-response, unanswered-request are errors and the summary suggests --partial", async () => {
    const { findings, summary } = await run(text, {}, "excerpt.capture.jsonl");
    expect(brief(findings)).toEqual([
      "1 error input/malformed-record",
      "2 error session/unmatched-response",
      "3 error session/initialize-first",
      "6 error input/malformed-record",
      "5 error session/unanswered-request",
    ]);
    expect(summary.files[0]!.excerpt).toBe(true);
    const { renderReport } = await import("../../src/validate/index.js");
    expect(renderReport("text", findings, summary)).toMatch(/hint: the input looks like an excerpt .* --partial/);
  });

  it("with --partial: only the cut lines, as warnings; everything else checked as usual", async () => {
    const { findings, summary } = await run(text, { partial: true }, "excerpt.capture.jsonl");
    expect(brief(findings)).toEqual(["1 warning input/cut-short", "6 warning input/cut-short"]);
    expect(summary.files[0]!.excerpt).toBeUndefined();
    expect(exitCodeFor(summary)).toBe(0);
  });

  it("with --partial a line that does not parse in the middle is still an error, and a response answered twice still unmatched", async () => {
    const mid = [lines[1], "{not json", lines[2], lines[3], lines[3]].join("\n") + "\n";
    const { findings } = await run(mid, { partial: true }, "mid.jsonl");
    expect(brief(findings)).toEqual(["2 error input/malformed-record", "5 error session/unmatched-response"]);
  });

  it("with --partial the findings are the same, in the same order, with --jobs", async () => {
    const mid = [lines[0], lines[1], "{not json", lines[2], lines[3], lines[3], lines[5]].join("\n") + "\n";
    const path = file(mid, "mid.capture.jsonl");
    const one = await validateFiles([path], { partial: true });
    expect(brief(one.findings)).toEqual(["1 warning input/cut-short", "3 error input/malformed-record", "6 error session/unmatched-response", "7 warning input/cut-short"]);
    for (const chunkBytes of [256, 4096]) expect(brief((await validateFiles([path], { partial: true, jobs: 2, chunkBytes })).findings)).toEqual(brief(one.findings));
  });

  it("a whole session gets no hint", async () => {
    const whole = SESSION.map(([w, m]) => rec(w === "client" ? "c2s" : "s2c", m)).join("\n");
    const { findings, summary } = await run(whole, {}, "whole.capture.jsonl");
    expect(brief(findings)).toEqual([]);
    expect(summary.files[0]!.excerpt).toBeUndefined();
  });
});

describe("labels", () => {
  it("a file where nothing parsed is checked against no version, and gets no excerpt hint", async () => {
    const { summary } = await run("garbage\n{oops\n", {}, "g.jsonl");
    expect(summary.files[0]!.protocolVersions).toEqual([]);
    expect(summary.files[0]!.excerpt).toBeUndefined();
  });
});

describe("the direction of plain JSONL", () => {
  it("a first message that is a response is read as server→client, with a warning", async () => {
    const text = [toolsResult, { jsonrpc: "2.0", method: "notifications/tools/list_changed" }].map((m) => JSON.stringify(m)).join("\n");
    const { findings } = await run(text, {}, "server.jsonl");
    expect(brief(findings)).toEqual(["1 warning input/direction-guessed"]);
  });

  it("a first message that is a server-only notification too; a given --direction is taken as it is", async () => {
    const text = JSON.stringify({ jsonrpc: "2.0", method: "notifications/tools/list_changed" }) + "\n";
    expect(brief((await run(text, {}, "n.jsonl")).findings)).toEqual(["1 warning input/direction-guessed"]);
    // said c2s: a client sending a server notification
    expect(brief((await run(text, { direction: "c2s" }, "n.jsonl")).findings)).toEqual(["1 error session/initialize-first", "1 error session/wrong-direction"]);
  });

  it("the same with --jobs, and with the format given no direction is guessed (c2s, or the one given)", async () => {
    const text = [toolsResult, { jsonrpc: "2.0", method: "notifications/tools/list_changed" }].map((m) => JSON.stringify(m)).join("\n");
    const path = file(text, "s.jsonl");
    const one = await validateFiles([path], {});
    const many = await validateFiles([path], { jobs: 2, chunkBytes: 256 });
    expect(brief(many.findings)).toEqual(brief(one.findings));
    for (const jobs of [1, 2]) {
      const forced = await validateFiles([path], { jobs, chunkBytes: 256, inputFormat: "jsonl" });
      expect(forced.findings.map((f) => f.rule)).not.toContain("input/direction-guessed");
      expect(forced.findings.map((f) => f.rule)).toContain("session/wrong-direction");
      const said = await validateFiles([path], { jobs, chunkBytes: 256, perFile: [{ inputFormat: "jsonl", direction: "s2c" }] });
      expect(brief(said.findings)).toEqual([]);
    }
  });

  it("per-file options replace the run-wide ones for that file only", async () => {
    const server = file(JSON.stringify({ jsonrpc: "2.0", method: "notifications/tools/list_changed" }) + "\n", "a.jsonl");
    const client = file(JSON.stringify(init) + "\n", "b.jsonl");
    const { findings } = await validateFiles([server, client], { direction: "c2s", perFile: [{ direction: "s2c" }, undefined] });
    expect(brief(findings)).toEqual([]);
    const swapped = await validateFiles([server, client], { perFile: [{ direction: "c2s" }, { direction: "s2c" }] });
    expect(swapped.findings.map((f) => `${f.file === server ? "a" : "b"} ${f.rule}`)).toEqual([
      "a session/initialize-first",
      "a session/wrong-direction",
      "b session/wrong-direction", // (initialize, sent server→client: a server request the stateless default lacks makes the session initialize-based)
    ]);
  });
});
