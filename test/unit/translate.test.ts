import { describe, expect, it } from "vitest";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { PluginRequestSchema, StreamStartSchema, ToolDefinitionSchema, ToolRequestSchema, ToolResponseSchema } from "../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { objectToStruct, structToObject, StructConversionError } from "../../src/translate/struct.js";
import { TRACE_PARENT_META_KEY } from "../../src/mcp/versions.js";
import { callToolParamsToPluginRequest, NOT_IN_STREAM_START, toolDefinitionToMcpTool, toolResponseToCallToolResult } from "../../src/translate/tools.js";

describe("Struct ⇄ object", () => {
  it("converts a Struct to an object, and an absent Struct to {}", () => {
    expect(structToObject({ a: 1, b: [true, null, "s"], c: { d: 2.5 } })).toEqual({ a: 1, b: [true, null, "s"], c: { d: 2.5 } });
    expect(structToObject(undefined)).toEqual({});
    expect(structToObject(null)).toEqual({});
  });

  it("converts an object to a Struct that survives protobuf encoding", () => {
    const value = { text: "héllo 🙂", n: -3.25, nested: { list: [1, "two", false, null, { x: {} }] }, dropped: undefined };
    const struct = objectToStruct(value);
    expect(struct).toEqual({ text: "héllo 🙂", n: -3.25, nested: { list: [1, "two", false, null, { x: {} }] } });
    const request = create(PluginRequestSchema, { requestId: "r", request: { case: "toolCall", value: { toolName: "t", arguments: struct } } });
    const decoded = fromBinary(PluginRequestSchema, toBinary(PluginRequestSchema, request));
    expect(decoded.request.case === "toolCall" && decoded.request.value.arguments).toEqual(struct);
  });

  it("returns plain JSON input without copying it", () => {
    const value = { a: { b: [1, 2] } };
    expect(objectToStruct(value)).toBe(value);
  });

  it("rejects values a Struct cannot carry, naming the pointer", () => {
    expect(() => objectToStruct({ a: [0, Number.NaN] })).toThrow(StructConversionError);
    expect(() => objectToStruct({ a: [0, Number.NaN] })).toThrow("/a/1");
    expect(() => objectToStruct({ f: () => 1 } as Record<string, unknown>)).toThrow("/f");
  });
});

describe("ToolDefinition → MCP Tool", () => {
  it("carries name, description and input schema", () => {
    const def = create(ToolDefinitionSchema, {
      name: "echo",
      description: "Echo",
      inputSchema: { type: "object", properties: { text: { type: "string" } } },
    });
    expect(toolDefinitionToMcpTool(def)).toEqual({
      name: "echo",
      description: "Echo",
      inputSchema: { type: "object", properties: { text: { type: "string" } } },
    });
  });

  it("omits an empty description and defaults a missing schema to an object schema", () => {
    expect(toolDefinitionToMcpTool(create(ToolDefinitionSchema, { name: "t" }))).toEqual({ name: "t", inputSchema: { type: "object" } });
    expect(toolDefinitionToMcpTool(create(ToolDefinitionSchema, { name: "t", inputSchema: { properties: {} } }))).toEqual({
      name: "t",
      inputSchema: { type: "object", properties: {} },
    });
  });
});

describe("ToolResponse → CallToolResult", () => {
  it("success with a text result becomes one text block and no structuredContent", () => {
    expect(toolResponseToCallToolResult(create(ToolResponseSchema, { success: true, result: { text: "hi" } }))).toEqual({
      content: [{ type: "text", text: "hi" }],
    });
  });

  it("success with another result falls back to JSON text plus structuredContent", () => {
    const result = { sum: 3, items: ["a"] };
    expect(toolResponseToCallToolResult(create(ToolResponseSchema, { success: true, result }))).toEqual({
      content: [{ type: "text", text: '{"sum":3,"items":["a"]}' }],
      structuredContent: result,
    });
  });

  it("success with text and other fields keeps the text block and the whole result as structuredContent", () => {
    expect(toolResponseToCallToolResult(create(ToolResponseSchema, { success: true, result: { text: "t", n: 1 } }))).toEqual({
      content: [{ type: "text", text: "t" }],
      structuredContent: { text: "t", n: 1 },
    });
  });

  it("success with no result becomes the JSON text {}", () => {
    expect(toolResponseToCallToolResult(create(ToolResponseSchema, { success: true }))).toEqual({ content: [{ type: "text", text: "{}" }] });
  });

  it("failure becomes isError with the message, or tool error: <code> when the message is empty", () => {
    expect(toolResponseToCallToolResult(create(ToolResponseSchema, { success: false, errorCode: "E", errorMessage: "bad input" }))).toEqual({
      content: [{ type: "text", text: "bad input" }],
      isError: true,
    });
    expect(toolResponseToCallToolResult(create(ToolResponseSchema, { success: false, errorCode: "quota" }))).toEqual({
      content: [{ type: "text", text: "tool error: quota" }],
      isError: true,
    });
  });
});

describe("tools/call params → PluginRequest", () => {
  it("sets caller_plugin, session_id, a UUIDv7 request_id and the traceparent", () => {
    const req = callToolParamsToPluginRequest({ name: "echo", arguments: { text: "x" }, _meta: { traceparent: "00-abc-def-01" } }, { sessionId: "s-1" });
    expect(req.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    expect(req.request.case).toBe("toolCall");
    if (req.request.case !== "toolCall") return;
    expect(req.request.value).toMatchObject({ toolName: "echo", callerPlugin: "transport.stdio", sessionId: "s-1", traceParent: "00-abc-def-01", arguments: { text: "x" } });
  });

  it("builds tool_call and stream_start from the same call: shared fields equal, the request id as stream id", () => {
    const params = { name: "count", arguments: { to: 2 }, _meta: { [TRACE_PARENT_META_KEY]: "00-abc-def-01" } };
    const unary = callToolParamsToPluginRequest(params, { sessionId: "s-1", requestId: "r-1" });
    const streamed = callToolParamsToPluginRequest(params, { sessionId: "s-1", requestId: "r-2" }, "streamStart");
    expect(unary.requestId).toBe("r-1");
    expect(streamed.requestId).toBe("r-2");
    if (unary.request.case !== "toolCall" || streamed.request.case !== "streamStart") throw new Error("wrong request kinds");
    expect(streamed.request.value.streamId).toBe("r-2");
    for (const field of ["toolName", "arguments", "callerPlugin"] as const) expect(streamed.request.value[field]).toEqual(unary.request.value[field]);
    expect(unary.request.value.traceParent).toBe("00-abc-def-01");
    expect(unary.request.value.provider).toBe("");
  });

  it("leaves trace_parent empty when the _meta traceparent is absent or not a string", () => {
    for (const _meta of [undefined, {}, { [TRACE_PARENT_META_KEY]: 7 }]) {
      const req = callToolParamsToPluginRequest({ name: "echo", arguments: {}, ...(_meta ? { _meta } : {}) }, { sessionId: "s" });
      expect(req.request.case === "toolCall" && req.request.value.traceParent).toBe("");
    }
  });

  it("lists as not carried by stream_start exactly the ToolRequest fields StreamStart lacks (by the generated descriptors)", () => {
    const streamFields = new Set(StreamStartSchema.fields.map((f) => f.localName));
    const lacking = ToolRequestSchema.fields.map((f) => f.localName).filter((name) => !streamFields.has(name));
    expect(Object.keys(NOT_IN_STREAM_START).sort()).toEqual(lacking.sort());
  });
});
