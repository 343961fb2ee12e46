/**
 * Reporters of the offline validator: text (grouping, colour switch), JSON lines, JUnit XML and
 * SARIF 2.1.0, fed with findings built here (no schema needed).
 */
import { describe, expect, it } from "vitest";
import { RULE_LIST, createReporter, renderReport, summarize, type FileSummary, type Finding } from "../../src/validate/index.js";
import { artifactUri } from "../../src/validate/report/sarif.js";

const fileSummary = (file: string, errors: number, warnings: number, extra: Partial<FileSummary> = {}): FileSummary => ({
  file,
  format: "capture",
  bytes: 1234,
  lines: 10,
  messages: 9,
  skipped: 0,
  errors,
  warnings,
  protocolVersions: ["2025-06-18"],
  sessions: 1,
  ...extra,
});

const findings: Finding[] = [
  { file: "a.jsonl", line: 7, direction: "s2c", id: 9, rule: "session/unmatched-response", severity: "error", message: "response id 9 matches no client→server request" },
  {
    file: "a.jsonl",
    line: 3,
    direction: "c2s",
    id: 1,
    method: "tools/call",
    rule: "schema/request",
    severity: "error",
    pointer: "/params/name",
    message: 'CallToolRequest: <must> be "string" & more',
  },
  { file: "a.jsonl", line: 5, direction: "c2s", method: "x/y", rule: "schema/unknown-method", severity: "warning", message: "method x/y is not defined" },
  { file: "dir/b c.har", line: 2, direction: "s2c", rule: "schema/result", severity: "error", location: "response event 1", message: "bad \u0001 control" },
];
const files = [fileSummary("a.jsonl", 2, 1), fileSummary("dir/b c.har", 1, 0, { format: "har" }), fileSummary("clean.jsonl", 0, 0)];
const summary = summarize(files, 12.5);

/** Minimal XML 1.0 well-formedness check: balanced tags, quoted attributes, escaped text. */
function assertWellFormedXml(xml: string): void {
  let rest = xml.replace(/^<\?xml version="1\.0" encoding="UTF-8"\?>\n/, "");
  const stack: string[] = [];
  let roots = 0;
  const entity = /&(?:amp|lt|gt|quot|apos);/g;
  while (rest.length > 0) {
    const tag = /^<(\/?)([A-Za-z_][\w.-]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(\/?)>/.exec(rest);
    if (tag !== null) {
      const [all, close, name, attrs, selfClose] = tag;
      expect(attrs!.replace(entity, "")).not.toMatch(/&/);
      if (close === "/") expect(stack.pop()).toBe(name);
      else if (selfClose !== "/") {
        if (stack.length === 0) roots++;
        stack.push(name!);
      } else if (stack.length === 0) roots++;
      rest = rest.slice(all.length);
      continue;
    }
    const text = /^[^<]+/.exec(rest);
    expect(text, `unexpected markup at: ${rest.slice(0, 40)}`).not.toBeNull();
    expect(text![0].replace(entity, "")).not.toMatch(/&/);
    // eslint-disable-next-line no-control-regex -- the assertion: no raw control character in the HTML
    expect(text![0]).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/);
    if (stack.length === 0) expect(text![0].trim()).toBe("");
    rest = rest.slice(text![0].length);
  }
  expect(stack).toEqual([]);
  expect(roots).toBe(1);
}

describe("text reporter", () => {
  it("groups findings by file, sorted by line, with a summary line and no colour by default", () => {
    const out = renderReport("text", findings, summary);
    const lines = out.split("\n");
    const a = lines.findIndex((l) => l.startsWith("a.jsonl"));
    const b = lines.findIndex((l) => l.startsWith("dir/b c.har"));
    expect(a).toBeGreaterThanOrEqual(0);
    expect(b).toBeGreaterThan(a);
    const aLines = lines.slice(a + 1, b).filter((l) => l.trim() !== "");
    expect(aLines.map((l) => l.trim().split(/\s+/)[0])).toEqual(["3", "5", "7"]);
    expect(aLines[0]).toContain("schema/request");
    expect(aLines[0]).toContain("(at /params/name)");
    expect(out).toContain("(response event 1)");
    expect(out).toMatch(/clean\.jsonl .* ok/);
    expect(out).toMatch(/3 errors, 1 warning in 3 files \(27 messages/);
    expect(out).not.toContain("\u001b[");
  });

  it("escapes every control character (C0, DEL, C1) from the input in every printed field", () => {
    const evil = "\u001b]0;pwned\u0007\u001b[2Jevil\u007f\u009b\n";
    const f: Finding = {
      file: `e${evil}.jsonl`,
      line: 1,
      direction: "c2s",
      method: evil,
      rule: "schema/unknown-method",
      severity: "warning",
      pointer: `/params/${evil}`,
      session: evil,
      location: evil,
      message: `method ${evil} is not defined; not valid JSON (Unexpected token '\u001b', "{"a":\u001b[31mRED")`,
    };
    for (const color of [false, true]) {
      const out = renderReport("text", [f], summarize([fileSummary(f.file, 0, 1, { protocolVersions: [evil] })], 1), { color });
      // Only the reporter's own colour codes (ESC [ digits m) may remain, and no stray line breaks.
      // eslint-disable-next-line no-control-regex -- ESC starts the colour codes being removed
      const stripped = out.replace(/\u001b\[[0-9;]*m/g, "");
      // eslint-disable-next-line no-control-regex -- the assertion: no raw control character in the text
      expect(stripped).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
      expect(stripped).toContain("\\u001b]0;pwned\\u0007\\u001b[2Jevil\\u007f\\u009b\\u000a");
      expect(stripped.split("\n").filter((l) => l.includes("schema/unknown-method"))).toHaveLength(1);
    }
  });

  it("colours severities only when asked", () => {
    const out = renderReport("text", findings, summary, { color: true });
    expect(out).toContain("\u001b[31merror");
    expect(out).toContain("\u001b[33mwarning");
  });

  it("streams: prints a file's block only when the file is done", () => {
    const parts: string[] = [];
    const r = createReporter("text", { write: (s) => void parts.push(s) });
    r.finding(findings[0]!);
    expect(parts).toEqual([]);
    r.fileDone(files[0]!);
    expect(parts.join("")).toContain("session/unmatched-response");
  });
});

describe("json reporter", () => {
  it("writes one parseable JSON object per finding per line, then a summary object", () => {
    const out = renderReport("json", findings, summary);
    const objs = out
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(objs).toHaveLength(findings.length + 1);
    expect(objs.slice(0, -1).every((o) => o.type === "finding")).toBe(true);
    expect(objs[0]).toMatchObject({ file: "a.jsonl", line: 7, rule: "session/unmatched-response", severity: "error", id: 9 });
    expect(objs.at(-1)).toMatchObject({ type: "summary", errors: 3, warnings: 1, exitCode: 1, messages: 27 });
    expect((objs.at(-1)!.files as unknown[]).length).toBe(3);
  });

  it("writes findings immediately (streaming)", () => {
    const parts: string[] = [];
    const r = createReporter("json", { write: (s) => void parts.push(s) });
    r.finding(findings[0]!);
    expect(parts).toHaveLength(1);
  });
});

describe("junit reporter", () => {
  const xml = renderReport("junit", findings, summary);

  it("is well-formed XML even with markup and control characters in messages", () => {
    assertWellFormedXml(xml);
    expect(xml).toContain("&lt;must&gt; be &quot;string&quot; &amp; more");
  });

  it("has one suite per file, one test per rule, and failure counts per rule with errors", () => {
    const suites = [...xml.matchAll(/<testsuite name="([^"]*)" tests="(\d+)" failures="(\d+)"/g)].map((m) => [m[1], Number(m[2]), Number(m[3])]);
    expect(suites).toEqual([
      ["a.jsonl", RULE_LIST.length, 2],
      ["dir/b c.har", RULE_LIST.length, 1],
      ["clean.jsonl", RULE_LIST.length, 0],
    ]);
    expect(xml).toMatch(new RegExp(`<testsuites [^>]*tests="${3 * RULE_LIST.length}" failures="3"`));
    expect((xml.match(/<failure /g) ?? []).length).toBe(3);
    expect(xml).toMatch(/name="schema\/unknown-method" time="0"><system-out>warning line 5/);
  });
});

describe("sarif reporter", () => {
  const log = JSON.parse(renderReport("sarif", findings, summary)) as {
    version: string;
    $schema: string;
    runs: Array<{
      tool: { driver: { name: string; rules: Array<{ id: string; defaultConfiguration: { level: string } }> } };
      results: Array<{
        ruleId: string;
        ruleIndex: number;
        level: string;
        message: { text: string };
        locations: Array<{ physicalLocation: { artifactLocation: { uri: string }; region?: { startLine: number } } }>;
        properties?: Record<string, unknown>;
      }>;
    }>;
  };

  it("is SARIF 2.1.0 with the rule catalogue and one result per finding", () => {
    expect(log.version).toBe("2.1.0");
    expect(log.$schema).toMatch(/sarif-2\.1\.0/);
    expect(log.runs).toHaveLength(1);
    const run = log.runs[0]!;
    expect(run.tool.driver.rules.map((r) => r.id)).toEqual(RULE_LIST.map((r) => r.id));
    expect(run.results).toHaveLength(findings.length);
    for (const r of run.results) expect(run.tool.driver.rules[r.ruleIndex]!.id).toBe(r.ruleId);
  });

  it("locates line findings by region and HAR findings by entry property", () => {
    const [first, , , har] = log.runs[0]!.results;
    expect(first).toMatchObject({ ruleId: "session/unmatched-response", level: "error" });
    expect(first!.locations[0]!.physicalLocation).toEqual({ artifactLocation: { uri: "a.jsonl" }, region: { startLine: 7 } });
    expect(har!.locations[0]!.physicalLocation.region).toBeUndefined();
    expect(har!.locations[0]!.physicalLocation.artifactLocation.uri).toBe("dir/b%20c.har");
    expect(har!.properties).toMatchObject({ location: "response event 1", harEntry: 2, direction: "s2c" });
  });

  it("makes URIs for stdin and absolute paths", () => {
    expect(artifactUri("-")).toBe("stdin");
    expect(artifactUri("/tmp/a b.log")).toBe("file:///tmp/a%20b.log");
  });
});
