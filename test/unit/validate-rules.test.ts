/**
 * Session and per-message rules of the offline validator: a capture per rule that breaks exactly
 * that rule (asserting rule id, line and severity), and one that breaks none.
 *
 * The rule cases use the official 2025-06-18 schema from ../shared/mcp-schema, compiled by the
 * MCP facade's `compileValidatorsFromSchema` (the built-in schemas cover only part of MCP, and
 * these captures use sampling, elicitation, logging, roots...). They skip when ../shared is
 * absent. A last group runs the built-in validators (`validatorsFor`) with no injection.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { compileValidatorsFromSchema, type ProtocolValidators } from "../../src/mcp/validation.js";
import { exitCodeFor, usableJobs, validateFiles, type Finding, type ValidateOptions } from "../../src/validate/index.js";
import { requireShared, sharedPath, skipTitle } from "../helpers/requires.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/validate/", import.meta.url));
const SHARED = sharedPath("mcp-schema");
const V = "2025-06-18";
const sharedMissing = requireShared(`mcp-schema/${V}/schema.json`);

const compiled = new Map<string, ProtocolValidators>();
/** Official schema of `version`, compiled once per test file by the real facade. */
function official(version: string): ProtocolValidators {
  let v = compiled.get(version);
  if (v === undefined) {
    v = compileValidatorsFromSchema(JSON.parse(readFileSync(join(SHARED, version, "schema.json"), "utf8")) as object, version);
    compiled.set(version, v);
  }
  return v;
}
/** Resolver over the official draft-07 schemas (2024-11-05, 2025-03-26, 2025-06-18). */
const resolveOfficial = (version: string): ProtocolValidators | undefined => (["2024-11-05", "2025-03-26", V].includes(version) ? official(version) : undefined);
const validators = { resolve: resolveOfficial, latest: V };

type Dir = "c2s" | "s2c";
type Rec = [Dir, unknown] | [Dir, { raw: string }, "raw"];

const init = (id: number | string = 0, caps: object = { roots: { listChanged: true }, sampling: {} }): Rec => [
  "c2s",
  { jsonrpc: "2.0", id, method: "initialize", params: { protocolVersion: V, capabilities: caps, clientInfo: { name: "c", version: "1" } } },
];
const initResult = (id: number | string = 0, caps: object = { tools: { listChanged: true }, logging: {} }, version = V): Rec => [
  "s2c",
  { jsonrpc: "2.0", id, result: { protocolVersion: version, capabilities: caps, serverInfo: { name: "s", version: "1" } } },
];
const initialized: Rec = ["c2s", { jsonrpc: "2.0", method: "notifications/initialized" }];
const handshake: Rec[] = [init(), initResult(), initialized];
const req = (dir: Dir, id: number | string, method: string, params?: object): Rec => [dir, { jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }];
const note = (dir: Dir, method: string, params?: object): Rec => [dir, { jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) }];
const ok = (dir: Dir, id: number | string | null, result: object = {}): Rec => [dir, { jsonrpc: "2.0", id, result }];
const err = (dir: Dir, id: number | string | null, code: unknown = -32601, message = "nope"): Rec => [dir, { jsonrpc: "2.0", id, error: { code, message } }];

function captureText(records: Rec[]): string {
  return records
    .map((r) =>
      r[2] === "raw"
        ? JSON.stringify({ ts: "2025-06-18T10:00:00.000Z", dir: r[0], raw: (r[1] as { raw: string }).raw })
        : JSON.stringify({ ts: "2025-06-18T10:00:00.000Z", dir: r[0], msg: r[1] }),
    )
    .join("\n");
}

async function check(records: Rec[] | string, options: ValidateOptions = {}): Promise<Finding[]> {
  const text = typeof records === "string" ? records : captureText(records);
  const { findings } = await validateFiles(["-"], { validators, inputFormat: "capture", stdin: Readable.from([Buffer.from(text)]), ...options });
  return findings;
}

const brief = (fs: Finding[]) => fs.map((f) => `${f.line} ${f.severity} ${f.rule}`);

describe.skipIf(sharedMissing !== undefined)(skipTitle("validator rules against the official schema", sharedMissing), () => {
  it("reports nothing for a conforming capture fixture", async () => {
    const { findings, summary } = await validateFiles([`${FIXTURES}good.capture.jsonl`], { validators });
    expect(brief(findings)).toEqual([]);
    expect(summary.files[0]!.format).toBe("capture");
    expect(summary.messages).toBe(19);
    expect(exitCodeFor(summary)).toBe(0);
  });

  // [name, records, expected "line severity rule" list, extra options]
  const cases: Array<[string, Rec[], string[], ValidateOptions?]> = [
    ["json/parse-error", [...handshake, ["c2s", { raw: '{"jsonrpc":"2.0",' }, "raw"]], ["4 error json/parse-error"]],
    ["jsonrpc/invalid (not an object)", [...handshake, ["c2s", 42]], ["4 error jsonrpc/invalid"]],
    ["jsonrpc/invalid (no method, result or error)", [...handshake, ["c2s", { jsonrpc: "2.0", id: 5 }]], ["4 error jsonrpc/invalid"]],
    ["jsonrpc/kind-mismatch (request method without id)", [...handshake, note("c2s", "ping")], ["4 error jsonrpc/kind-mismatch"]],
    ["schema/request", [...handshake, req("c2s", 1, "tools/call", { arguments: {} }), ok("s2c", 1, { content: [] })], ["4 error schema/request"]],
    ["schema/notification", [...handshake, note("c2s", "notifications/cancelled", { reason: "x" })], ["4 error schema/notification"]],
    ["schema/result", [...handshake, req("c2s", 1, "tools/list"), ok("s2c", 1, { tools: "none" })], ["5 error schema/result"]],
    ["schema/error-response", [...handshake, req("c2s", 1, "tools/list"), err("s2c", 1, "bad")], ["5 error schema/error-response"]],
    ["schema/unknown-method", [...handshake, req("c2s", 1, "custom/thing"), ok("s2c", 1)], ["4 warning schema/unknown-method"]],
    ["session/wrong-direction", [...handshake, req("c2s", 1, "roots/list"), err("s2c", 1)], ["4 error session/wrong-direction"]],
    ["session/initialize-first", [req("c2s", 7, "ping"), ok("s2c", 7), ...handshake], ["1 error session/initialize-first"]],
    ["session/premature-request", [init(), req("c2s", 1, "tools/list"), initResult(), initialized, ok("s2c", 1, { tools: [] })], ["2 warning session/premature-request"]],
    [
      "session/premature-request (server)",
      [init(), initResult(), req("s2c", "r", "roots/list"), initialized, ok("c2s", "r", { roots: [] })],
      ["3 warning session/premature-request"],
    ],
    ["session/initialized-after-result (too early)", [init(), initialized, initResult()], ["2 error session/initialized-after-result"]],
    ["session/initialized-after-result (missing)", [init(), initResult(), req("c2s", 1, "tools/list"), ok("s2c", 1, { tools: [] })], ["3 error session/initialized-after-result"]],
    ["session/reinitialize", [...handshake, init(10), initResult(10), initialized], ["4 warning session/reinitialize"]],
    [
      "session/batch-not-allowed",
      [
        ...handshake,
        [
          "c2s",
          [
            { jsonrpc: "2.0", id: 5, method: "ping" },
            { jsonrpc: "2.0", id: 6, method: "ping" },
          ],
        ],
        ok("s2c", 5),
        ok("s2c", 6),
      ],
      ["4 error session/batch-not-allowed"],
    ],
    [
      "session/duplicate-request-id",
      [...handshake, req("c2s", 1, "tools/list"), req("c2s", 1, "tools/list"), ok("s2c", 1, { tools: [] })],
      ["5 error session/duplicate-request-id"],
    ],
    ["session/reused-request-id", [...handshake, req("c2s", 1, "ping"), ok("s2c", 1), req("c2s", 1, "ping"), ok("s2c", 1)], ["6 error session/reused-request-id"]],
    ["session/unmatched-response", [...handshake, ok("s2c", 99)], ["4 error session/unmatched-response"]],
    ["session/unanswered-request", [...handshake, req("c2s", 7, "tools/list")], ["4 error session/unanswered-request"]],
    ["session/missing-capability (server)", [...handshake, req("c2s", 5, "prompts/list"), ok("s2c", 5, { prompts: [] })], ["4 warning session/missing-capability"]],
    [
      "session/missing-capability (client)",
      [
        init(0, {}),
        initResult(),
        initialized,
        req("s2c", "e", "elicitation/create", { message: "m", requestedSchema: { type: "object", properties: {} } }),
        ok("c2s", "e", { action: "decline" }),
      ],
      ["4 warning session/missing-capability"],
    ],
    ["session/unadvertised-notification", [...handshake, note("s2c", "notifications/resources/list_changed")], ["4 warning session/unadvertised-notification"]],
    [
      "session/answered-after-cancel",
      [...handshake, req("c2s", 3, "tools/list"), note("c2s", "notifications/cancelled", { requestId: 3 }), ok("s2c", 3, { tools: [] })],
      ["6 warning session/answered-after-cancel"],
    ],
    ["session/cancel-initialize", [init(), note("c2s", "notifications/cancelled", { requestId: 0 }), initResult(), initialized], ["2 error session/cancel-initialize"]],
    ["session/unknown-progress-token", [...handshake, note("s2c", "notifications/progress", { progressToken: "nope", progress: 1 })], ["4 error session/unknown-progress-token"]],
    [
      "session/progress-not-increasing",
      [
        ...handshake,
        req("c2s", 1, "tools/list", { _meta: { progressToken: 9 } }),
        note("s2c", "notifications/progress", { progressToken: 9, progress: 2 }),
        note("s2c", "notifications/progress", { progressToken: 9, progress: 2 }),
        ok("s2c", 1, { tools: [] }),
      ],
      ["6 error session/progress-not-increasing"],
    ],
    ["session/version-mismatch", [...handshake, req("c2s", 1, "ping"), ok("s2c", 1)], ["2 warning session/version-mismatch"], { protocolVersion: "2025-03-26" }],
    ["session/unsupported-version", [init(), initResult(0, { tools: {} }, "2099-01-01"), initialized], ["2 warning session/unsupported-version"]],
  ];

  for (const [name, records, expected, options] of cases) {
    it(`breaks only ${name}`, async () => {
      expect(brief(await check(records, options))).toEqual(expected);
    });
  }

  it("a response to a notification is reported (the envelope schema also rejects its null id)", async () => {
    const findings = await check([...handshake, ok("s2c", null)]);
    expect(findings.map((f) => f.rule)).toContain("session/response-to-notification");
    const f = findings.find((x) => x.rule === "session/response-to-notification")!;
    expect([f.line, f.severity, f.direction]).toEqual([4, "error", "s2c"]);
    expect(new Set(findings.map((x) => x.rule))).toEqual(new Set(["session/response-to-notification", "schema/envelope"]));
  });

  it("a notification method sent with an id is a request (JSON-RPC 2.0 §4): one kind-mismatch, and the peer's answer to it is fine", async () => {
    const findings = await check([
      ...handshake,
      req("c2s", 8, "notifications/roots/list_changed"),
      err("s2c", 8, -32600, "Invalid Request"),
      req("c2s", 9, "notifications/roots/list_changed"),
      ok("s2c", 9),
    ]);
    expect(brief(findings)).toEqual(["4 error jsonrpc/kind-mismatch", "6 error jsonrpc/kind-mismatch"]);
  });

  it("notifications/initialized sent with an id: one kind-mismatch, no self-contradicting lifecycle finding, and it counts as sent", async () => {
    const findings = await check([init(), initResult(), req("c2s", 5, "notifications/initialized"), req("c2s", 1, "tools/list"), ok("s2c", 1, { tools: [] })]);
    expect(brief(findings)).toEqual(["3 error jsonrpc/kind-mismatch"]);
    expect(findings[0]!.message).not.toMatch(/without sending notifications\/initialized first/);
  });

  it("initialize sent without an id is a kind-mismatch (as ping without an id is)", async () => {
    const findings = await check([
      ["c2s", { jsonrpc: "2.0", method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } } }],
    ]);
    expect(findings.map((f) => f.rule)).toContain("jsonrpc/kind-mismatch");
  });

  it("a request after the initialize result but before notifications/initialized is flagged even after a stray initialized before initialize", async () => {
    const findings = await check([initialized, init(), initResult(), req("c2s", 1, "tools/list"), ok("s2c", 1, { tools: [] })]);
    expect(brief(findings)).toEqual(["1 error session/initialize-first", "4 error session/initialized-after-result"]);
  });

  it("params: null is one finding (the envelope's), not also a schema/request one at the same place", async () => {
    const findings = await check([...handshake, ["c2s", { jsonrpc: "2.0", id: 1, method: "tools/list", params: null }], ok("s2c", 1, { tools: [] })]);
    const at = findings.map((f) => `${f.rule} ${f.pointer}`);
    expect(new Set(at).size).toBe(at.length);
    expect(findings.filter((f) => f.pointer === "/params")).toHaveLength(1);
  });

  it("a null-id error answering an unparseable line is accepted by the session rules", async () => {
    const findings = await check([...handshake, ["c2s", { raw: "{oops" }, "raw"], err("s2c", null, -32700, "Parse error")]);
    expect(findings.map((f) => f.rule).filter((r) => r.startsWith("session/"))).toEqual([]);
    expect(findings[0]!.rule).toBe("json/parse-error");
  });

  it("reports the envelope schema for an id of the wrong type", async () => {
    const findings = await check([...handshake, ["c2s", { jsonrpc: "2.0", id: { x: 1 }, method: "ping" }]]);
    expect(findings.length).toBeGreaterThan(0);
    expect(new Set(findings.map((f) => `${f.line} ${f.rule}`))).toEqual(new Set(["4 schema/envelope"]));
    expect(findings[0]!.pointer).toBe("/id");
  });

  it("reports a wrong jsonrpc version as jsonrpc/invalid", async () => {
    const findings = await check([...handshake, ["c2s", { jsonrpc: "1.0", id: 1, method: "ping" }], ok("s2c", 1)]);
    expect(brief(findings)).toEqual(["4 error jsonrpc/invalid"]);
    expect(findings[0]!.pointer).toBe("/jsonrpc");
  });

  it("allows batches in 2025-03-26 but never initialize inside one", async () => {
    const v = "2025-03-26";
    const findings = await check([
      ["c2s", [{ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: v, capabilities: {}, clientInfo: { name: "c", version: "1" } } }]],
      ["s2c", { jsonrpc: "2.0", id: 0, result: { protocolVersion: v, capabilities: {}, serverInfo: { name: "s", version: "1" } } }],
      initialized,
      [
        "c2s",
        [
          { jsonrpc: "2.0", id: 1, method: "ping" },
          { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 99 } },
        ],
      ],
      ["s2c", [{ jsonrpc: "2.0", id: 1, result: {} }]],
    ]);
    expect(brief(findings)).toEqual(["1 error session/batch-not-allowed"]);
    expect(findings[0]!.pointer).toBe("/0");
  });

  it("judges batches by the negotiated version even when its validators are missing", async () => {
    const v = "2025-03-26";
    const only0618 = { resolve: (x: string) => (x === V ? official(V) : undefined), latest: V };
    const findings = await check(
      [
        ["c2s", { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: v, capabilities: {}, clientInfo: { name: "c", version: "1" } } }],
        ["s2c", { jsonrpc: "2.0", id: 0, result: { protocolVersion: v, capabilities: {}, serverInfo: { name: "s", version: "1" } } }],
        initialized,
        ["c2s", [{ jsonrpc: "2.0", id: 1, method: "ping" }]],
        ok("s2c", 1),
      ],
      { validators: only0618 },
    );
    expect(brief(findings)).toEqual(["2 warning session/unsupported-version"]);
  });

  it("points schema issues inside batch elements and results at the message", async () => {
    const findings = await check([...handshake, req("c2s", 1, "tools/list"), ok("s2c", 1, { tools: [{ name: 5, inputSchema: { type: "object" } }] })]);
    expect(findings.length).toBeGreaterThan(0);
    expect(findings.every((f) => f.rule === "schema/result" && f.pointer?.startsWith("/result/tools/0"))).toBe(true);
    expect(findings[0]!.method).toBe("tools/list");
  });

  it("caps schema issues per message", async () => {
    const base = official(V);
    const noisy: ProtocolValidators = {
      version: V,
      messageDefinition: (d, m) => base.messageDefinition(d, m),
      has: (n) => base.has(n),
      validate: (def, data) =>
        def === "ListToolsResult"
          ? Array.from({ length: 30 }, (_, i) => ({ pointer: `/tools/${i}`, reason: "is bad", keyword: "type", definition: def }))
          : base.validate(def, data),
    };
    const findings = await check([...handshake, req("c2s", 1, "tools/list"), ok("s2c", 1, { tools: [] })], {
      maxIssuesPerMessage: 3,
      validators: { resolve: () => noisy, latest: V },
    });
    expect(findings).toHaveLength(3);
    expect(findings[2]!.message).toMatch(/more issues/);
  });

  it("reports malformed capture records and over-long lines as input problems", async () => {
    const text = `${captureText(handshake)}\n{"dir":"sideways","msg":{}}\nnot json\n${JSON.stringify({ dir: "c2s", msg: { jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(500) } } })}`;
    const findings = await check(text, { maxLineBytes: 300 });
    expect(brief(findings)).toEqual(["4 error input/malformed-record", "5 error input/malformed-record", "6 error input/line-too-long"]);
  });

  it("gives exit code 2 for an unreadable file and still checks the others", async () => {
    const { findings, summary } = await validateFiles([`${FIXTURES}does-not-exist.jsonl`, `${FIXTURES}good.capture.jsonl`], { validators });
    expect(brief(findings)).toEqual(["0 error input/unreadable"]);
    expect(summary.unreadable).toBe(1);
    expect(summary.files[1]!.messages).toBe(19);
    expect(exitCodeFor(summary)).toBe(2);
  });

  it("gives exit code 1 when errors are found and 0 with warnings only", async () => {
    const errors = await validateFiles(["-"], { validators, stdin: Readable.from([captureText([...handshake, ok("s2c", 42)])]) });
    expect(exitCodeFor(errors.summary)).toBe(1);
    const warnings = await validateFiles(["-"], { validators, stdin: Readable.from([captureText([...handshake, req("c2s", 5, "prompts/list"), ok("s2c", 5, { prompts: [] })])]) });
    expect(warnings.summary.warnings).toBe(1);
    expect(exitCodeFor(warnings.summary)).toBe(0);
  });

  it("rejects an unsupported --protocol-version before reading anything", async () => {
    await expect(validateFiles(["-"], { validators, protocolVersion: "1999-01-01" })).rejects.toThrow(/unsupported protocol version/);
  });
});

describe("validator with the built-in schemas (no injected validators)", () => {
  it("finds no errors in the conforming fixture; methods outside the built-in schemas are only unknown-method warnings", async () => {
    const { findings, summary } = await validateFiles([`${FIXTURES}good.capture.jsonl`]);
    expect(findings.filter((f) => f.severity === "error")).toEqual([]);
    expect(findings.every((f) => f.rule === "schema/unknown-method")).toBe(true);
    expect(summary.files[0]!.protocolVersions).toEqual([V]);
    expect(exitCodeFor(summary)).toBe(0);
  });

  it("checks tools/call params and results against the generated validators", async () => {
    const findings = await check([...handshake, req("c2s", 1, "tools/call", { arguments: {} }), ok("s2c", 1, { content: "x" })], {
      validators: undefined,
    });
    expect(brief(findings)).toEqual(expect.arrayContaining(["4 error schema/request", "5 error schema/result"]));
    expect(findings.every((f) => f.rule === "schema/request" || f.rule === "schema/result")).toBe(true);
  });

  it("rejects an unsupported --protocol-version with a usage error", async () => {
    await expect(validateFiles(["-"], { protocolVersion: "1999-01-01" })).rejects.toMatchObject({ name: "ValidateUsageError" });
  });

  it("rejects an unreadable --schema file with a usage error", async () => {
    await expect(validateFiles(["-"], { schemaPath: `${FIXTURES}no-such-schema.json` })).rejects.toMatchObject({ name: "ValidateUsageError" });
  });
});

describe.skipIf(sharedMissing !== undefined)(skipTitle("--schema FILE", sharedMissing), () => {
  it("compiles the schema at run time and checks against it", async () => {
    const { findings } = await validateFiles([`${FIXTURES}good.capture.jsonl`], { schemaPath: join(SHARED, V, "schema.json") });
    expect(brief(findings)).toEqual([]);
  });

  it("uses the given schema for the negotiated version (2025-03-26 allows batches)", async () => {
    const v = "2025-03-26";
    const text = captureText([
      ["c2s", { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: v, capabilities: {}, clientInfo: { name: "c", version: "1" } } }],
      ["s2c", { jsonrpc: "2.0", id: 0, result: { protocolVersion: v, capabilities: {}, serverInfo: { name: "s", version: "1" } } }],
      initialized,
      ["c2s", [{ jsonrpc: "2.0", id: 1, method: "ping" }]],
      ["s2c", [{ jsonrpc: "2.0", id: 1, result: {} }]],
    ]);
    const { findings } = await validateFiles(["-"], { schemaPath: join(SHARED, v, "schema.json"), stdin: Readable.from([text]) });
    expect(brief(findings)).toEqual([]);
  });
});

// --- stateless (2026-07-28) sessions, built-in validators ------------------------------------

const V26 = "2026-07-28";
const meta26 = (version = V26): object => ({
  _meta: { "io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientCapabilities": {} },
});
const serverMeta = { "io.modelcontextprotocol/serverInfo": { name: "s", version: "1" } };
const discover = (id: number | string = "d"): Rec => req("c2s", id, "server/discover", meta26());
const discoverResult = (id: number | string = "d", caps: object = { tools: {} }): Rec =>
  ok("s2c", id, { resultType: "complete", supportedVersions: [V26], capabilities: caps, _meta: serverMeta, ttlMs: 0, cacheScope: "private" });
const toolsList26 = (id: number): Rec => req("c2s", id, "tools/list", meta26());
const toolsResult26 = (id: number): Rec => ok("s2c", id, { resultType: "complete", tools: [], _meta: serverMeta, ttlMs: 0, cacheScope: "private" });
const promptsList26 = (id: number): Rec => req("c2s", id, "prompts/list", meta26());
const promptsResult26 = (id: number): Rec => ok("s2c", id, { resultType: "complete", prompts: [], _meta: serverMeta, ttlMs: 0, cacheScope: "private" });
const builtin = { validators: undefined } as const;

describe("stateless 2026-07-28 sessions (built-in validators)", () => {
  it("a session that starts with server/discover needs no initialize", async () => {
    const { findings, summary } = await validateFiles(["-"], {
      inputFormat: "capture",
      stdin: Readable.from([captureText([discover(), discoverResult(), toolsList26(1), toolsResult26(1)])]),
    });
    expect(brief(findings)).toEqual([]);
    expect(summary.files[0]!.protocolVersions).toEqual([V26]);
    expect(exitCodeFor(summary)).toBe(0);
  });

  it("a tools/call result is checked against the union the schema declares (InputRequiredResult | CallToolResult)", async () => {
    const call = req("c2s", 3, "tools/call", { name: "book", arguments: {}, ...meta26() });
    const inputRequired = ok("s2c", 3, { resultType: "input_required", requestState: "opaque", _meta: serverMeta });
    const records = [discover(), discoverResult(), call, inputRequired];
    expect(brief(await check(records, builtin))).toEqual([]);
    // the same with the official file given as --schema
    if (requireShared(`mcp-schema/${V26}/schema.json`) === undefined)
      expect(brief(await check(records, { validators: undefined, schemaPath: join(SHARED, V26, "schema.json") }))).toEqual([]);
    // a result that is neither is still reported, inside its result
    const neither = await check([discover(), discoverResult(), call, ok("s2c", 3, { content: [], _meta: serverMeta })], builtin);
    expect(neither.map((f) => `${f.rule} ${f.pointer}`)).toEqual(["schema/envelope /result"]); // one defect, one finding
    expect(neither.length).toBeGreaterThan(0);
    expect(neither.every((f) => f.pointer?.startsWith("/result"))).toBe(true);
  });

  it("initialize sent without an id is a kind-mismatch with the built-in (stateless-default) validators", async () => {
    const initNoId: Rec = ["c2s", { jsonrpc: "2.0", method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } } }];
    const findings = await check([initNoId], builtin);
    expect(findings.map((f) => f.rule)).toContain("jsonrpc/kind-mismatch");
    expect(findings.map((f) => f.rule)).not.toContain("schema/unknown-method");
  });

  it("a 2024-11-05 session is checked, and labelled, as 2024-11-05 (never 'not defined for 2026-07-28')", async () => {
    const v = "2024-11-05";
    const { findings, summary } = await validateFiles(["-"], {
      inputFormat: "capture",
      stdin: Readable.from([
        captureText([
          ["c2s", { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: v, capabilities: {}, clientInfo: { name: "c", version: "1" } } }],
          ["s2c", { jsonrpc: "2.0", id: 0, result: { protocolVersion: v, capabilities: { tools: {} }, serverInfo: { name: "s", version: "1" } } }],
          initialized,
          req("c2s", 1, "tools/list"),
          ok("s2c", 1, { tools: [] }),
          ["c2s", { jsonrpc: "2.0", id: 2, method: "initialize", params: { protocolVersion: v, capabilities: {}, clientInfo: { name: "c", version: "1" } } }],
        ]),
      ]),
    });
    expect(findings.map((f) => f.message).join("\n")).not.toMatch(/2026-07-28/);
    expect(summary.files[0]!.protocolVersions).toEqual([v]);
  });

  it("a session of plain requests carrying the 2026-07-28 _meta version needs no initialize", async () => {
    expect(brief(await check([toolsList26(1), toolsResult26(1), toolsList26(2), toolsResult26(2)], builtin))).toEqual([]);
  });

  it("still reports initialize-first for requests without a _meta version (legacy session, checked as 2025-11-25)", async () => {
    for (const jobs of [1, 2]) {
      const { findings, summary } = await validateFiles(["-"], {
        inputFormat: "capture",
        jobs,
        stdin: Readable.from([captureText([req("c2s", 1, "tools/list"), ok("s2c", 1, { tools: [] }), req("c2s", 2, "tools/list"), ok("s2c", 2, { tools: [] })])]),
      });
      expect(brief(findings)).toEqual(["1 error session/initialize-first"]);
      expect(summary.files[0]!.protocolVersions).toEqual(["2025-11-25"]);
    }
  });

  it("a capture that starts after the initialize request is checked as its InitializeResult says, or at notifications/initialized as 2025-11-25", async () => {
    // Regression: those first messages were checked against the stateless default
    // (schema/unknown-method for notifications/initialized, resultType for the InitializeResult).
    const rest = [initialized, req("c2s", 2, "tools/list"), ok("s2c", 2, { tools: [] })];
    for (const jobs of [1, 2]) {
      for (const [records, expected, version] of [
        [[initResult(1, { tools: {} }), ...rest], ["1 error session/unmatched-response", "2 error session/initialize-first"], V],
        [rest, ["1 error session/initialize-first"], "2025-11-25"],
      ] as Array<[Rec[], string[], string]>) {
        const { findings, summary } = await validateFiles(["-"], { inputFormat: "capture", jobs, chunkBytes: 256, stdin: Readable.from([captureText(records)]) });
        expect(brief(findings), `jobs ${jobs}`).toEqual(expected);
        expect(summary.files[0]!.protocolVersions).toEqual([version]);
      }
    }
  });

  it("--protocol-version 2026-07-28: no initialize needed even without _meta on the first request", async () => {
    const findings = await check([req("c2s", 1, "tools/list", {}), toolsResult26(1)], { ...builtin, protocolVersion: V26 });
    expect(findings.map((f) => f.rule)).not.toContain("session/initialize-first");
    expect(new Set(findings.map((f) => f.rule))).toEqual(new Set(["schema/request"])); // the missing _meta
  });

  it("--protocol-version 2026-07-28 on a clean stateless capture reports nothing", async () => {
    expect(brief(await check([discover(), discoverResult(), toolsList26(1), toolsResult26(1)], { ...builtin, protocolVersion: V26 }))).toEqual([]);
  });

  it("capability rules use the server/discover result: breaks only session/missing-capability", async () => {
    const findings = await check([discover(), discoverResult("d", { tools: {} }), promptsList26(1), promptsResult26(1)], builtin);
    expect(brief(findings)).toEqual(["3 warning session/missing-capability"]);
    expect(findings[0]!.message).toMatch(/server\/discover result/);
  });

  it("capability rules pass when server/discover advertised the capability", async () => {
    expect(brief(await check([discover(), discoverResult("d", { tools: {}, prompts: {} }), promptsList26(1), promptsResult26(1)], builtin))).toEqual([]);
  });

  it("no capability rule before server/discover was seen", async () => {
    expect(brief(await check([promptsList26(1), promptsResult26(1)], builtin))).toEqual([]);
  });

  it("session rules still apply: a reused in-flight id is session/duplicate-request-id", async () => {
    expect(brief(await check([toolsList26(1), toolsList26(1), toolsResult26(1)], builtin))).toEqual(["2 error session/duplicate-request-id"]);
  });

  it("an unknown _meta version is session/unsupported-version, not initialize-first", async () => {
    const findings = await check([req("c2s", 1, "tools/list", meta26("2099-01-01")), toolsResult26(1)], builtin);
    expect(findings.map((f) => f.rule)).not.toContain("session/initialize-first");
    expect(findings.map((f) => `${f.line} ${f.rule}`)).toContain("1 session/unsupported-version");
  });

  it("the legacy rules are unchanged when a 2026-07-28 session is checked with --protocol-version 2025-06-18", async () => {
    const findings = await check([discover(), discoverResult()], { ...builtin, protocolVersion: "2025-06-18" });
    expect(findings.map((f) => f.rule)).toContain("session/version-mismatch");
    expect(findings.map((f) => f.rule)).not.toContain("session/initialize-first");
  });

  it("a subscriptions/listen stream still open at the end, or ended by the server's notifications/cancelled, is not unanswered", async () => {
    const listen = (id: number): Rec => req("c2s", id, "subscriptions/listen", { ...meta26(), notifications: { toolsListChanged: true } });
    const ack = (id: number): Rec =>
      note("s2c", "notifications/subscriptions/acknowledged", { _meta: { "io.modelcontextprotocol/subscriptionId": id }, notifications: { toolsListChanged: true } });
    const records: Rec[] = [
      discover(),
      discoverResult("d", { tools: { listChanged: true } }),
      listen(1),
      ack(1),
      listen(2),
      ack(2),
      note("s2c", "notifications/cancelled", { requestId: 2 }),
    ];
    expect(brief(await check(records, builtin))).toEqual([]);
    // ...while an ordinary request left unanswered is still reported
    expect(brief(await check([...records, toolsList26(3)], builtin))).toEqual(["8 error session/unanswered-request"]);
  });

  it("plain JSONL of one direction: stateless client requests and a server's DiscoverResult", async () => {
    const lines = (recs: Rec[]) => recs.map((r) => JSON.stringify(r[1])).join("\n");
    const c2s = await validateFiles(["-"], { inputFormat: "jsonl", direction: "c2s", stdin: Readable.from([lines([discover(), toolsList26(1), promptsList26(2)])]) });
    expect(brief(c2s.findings)).toEqual([]);
    const s2c = await validateFiles(["-"], {
      inputFormat: "jsonl",
      direction: "s2c",
      stdin: Readable.from([lines([discoverResult("d", { tools: {} }), toolsResult26(1), note("s2c", "notifications/resources/list_changed")])]),
    });
    expect(brief(s2c.findings)).toEqual(["3 warning session/unadvertised-notification"]);
  });

  it("--jobs gives the same findings on a stateless capture", async () => {
    const records = [toolsList26(1), toolsResult26(1), discover(), discoverResult(), promptsList26(2), promptsResult26(2)];
    const one = await check(records, builtin);
    const many = await check(records, { ...builtin, jobs: 3, chunkBytes: 256 });
    expect(brief(many)).toEqual(brief(one));
    expect(brief(one)).toEqual(["5 warning session/missing-capability"]);
  });
});

describe("jsonrpc/null-id-error (built-in validators)", () => {
  const parseError = (): Rec => ["s2c", { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }];
  for (const version of ["2025-06-18", "2025-11-25"]) {
    it(`${version}: the bridge's null-id answer to an unparseable line is only a warning`, async () => {
      const hs: Rec[] = [
        ["c2s", { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "c", version: "1" } } }],
        ["s2c", { jsonrpc: "2.0", id: 0, result: { protocolVersion: version, capabilities: {}, serverInfo: { name: "s", version: "1" } } }],
        initialized,
      ];
      const findings = await check([...hs, ["c2s", { raw: "{oops" }, "raw"], parseError()], builtin);
      expect(brief(findings)).toEqual(["4 error json/parse-error", "5 warning jsonrpc/null-id-error"]);
      expect(findings[1]!.pointer).toBe("/id");
    });
  }

  it("2026-07-28: the same in a stateless session", async () => {
    const findings = await check([toolsList26(1), toolsResult26(1), ["c2s", { raw: "{oops" }, "raw"], parseError()], builtin);
    expect(brief(findings)).toEqual(["3 error json/parse-error", "4 warning jsonrpc/null-id-error"]);
  });

  it("a null-id error response with another problem stays schema/error-response", async () => {
    const findings = await check([...handshake, ["c2s", { raw: "{oops" }, "raw"], ["s2c", { jsonrpc: "2.0", id: null, error: { code: "bad", message: "x" } }]], builtin);
    expect(findings.map((f) => f.rule)).toContain("schema/error-response");
    expect(findings.map((f) => f.rule)).not.toContain("jsonrpc/null-id-error");
  });

  it("an error response with a valid id gives no null-id finding", async () => {
    expect(brief(await check([...handshake, req("c2s", 1, "tools/list"), err("s2c", 1)], builtin))).toEqual([]);
  });
});

describe.skipIf(sharedMissing !== undefined)(skipTitle("hand-made captures that broke the validator", sharedMissing), () => {
  const bigCall = req("c2s", 1, "tools/call", { name: "echo", arguments: { text: "x".repeat(2000) } });
  const bigCallCancel = (): Rec[] => [bigCall, note("s2c", "notifications/progress", { progressToken: "p", progress: 1 })];

  it("a request dropped as too long breaks only input/line-too-long (no unmatched response, token or unanswered request)", async () => {
    for (const jobs of [1, 3]) {
      const records: Rec[] = [...handshake, ...bigCallCancel(), ok("s2c", 1, { content: [] }), req("c2s", 2, "tools/list")];
      expect(brief(await check(records, { maxLineBytes: 1000, jobs, chunkBytes: 256 }))).toEqual(["4 error input/line-too-long"]);
    }
  });

  it("the same capture without the over-long line breaks only what it really breaks", async () => {
    const records: Rec[] = [...handshake, ...bigCallCancel(), ok("s2c", 1, { content: [] }), req("c2s", 2, "tools/list")];
    expect(brief(await check(records, { maxLineBytes: 1 << 20 }))).toEqual(["5 error session/unknown-progress-token", "7 error session/unanswered-request"]);
  });

  it("a request with id null may be rejected with a null-id error response (no response-to-notification)", async () => {
    const findings = await check([...handshake, ["c2s", { jsonrpc: "2.0", id: null, method: "tools/list" }], err("s2c", null, -32600, "Invalid Request")]);
    expect(brief(findings)).toEqual(["4 error schema/envelope", "5 warning jsonrpc/null-id-error"]);
  });

  it("a request with a fractional id, rejected with id null or with its id echoed, is not also unanswered", async () => {
    const asBridge = await check([...handshake, ["c2s", { jsonrpc: "2.0", id: 1.5, method: "ping" }], err("s2c", null, -32600, "Invalid Request")]);
    expect(brief(asBridge)).toEqual(["4 error schema/envelope", "5 warning jsonrpc/null-id-error"]);
    const echoed = await check([...handshake, ["c2s", { jsonrpc: "2.0", id: 1.5, method: "ping" }], err("s2c", 1.5, -32600, "Invalid Request")]);
    expect(brief(echoed).filter((f) => f.includes("session/"))).toEqual([]);
    const unanswered = await check([...handshake, ["c2s", { jsonrpc: "2.0", id: 1.5, method: "ping" }], req("c2s", 2, "ping")]);
    expect(brief(unanswered)).toEqual(["4 error schema/envelope", "5 error session/unanswered-request"]);
  });

  it("a null-id error response with nothing to reject is still reported", async () => {
    const findings = await check([...handshake, err("s2c", null, -32600, "Invalid Request")]);
    expect(brief(findings)).toEqual(["4 warning jsonrpc/null-id-error", "4 error session/response-to-notification"]);
  });

  it("a batch of one message says 'message', not 'messages'", async () => {
    const findings = await check([...handshake, ["c2s", [{ jsonrpc: "2.0", id: 5, method: "ping" }]], ok("s2c", 5)]);
    expect(findings.map((f) => f.message)).toEqual([expect.stringContaining("JSON-RPC batch of 1 message;")]);
  });

  it("- (stdin) given twice is a usage error, not an empty second input", async () => {
    await expect(validateFiles(["-", "-"], { validators, stdin: Readable.from([captureText(handshake)]) })).rejects.toMatchObject({
      name: "ValidateUsageError",
      message: expect.stringMatching(/only once/),
    });
  });
});

// --- findings of a new user's test run ---------------------------------------------------------

describe("new-user findings (built-in validators)", () => {
  const V25 = "2025-11-25";
  const initAsk = (version: string): Rec => [
    "c2s",
    { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "demo", version: "1" } } },
  ];
  const initAnswer = (version: string): Rec => [
    "s2c",
    { jsonrpc: "2.0", id: 1, result: { protocolVersion: version, capabilities: { tools: { listChanged: true } }, serverInfo: { name: "s", version: "1" } } },
  ];
  const tools = { tools: [{ name: "echo", inputSchema: { type: "object" } }] };
  const session = (offered: string, answered: string): Rec[] => [initAsk(offered), initAnswer(answered), initialized, req("c2s", 2, "tools/list"), ok("s2c", 2, tools)];

  it("an unknown offered version answered with 2025-11-25 is checked as 2025-11-25 (not the stateless schema)", async () => {
    for (const jobs of [1, 2]) {
      const text = captureText(session("2099-01-01", V25));
      const { findings, summary } = await validateFiles(["-"], { inputFormat: "capture", jobs, chunkBytes: 256, stdin: Readable.from([text]) });
      expect(brief(findings)).toEqual([]);
      expect(summary.files[0]!.protocolVersions).toEqual([V25]);
    }
  });

  it("an unknown version both sides agree on is checked as 2025-11-25 with only session/unsupported-version", async () => {
    const { findings, summary } = await validateFiles(["-"], { inputFormat: "capture", stdin: Readable.from([captureText(session("2099-01-01", "2099-01-01"))]) });
    expect(brief(findings)).toEqual(["2 warning session/unsupported-version"]);
    expect(findings[0]!.message).toContain("checking against 2025-11-25");
    expect(summary.files[0]!.protocolVersions).toEqual([V25]);
  });

  it("an initialize exchange naming the stateless 2026-07-28 is never checked against the stateless schema", async () => {
    const findings = await check(session(V26, V26), builtin);
    expect(brief(findings)).toEqual(["2 warning session/unsupported-version"]);
  });

  it("server-side JSONL: an InitializeResult sets the version before it is checked", async () => {
    const lines = [initAnswer(V)[1], ok("s2c", 2, tools)[1], ok("s2c", 3, { content: [{ type: "text", text: "hello" }] })[1]].map((m) => JSON.stringify(m)).join("\n");
    for (const jobs of [1, 2]) {
      const { findings, summary } = await validateFiles(["-"], { inputFormat: "jsonl", direction: "s2c", jobs, chunkBytes: 256, stdin: Readable.from([lines]) });
      expect(brief(findings)).toEqual([]);
      expect(summary.files[0]!.protocolVersions).toEqual([V]);
    }
  });

  it("server-side JSONL of results only (no initialize, no stateless marker) is checked as 2025-11-25", async () => {
    const lines = [ok("s2c", 2, tools)[1], ok("s2c", 3, {})[1]].map((m) => JSON.stringify(m)).join("\n");
    const { findings, summary } = await validateFiles(["-"], { inputFormat: "jsonl", direction: "s2c", stdin: Readable.from([lines]) });
    expect(brief(findings)).toEqual([]);
    expect(summary.files[0]!.protocolVersions).toEqual([V25]);
  });

  it("a null-id error rejecting a forbidden batch answers the batch (no response-to-notification, no unanswered request)", async () => {
    const findings = await check([...session(V, V), ["c2s", [{ jsonrpc: "2.0", id: 6, method: "ping" }]], err("s2c", null, -32600, "JSON-RPC batches are not supported")], builtin);
    expect(brief(findings)).toEqual(["6 error session/batch-not-allowed", "7 warning jsonrpc/null-id-error"]);
  });

  it("an error response may echo the readable id of an invalid request", async () => {
    const findings = await check([...session(V, V), ["c2s", { jsonrpc: "2.0", id: 3 }], err("s2c", 3, -32600, "Invalid Request")], builtin);
    expect(brief(findings)).toEqual(["6 error jsonrpc/invalid"]);
    // ...but only once, and a success response still matches nothing.
    const twice = await check([...session(V, V), ["c2s", { jsonrpc: "2.0", id: 3 }], err("s2c", 3, -32600, "Invalid Request"), ok("s2c", 3)], builtin);
    expect(brief(twice)).toEqual(["6 error jsonrpc/invalid", "8 error session/unmatched-response"]);
  });

  it("retrying initialize after an initialize error is no reinitialize (one session)", async () => {
    const { findings, summary } = await validateFiles(["-"], {
      inputFormat: "capture",
      stdin: Readable.from([
        captureText([
          initAsk(V),
          err("s2c", 1, -32602, "Unsupported protocol version"),
          initAsk("2024-11-05"),
          initAnswer("2024-11-05"),
          initialized,
          req("c2s", 2, "tools/list"),
          ok("s2c", 2, tools),
        ]),
      ]),
    });
    expect(brief(findings)).toEqual([]);
    expect(summary.files[0]!.sessions).toBe(1);
    expect(summary.files[0]!.protocolVersions).toEqual(["2024-11-05"]);
  });

  it("a second initialize after a successful one is still session/reinitialize", async () => {
    const findings = await check([...session(V, V), initAsk(V), initAnswer(V)], builtin);
    expect(brief(findings)).toEqual(["6 warning session/reinitialize"]);
  });

  it("--jobs is capped at the number of inputs (one file per thread) and the available CPUs", async () => {
    const dir = mkdtempSync(join(tmpdir(), "orchestra-validate-cap-"));
    const tiny = join(dir, "tiny.jsonl");
    writeFileSync(tiny, `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })}\n`);
    expect(await usableJobs([tiny], { jobs: 100 })).toBe(1);
    expect(await usableJobs([tiny, tiny, tiny], { jobs: 100 })).toBe(Math.min(3, availableParallelism()));
    expect(await usableJobs([tiny], { jobs: 100, chunkBytes: 256 })).toBe(1);
    expect(await usableJobs(["-"], { jobs: 100 })).toBe(1);
    expect(await usableJobs(["-", tiny], { jobs: 100 })).toBe(Math.min(2, availableParallelism()));
    expect(await usableJobs([tiny], { jobs: 1 })).toBe(1);
  });
});

describe.skipIf(sharedMissing !== undefined)(skipTitle("--schema FILE checked at start-up", sharedMissing), () => {
  const dir = mkdtempSync(join(tmpdir(), "orchestra-validate-schema-"));
  const official25 = (): { definitions: Record<string, unknown> } => JSON.parse(readFileSync(join(SHARED, V, "schema.json"), "utf8")) as { definitions: Record<string, unknown> };
  const write = (name: string, schema: object): string => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(schema));
    return path;
  };

  it("a schema missing a needed definition is a one-line 'bad schema file' usage error", async () => {
    const schema = official25();
    delete schema.definitions.ListToolsResult;
    const path = write("no-list-tools-result.json", schema);
    await expect(validateFiles(["-"], { schemaPath: path, stdin: Readable.from([captureText(handshake)]) })).rejects.toMatchObject({
      name: "ValidateUsageError",
      message: expect.stringMatching(new RegExp(`^bad schema file: ${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: .*ListToolsResult[^\n]*$`)),
    });
  });

  it("a dangling $ref is the schema's fault, not each input's", async () => {
    const schema = official25();
    schema.definitions.JSONRPCRequest = { $ref: "#/definitions/DoesNotExist" };
    const path = write("dangling.json", schema);
    await expect(validateFiles(["-"], { schemaPath: path, stdin: Readable.from([captureText(handshake)]) })).rejects.toMatchObject({
      name: "ValidateUsageError",
      message: expect.stringMatching(/^bad schema file: .*DoesNotExist/),
    });
  });

  it("a missing envelope definition is reported", async () => {
    const schema = official25();
    delete schema.definitions.JSONRPCNotification;
    const path = write("no-notification.json", schema);
    await expect(validateFiles(["-"], { schemaPath: path, stdin: Readable.from([captureText(handshake)]) })).rejects.toMatchObject({
      message: expect.stringMatching(/^bad schema file: .*missing definition JSONRPCNotification$/),
    });
  });

  it("messages name the schema file rather than a protocol version", async () => {
    const path = join(SHARED, V, "schema.json");
    const { findings } = await validateFiles(["-"], { schemaPath: path, stdin: Readable.from([captureText([...handshake, req("c2s", 1, "x/y")])]) });
    const unknown = findings.find((f) => f.rule === "schema/unknown-method");
    expect(unknown?.message).toBe(`method x/y is not defined by the schema ${path}`);
  });
});
