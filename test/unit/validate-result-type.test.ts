/**
 * 2026-07-28 results whose response union is `InputRequiredResult | XResult` (tools/call,
 * prompts/get, resources/read): `resultType` names the branch (schema `ResultType`), so a result
 * that is not `"input_required"` is judged as the `XResult` it claims to be, with the built-in
 * validators and with the official schema given as --schema.
 */
import { join } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { validateFiles, type Finding, type ValidateOptions } from "../../src/validate/index.js";
import { requireShared, sharedPath } from "../helpers/requires.js";

const V26 = "2026-07-28";
const meta = { _meta: { "io.modelcontextprotocol/protocolVersion": V26, "io.modelcontextprotocol/clientCapabilities": {} } };
const serverMeta = { "io.modelcontextprotocol/serverInfo": { name: "s", version: "1" } };
const caps = { tools: {}, prompts: {}, resources: {} };

type Msg = ["c2s" | "s2c", object];
const capture = (records: Msg[]): string => records.map(([dir, msg]) => JSON.stringify({ ts: "2026-07-28T10:00:00.000Z", dir, msg })).join("\n");

/** The findings of one exchange `method(params)` → `result` after server/discover. */
async function exchange(method: string, params: object, result: object, options: ValidateOptions = { validators: undefined }): Promise<Finding[]> {
  const records: Msg[] = [
    ["c2s", { jsonrpc: "2.0", id: "d", method: "server/discover", params: meta }],
    ["s2c", { jsonrpc: "2.0", id: "d", result: { resultType: "complete", supportedVersions: [V26], capabilities: caps, _meta: serverMeta, ttlMs: 0, cacheScope: "private" } }],
    ["c2s", { jsonrpc: "2.0", id: 1, method, params: { ...params, ...meta } }],
    ["s2c", { jsonrpc: "2.0", id: 1, result: { _meta: serverMeta, ...result } }],
  ];
  const { findings } = await validateFiles(["-"], { inputFormat: "capture", stdin: Readable.from([Buffer.from(capture(records))]), ...options });
  return findings;
}

const call = ["tools/call", { name: "t", arguments: {} }] as const;
const prompt = ["prompts/get", { name: "p" }] as const;
const read = ["resources/read", { uri: "file:///a" }] as const;

/** Results that are not InputRequiredResults and break their XResult. */
const BAD: Array<[string, readonly [string, object], object]> = [
  ["tools/call: an unknown content type", call, { resultType: "complete", content: [{ type: "txt" }] }],
  ["tools/call: text without text", call, { resultType: "complete", content: [{ type: "text" }] }],
  ["tools/call: a block without type", call, { resultType: "complete", content: [{ text: "x" }] }],
  ["tools/call: text not a string", call, { resultType: "complete", content: [{ type: "text", text: 5 }] }],
  ["tools/call: content an object", call, { resultType: "complete", content: { type: "text", text: "x" } }],
  ["tools/call: no content", call, { resultType: "complete" }],
  ["tools/call: another resultType", call, { resultType: "banana", content: [{ type: "video" }] }],
  ["prompts/get: messages not an array", prompt, { resultType: "complete", messages: "garbage" }],
  ["resources/read: a bogus content", read, { resultType: "complete", contents: [{ bogus: 1 }], ttlMs: 0, cacheScope: "private" }],
];

const official =
  requireShared(`mcp-schema/${V26}/schema.json`) === undefined ? { validators: undefined, schemaPath: join(sharedPath("mcp-schema"), V26, "schema.json") } : undefined;

describe("2026-07-28: resultType names the branch of a result union", () => {
  it.each(BAD)("%s is a finding inside the result", async (_name, [method, params], result) => {
    for (const options of official ? [{ validators: undefined }, official] : [{ validators: undefined }]) {
      const findings = await exchange(method, params, result, options);
      expect(findings.filter((f) => f.severity === "error").length).toBeGreaterThan(0);
      expect(findings.every((f) => f.line === 4 && (f.pointer ?? "/result").startsWith("/result"))).toBe(true);
    }
  });

  it("valid results of either branch pass", async () => {
    const good: Array<[readonly [string, object], object]> = [
      [call, { resultType: "complete", content: [{ type: "text", text: "x" }] }],
      [call, { resultType: "input_required", requestState: "opaque" }],
      [prompt, { resultType: "complete", messages: [{ role: "user", content: { type: "text", text: "x" } }] }],
      [prompt, { resultType: "input_required", requestState: "opaque" }],
      [read, { resultType: "complete", contents: [{ uri: "file:///a", text: "x" }], ttlMs: 0, cacheScope: "private" }],
      [read, { resultType: "input_required", requestState: "opaque" }],
    ];
    for (const [[method, params], result] of good) expect((await exchange(method, params, result)).map((f) => `${method} ${f.rule} ${f.pointer} ${f.message}`)).toEqual([]);
  });
});

describe("2026-07-28: an InputRequiredResult", () => {
  const methods = [call, prompt, read];
  const schemas = official ? [{ validators: undefined }, official] : [{ validators: undefined }];

  it.each(methods)("%s: with neither inputRequests nor requestState is one schema/result error (its description's MUST)", async (method, params) => {
    for (const options of schemas) {
      for (const result of [{ resultType: "input_required" }, { resultType: "input_required", content: [], messages: [], contents: [] }]) {
        const findings = await exchange(method, params, result, options);
        expect(findings.map((f) => `${f.rule} ${f.severity} ${f.pointer}`)).toEqual(["schema/result error /result"]);
        expect(findings[0]!.message).toBe("InputRequiredResult: (root) must have property 'inputRequests' or 'requestState' (at least one of them MUST be present)");
      }
    }
  });

  it.each(methods)("%s: with either one, or both, passes", async (method, params) => {
    for (const result of [{ requestState: "s" }, { inputRequests: {} }, { requestState: "s", inputRequests: {} }]) {
      expect(await exchange(method, params, { resultType: "input_required", ...result })).toEqual([]);
    }
  });

  it.each(methods)("%s: an invalid one is explained against InputRequiredResult alone, as its resultType names it", async (method, params) => {
    for (const options of schemas) {
      const findings = await exchange(method, params, { resultType: "input_required", inputRequests: 5 }, options);
      expect(findings.map((f) => `${f.rule} ${f.pointer}`)).toEqual(["schema/result /result/inputRequests", "schema/result /result"]);
      expect(findings[0]!.message).toMatch(/^InputRequiredResult: \/inputRequests must be object/);
      expect(findings[1]!.message).toMatch(/must match one of the allowed shapes \(anyOf\)$/);
      // nothing of the method's own result (content, messages, contents)
      expect(findings.map((f) => f.message).join("\n")).not.toMatch(/content|messages/);
    }
  });
});
