/**
 * The validation facade over the generated validators: method dispatch per direction, verdicts,
 * and the pointer/reason of the first (most useful) issue.
 */
import { describe, expect, it } from "vitest";
import { GENERATED_PROTOCOLS, GENERATED_VERSIONS } from "../../src/gen/mcp/index.js";
import { formatIssue, validatorsFor, type SchemaIssue } from "../../src/mcp/validation.js";
import { SUPPORTED_PROTOCOL_VERSIONS } from "../../src/mcp/versions.js";
import { SAMPLES } from "../helpers/mcp-samples.js";

const v = validatorsFor("2025-06-18");
if (!v) throw new Error("no generated validators for 2025-06-18");

const first = (issues: SchemaIssue[] | null): SchemaIssue => {
  if (!issues || issues.length === 0) throw new Error("expected at least one issue");
  return issues[0] as SchemaIssue;
};

describe("validatorsFor", () => {
  it("exists for every supported protocol version and for nothing else", () => {
    for (const version of SUPPORTED_PROTOCOL_VERSIONS) expect(validatorsFor(version)?.version).toBe(version);
    expect([...GENERATED_VERSIONS]).toEqual(expect.arrayContaining([...SUPPORTED_PROTOCOL_VERSIONS]));
    expect(validatorsFor("1999-01-01")).toBeUndefined();
    expect(validatorsFor("constructor")).toBeUndefined();
    expect(validatorsFor("__proto__")).toBeUndefined();
  });

  it("returns the same cached instance", () => {
    expect(validatorsFor("2025-06-18")).toBe(v);
  });

  it("knows every generated definition and nothing else", () => {
    for (const d of GENERATED_PROTOCOLS["2025-06-18"]?.definitions ?? []) expect(v.has(d)).toBe(true);
    expect(v.has("CallToolRequest")).toBe(true);
    expect(v.has("NoSuchDefinition")).toBe(false);
    expect(v.has("toString")).toBe(false);
    expect(() => v.validate("NoSuchDefinition", {})).toThrow(/NoSuchDefinition/);
  });
});

describe("messageDefinition (method dispatch)", () => {
  it("maps client→server requests to their request and result definitions", () => {
    expect(v.messageDefinition("c2s", "tools/call")).toEqual({
      definition: "CallToolRequest",
      kind: "request",
      resultDefinition: "CallToolResult",
    });
    expect(v.messageDefinition("c2s", "tools/list")).toEqual({
      definition: "ListToolsRequest",
      kind: "request",
      resultDefinition: "ListToolsResult",
    });
    expect(v.messageDefinition("c2s", "initialize")).toEqual({
      definition: "InitializeRequest",
      kind: "request",
      resultDefinition: "InitializeResult",
    });
    expect(v.messageDefinition("c2s", "prompts/get")?.resultDefinition).toBe("GetPromptResult");
  });

  it("gives ping the EmptyResult in both directions", () => {
    const expected = { definition: "PingRequest", kind: "request", resultDefinition: "EmptyResult" };
    expect(v.messageDefinition("c2s", "ping")).toEqual(expected);
    expect(v.messageDefinition("s2c", "ping")).toEqual(expected);
  });

  it("maps notifications without a result definition, per direction", () => {
    expect(v.messageDefinition("c2s", "notifications/initialized")).toEqual({
      definition: "InitializedNotification",
      kind: "notification",
    });
    expect(v.messageDefinition("s2c", "notifications/initialized")).toBeUndefined();
    expect(v.messageDefinition("c2s", "notifications/cancelled")?.definition).toBe("CancelledNotification");
    expect(v.messageDefinition("s2c", "notifications/cancelled")?.definition).toBe("CancelledNotification");
    expect(v.messageDefinition("s2c", "notifications/progress")?.kind).toBe("notification");
  });

  it("returns undefined for unknown methods, wrong directions and prototype keys", () => {
    expect(v.messageDefinition("s2c", "tools/call")).toBeUndefined();
    expect(v.messageDefinition("c2s", "no/such/method")).toBeUndefined();
    expect(v.messageDefinition("c2s", "constructor")).toBeUndefined();
    expect(v.messageDefinition("c2s", "__proto__")).toBeUndefined();
  });

  it("hands out copies that cannot corrupt the table", () => {
    const entry = v.messageDefinition("c2s", "tools/call");
    if (!entry) throw new Error("missing tools/call");
    entry.definition = "Hacked";
    expect(v.messageDefinition("c2s", "tools/call")?.definition).toBe("CallToolRequest");
  });
});

describe("validate: verdicts", () => {
  it("accepts every hand-written sample for its definition", () => {
    for (const [definition, samples] of Object.entries(SAMPLES)) {
      for (const s of samples) expect(v.validate(definition, s), `${definition}: ${JSON.stringify(s)}`).toBeNull();
    }
  });

  it("validates a full tools/call request envelope via its method's definition", () => {
    const msg = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { a: 1 } } };
    const def = v.messageDefinition("c2s", msg.method);
    expect(def?.definition).toBe("CallToolRequest");
    expect(v.validate(def?.definition ?? "", msg)).toBeNull();
    expect(v.validate("JSONRPCRequest", msg)).toBeNull();
    expect(v.validate("JSONRPCMessage", msg)).toBeNull();
  });
});

describe("validate: first issue pointer and reason", () => {
  const cases: Array<{ name: string; definition: string; data: unknown; pointer: string; reason: RegExp; keyword?: string; issueDefinition?: string }> = [
    {
      name: "wrong type of tool name",
      definition: "CallToolRequest",
      data: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: 5 } },
      pointer: "/params/name",
      reason: /^must be string \(got integer\)$/,
      keyword: "type",
    },
    {
      name: "missing tool name",
      definition: "CallToolRequest",
      data: { jsonrpc: "2.0", id: 1, method: "tools/call", params: {} },
      pointer: "/params",
      reason: /required property 'name'/,
      keyword: "required",
    },
    {
      name: "missing params",
      definition: "CallToolRequest",
      data: { jsonrpc: "2.0", id: 1, method: "tools/call" },
      pointer: "",
      reason: /required property 'params'/,
    },
    {
      name: "arguments must be an object",
      definition: "CallToolRequest",
      data: { method: "tools/call", params: { name: "x", arguments: [1] } },
      pointer: "/params/arguments",
      reason: /must be object \(got array\)/,
    },
    {
      name: "image block missing mimeType explains the image branch, not the text branch",
      definition: "CallToolResult",
      data: {
        content: [
          { type: "text", text: "ok" },
          { type: "image", data: "AAAA" },
        ],
      },
      pointer: "/content/1",
      reason: /required property 'mimeType'/,
      issueDefinition: "ImageContent",
    },
    {
      name: "image block with bad base64 points at data",
      definition: "CallToolResult",
      data: { content: [{ type: "image", data: "%%%", mimeType: "image/png" }] },
      pointer: "/content/0/data",
      reason: /base64/,
      keyword: "format",
      issueDefinition: "ImageContent",
    },
    {
      name: "text block with numeric text",
      definition: "CallToolResult",
      data: { content: [{ type: "text", text: 42 }] },
      pointer: "/content/0/text",
      reason: /must be string/,
      issueDefinition: "TextContent",
    },
    {
      name: "unknown content type",
      definition: "CallToolResult",
      data: { content: [{ type: "video", url: "x" }] },
      pointer: "/content/0/type",
      reason: /no allowed shape has type "video"/,
    },
    {
      name: "embedded resource with neither text nor blob",
      definition: "CallToolResult",
      data: { content: [{ type: "resource", resource: { uri: "file:///a" } }] },
      pointer: "/content/0/resource",
      reason: /required property '(text|blob)'/,
      issueDefinition: "EmbeddedResource",
    },
    {
      name: "resource link with a relative URI",
      definition: "ContentBlock",
      data: { type: "resource_link", uri: "docs/a.md", name: "a" },
      pointer: "/uri",
      reason: /absolute URI/,
      issueDefinition: "ResourceLink",
    },
    {
      name: "annotation priority out of range",
      definition: "TextContent",
      data: { type: "text", text: "x", annotations: { priority: 2 } },
      pointer: "/annotations/priority",
      reason: /^must be <= 1 \(got 2\)$/,
    },
    {
      name: "audience role not in enum",
      definition: "TextContent",
      data: { type: "text", text: "x", annotations: { audience: ["system"] } },
      pointer: "/annotations/audience/0",
      reason: /must be one of "assistant", "user" \(got "system"\)/,
    },
    {
      name: "tool inputSchema must be an object schema",
      definition: "ListToolsResult",
      data: { tools: [{ name: "t", inputSchema: { type: "array" } }] },
      pointer: "/tools/0/inputSchema/type",
      reason: /must be "object" \(got "array"\)/,
    },
    {
      name: "union of client requests picks the branch named by method",
      definition: "ClientRequest",
      data: { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: ["x"] } },
      pointer: "/params/name",
      reason: /must be string/,
      issueDefinition: "CallToolRequest",
    },
    {
      name: "union of client requests with an unknown method",
      definition: "ClientRequest",
      data: { jsonrpc: "2.0", id: 3, method: "no/such/method" },
      pointer: "/method",
      reason: /no allowed shape has method "no\/such\/method"/,
    },
    {
      name: "JSON-RPC version",
      definition: "JSONRPCMessage",
      data: { jsonrpc: "1.0", id: 1, method: "ping" },
      pointer: "/jsonrpc",
      reason: /must be "2.0" \(got "1.0"\)/,
    },
    {
      name: "null request id",
      definition: "JSONRPCRequest",
      data: { jsonrpc: "2.0", id: null, method: "ping" },
      pointer: "/id",
      reason: /must be string or integer \(got null\)/,
    },
    {
      name: "error code must be an integer",
      definition: "JSONRPCError",
      data: { jsonrpc: "2.0", id: 1, error: { code: 1.5, message: "m" } },
      pointer: "/error/code",
      reason: /must be integer \(got number\)/,
    },
    {
      name: "progress token type",
      definition: "PingRequest",
      data: { method: "ping", params: { _meta: { progressToken: true } } },
      pointer: "/params/_meta/progressToken",
      reason: /must be string or integer/,
    },
    {
      name: "cancelled without requestId",
      definition: "CancelledNotification",
      data: { jsonrpc: "2.0", method: "notifications/cancelled", params: { reason: "x" } },
      pointer: "/params",
      reason: /required property 'requestId'/,
    },
    {
      name: "initialize result without serverInfo",
      definition: "InitializeResult",
      data: { protocolVersion: "2025-06-18", capabilities: {} },
      pointer: "",
      reason: /required property 'serverInfo'/,
    },
    {
      name: "wrong method constant",
      definition: "CallToolRequest",
      data: { method: "tools/list", params: { name: "x" } },
      pointer: "/method",
      reason: /must be "tools\/call" \(got "tools\/list"\)/,
      keyword: "const",
    },
    {
      name: "pointer escapes ~ and / in keys",
      definition: "GetPromptRequest",
      data: { method: "prompts/get", params: { name: "p", arguments: { "a/b~c": 1 } } },
      pointer: "/params/arguments/a~1b~0c",
      reason: /must be string \(got integer\)/,
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const issues = v.validate(c.definition, c.data);
      const issue = first(issues);
      expect(issue.pointer).toBe(c.pointer);
      expect(issue.reason).toMatch(c.reason);
      if (c.keyword) expect(issue.keyword).toBe(c.keyword);
      expect(issue.definition).toBe(c.issueDefinition ?? c.definition);
    });
  }

  it("formats issues as `pointer: reason`, with (root) for the whole value", () => {
    const nameIssue = first(v.validate("CallToolRequest", { method: "tools/call", params: { name: 5 } }));
    expect(formatIssue(nameIssue)).toBe("/params/name: must be string (got integer)");
    const rootIssue = first(v.validate("CallToolRequest", "nope"));
    expect(formatIssue(rootIssue)).toBe("(root): must be object (got string)");
  });

  it("lists the union summary after the concrete issues and never repeats an issue", () => {
    const issues = v.validate("CallToolResult", { content: [{ type: "image", data: "AAAA" }] }) ?? [];
    expect(issues.length).toBeGreaterThan(1);
    expect(issues[issues.length - 1]?.keyword).toBe("anyOf");
    const keys = issues.map((i) => `${i.pointer}|${i.keyword}|${i.reason}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("does not let one call's errors leak into the next", () => {
    expect(v.validate("CallToolRequest", { method: "tools/call", params: {} })).not.toBeNull();
    expect(v.validate("CallToolRequest", { method: "tools/call", params: { name: "ok" } })).toBeNull();
    expect(first(v.validate("CallToolRequest", { method: "tools/call", params: { name: 1 } })).pointer).toBe("/params/name");
  });
});
