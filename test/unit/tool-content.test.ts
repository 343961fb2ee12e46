/**
 * Everything a tool can say reaches the client: CallToolResult pass-through (and the nearest
 * block in revisions without audio or resource links), tool log messages over the streaming path,
 * and the reference orchestrator's side of both (ctx.log / ctx.progress / a stream's result).
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { PromptGetResponseSchema, StreamChunkSchema, StreamEndSchema, ToolResponseSchema } from "../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { decorateResult } from "../../src/mcp/negotiation.js";
import { mediaDataUrl, promptGetResponseToResult, PromptTranslationError } from "../../src/translate/prompts.js";
import { validatorsFor } from "../../src/mcp/validation.js";
import { ToolRegistry, type ToolChunk } from "../../src/orchestrator/registry.js";
import { SUPPORTED_PROTOCOL_VERSIONS } from "../../src/mcp/versions.js";
import { featuresOf } from "../../src/translate/features.js";
import { LOG_CONTENT_TYPE, PROGRESS_CONTENT_TYPE, RESULT_CONTENT_TYPE, StreamAccumulator } from "../../src/translate/streams.js";
import { CONTENT_URI_PREFIX, isCallToolResult, toolResponseToCallToolResult, toolResultToCallToolResult } from "../../src/translate/tools.js";
import { answer, FakeStreamingSender, harness, scripted, type StreamReply } from "../helpers/bridge-fakes.js";

/** Every supported revision (src/mcp/versions.ts): each result is checked against each one's schema. */
const VERSIONS = SUPPORTED_PROTOCOL_VERSIONS;
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/** A CallToolResult with every kind of content block. */
const EVERY_BLOCK = {
  content: [
    { type: "text", text: "hello" },
    { type: "image", data: PNG, mimeType: "image/png" },
    { type: "audio", data: "UklGRg==", mimeType: "audio/wav", annotations: { priority: 0.5 } },
    { type: "resource_link", uri: "test://doc", name: "doc", description: "a document" },
    { type: "resource", resource: { uri: "test://r", mimeType: "text/plain", text: "R" } },
  ],
  structuredContent: { n: 1 },
  _meta: { "example.com/k": "v" },
};

describe("recognising a CallToolResult", () => {
  it("is a content array of known blocks with no other key than structuredContent, isError, _meta", () => {
    expect(isCallToolResult(EVERY_BLOCK)).toBe(true);
    expect(isCallToolResult({ content: [] })).toBe(true);
    expect(isCallToolResult({ content: [{ type: "text", text: "x" }], isError: true })).toBe(true);
    expect(isCallToolResult({ content: "x" })).toBe(false);
    expect(isCallToolResult({ content: [1, 2] })).toBe(false);
    expect(isCallToolResult({ content: [{ type: "video", data: "" }] })).toBe(false);
    expect(isCallToolResult({ content: [{ type: "text", text: "x" }], count: 1 })).toBe(false);
    expect(isCallToolResult({ text: "x" })).toBe(false);
  });

  it("keeps today's mapping for plain objects, including one that merely has content", () => {
    expect(toolResultToCallToolResult({ text: "hi" })).toEqual({ content: [{ type: "text", text: "hi" }] });
    const plain = { content: [{ type: "text", text: "x" }], count: 1 };
    expect(toolResultToCallToolResult(plain)).toEqual({ content: [{ type: "text", text: JSON.stringify(plain) }], structuredContent: plain });
  });
});

describe("a CallToolResult in each revision", () => {
  it("passes through unchanged from 2025-06-18 on", () => {
    for (const v of ["2025-06-18", "2025-11-25", "2026-07-28"]) expect(toolResultToCallToolResult(EVERY_BLOCK, featuresOf(v))).toEqual(EVERY_BLOCK);
  });

  it("turns audio into an embedded blob before 2025-03-26 and resource links into text before 2025-06-18, dropping structuredContent", () => {
    const old = toolResultToCallToolResult(EVERY_BLOCK, featuresOf("2024-11-05"));
    expect(old.content[2]).toEqual({ type: "resource", resource: { uri: `${CONTENT_URI_PREFIX}2`, mimeType: "audio/wav", blob: "UklGRg==" }, annotations: { priority: 0.5 } });
    expect(old.content[3]).toEqual({ type: "text", text: "doc <test://doc>: a document" });
    expect(old).not.toHaveProperty("structuredContent");
    expect(old._meta).toEqual(EVERY_BLOCK._meta);
    const mid = toolResultToCallToolResult(EVERY_BLOCK, featuresOf("2025-03-26"));
    expect(mid.content[2]).toEqual(EVERY_BLOCK.content[2]);
    expect(mid.content[3]).toMatchObject({ type: "text" });
  });

  it("is valid against every revision's CallToolResult schema once shaped", () => {
    for (const v of VERSIONS) {
      const result = decorateResult(v, "tools/call", toolResultToCallToolResult(EVERY_BLOCK, featuresOf(v)), { serverInfo: { name: "t", version: "1" } });
      expect(validatorsFor(v)!.validate("CallToolResult", result), v).toBeNull();
    }
  });

  it("keeps isError of a successful ToolResponse whose result is a CallToolResult", () => {
    const response = create(ToolResponseSchema, { success: true, result: { content: [{ type: "text", text: "bad input" }], isError: true } });
    expect(toolResponseToCallToolResult(response, featuresOf("2025-11-25"))).toEqual({ content: [{ type: "text", text: "bad input" }], isError: true });
  });
});

const enc = (s: string) => new TextEncoder().encode(s);
const chunk = (data: string, contentType: string) => create(StreamChunkSchema, { data: enc(data), contentType });

describe("stream chunks", () => {
  it("log chunks are log messages, not progress; the result chunk is mapped like a unary result", () => {
    const acc = new StreamAccumulator();
    expect(acc.add(chunk('{"level":"warning","data":{"x":1}}', LOG_CONTENT_TYPE))).toEqual({ kind: "log", message: { level: "warning", data: { x: 1 } } });
    expect(acc.add(chunk("not json", LOG_CONTENT_TYPE))).toEqual({ kind: "log", message: { level: "info", data: "not json" } });
    expect(acc.add(chunk('{"progress":1}', PROGRESS_CONTENT_TYPE))).toEqual({ kind: "progress", update: { progress: 1 } });
    expect(acc.add(chunk(JSON.stringify({ content: [{ type: "image", data: PNG, mimeType: "image/png" }] }), RESULT_CONTENT_TYPE))).toEqual({ kind: "result" });
    expect(acc.result(create(StreamEndSchema, { success: true }), featuresOf("2025-11-25"))).toEqual({ content: [{ type: "image", data: PNG, mimeType: "image/png" }] });
  });

  it("a result chunk that is not a JSON object gives an isError result", () => {
    const acc = new StreamAccumulator();
    acc.add(chunk("[1]", RESULT_CONTENT_TYPE));
    expect(acc.result(create(StreamEndSchema, { success: true }))).toMatchObject({ isError: true });
  });
});

type Msg = { id?: unknown; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown>; error?: { code: number; message: string } };

/** `count` streams: a debug and a warning log chunk, one progress chunk, then an image result. */
const logging: StreamReply = async (request, emit) => {
  const streamId = request.requestId;
  emit({ case: "streamChunk", value: { streamId, contentType: LOG_CONTENT_TYPE, data: enc('{"level":"debug","data":"fine detail"}') } });
  emit({ case: "streamChunk", value: { streamId, contentType: LOG_CONTENT_TYPE, data: enc('{"level":"warning","logger":"disk","data":"almost full"}') } });
  emit({ case: "streamChunk", value: { streamId, contentType: PROGRESS_CONTENT_TYPE, data: enc('{"progress":1,"total":1}') } });
  emit({
    case: "streamChunk",
    value: { streamId, contentType: RESULT_CONTENT_TYPE, data: enc(JSON.stringify({ content: [{ type: "image", data: PNG, mimeType: "image/png" }] })) },
  });
  emit({ case: "streamEnd", value: { streamId, success: true } });
};

describe("tool log messages through the bridge", () => {
  it("with a log level set, a call streams and its log chunks become notifications/message at or above the level", async () => {
    const sender = new FakeStreamingSender(scripted, logging);
    const { init, send, out } = harness(sender, { watchToolChanges: false });
    await init("2025-11-25");
    await send({ jsonrpc: "2.0", id: 1, method: "logging/setLevel", params: { level: "warning" } });
    await send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "count", arguments: { to: 1 } } });
    expect(sender.streamRequests.map((r) => r.request.case)).toEqual(["streamStart"]);
    const msgs = (out as Msg[]).slice(1);
    expect(msgs.map((m) => m.method ?? m.id)).toEqual(["notifications/message", 2]); // no token: no progress; debug filtered
    expect(msgs[0]!.params).toEqual({ level: "warning", logger: "disk", data: "almost full" });
    expect(validatorsFor("2025-11-25")!.validate("LoggingMessageNotification", msgs[0])).toBeNull();
    expect(msgs[1]!.result).toEqual({ content: [{ type: "image", data: PNG, mimeType: "image/png" }] });
  });

  it("names the tool as logger when the chunk names none, and sends progress too when there is a token", async () => {
    const sender = new FakeStreamingSender(scripted, logging);
    const { init, send, out } = harness(sender, { watchToolChanges: false });
    await init("2025-11-25");
    await send({ jsonrpc: "2.0", id: 1, method: "logging/setLevel", params: { level: "debug" } });
    await send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "count", arguments: { to: 1 }, _meta: { progressToken: "t" } } });
    const msgs = (out as Msg[]).slice(1).filter((m) => m.params?.logger !== "orchestra-stdio"); // the bridge's own debug lines
    expect(msgs.map((m) => m.method ?? m.id)).toEqual(["notifications/message", "notifications/message", "notifications/progress", 2]);
    expect(msgs[0]!.params).toEqual({ level: "debug", logger: "count", data: "fine detail" });
  });

  it("without a log level or a progress token, a call is a unary tool_call", async () => {
    const sender = new FakeStreamingSender(scripted, logging);
    const { init, send, out } = harness(sender, { watchToolChanges: false });
    await init("2025-11-25");
    await send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "count", arguments: { to: 1 } } });
    expect(sender.streamRequests).toHaveLength(0);
    expect((out as Msg[])[0]!.result).toEqual({ content: [{ type: "text", text: "unary" }] });
  });

  it("answers -32603 naming the pointer when a tool's CallToolResult is not valid in the revision", async () => {
    const sender = new FakeStreamingSender((request) => {
      if (request.request.case === "toolCall") {
        return answer(request, { case: "toolCall", value: { success: true, result: { content: [{ type: "image", mimeType: "image/png" }] } } });
      }
      return scripted(request);
    }, logging);
    const { init, send, out } = harness(sender, { watchToolChanges: false });
    await init("2025-11-25");
    await send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "count", arguments: { to: 1 } } });
    const reply = (out as Msg[])[0]!;
    expect(reply.error?.code).toBe(-32603);
    expect(reply.error?.message).toMatch(/\/content\/0/);
  });
});

describe("the reference orchestrator's ctx.log, ctx.progress and stream results", () => {
  const tool = {
    name: "t",
    description: "logs",
    inputSchema: { type: "object" },
    async handler(_a: Record<string, unknown>, ctx: { log: (l: "info", d: unknown) => void }) {
      ctx.log("info", "unary: dropped");
      return { content: [{ type: "text", text: "done" }] };
    },
    async stream(_a: Record<string, unknown>, ctx: { log: (l: "info", d: unknown, logger?: string) => void; progress: (p: number, t?: number) => void }) {
      ctx.log("info", { step: 1 }, "mine");
      ctx.progress(1, 2);
      return { content: [{ type: "text", text: "done" }] };
    },
  };

  it("emits a log chunk, a progress chunk and the result chunk on stream_start; ctx.log is a no-op in a unary call", async () => {
    const registry = new ToolRegistry([tool]);
    const chunks: ToolChunk[] = [];
    const outcome = await registry.callStream("t", {}, { signal: new AbortController().signal }, (c) => chunks.push(c));
    expect(outcome).toEqual({ success: true });
    expect(chunks.map((c) => [c.contentType, JSON.parse(c.data as string)])).toEqual([
      [LOG_CONTENT_TYPE, { level: "info", logger: "mine", data: { step: 1 } }],
      [PROGRESS_CONTENT_TYPE, { progress: 1, total: 2 }],
      [RESULT_CONTENT_TYPE, { content: [{ type: "text", text: "done" }] }],
    ]);
    expect(await registry.call("t", {}, { signal: new AbortController().signal })).toEqual({ success: true, result: { content: [{ type: "text", text: "done" }] } });
  });

  it("refuses a stream result that is not a plain JSON object with invalid_result", async () => {
    const registry = new ToolRegistry([{ ...tool, stream: async () => ({ n: Number.NaN }) }]);
    const outcome = await registry.callStream("t", {}, { signal: new AbortController().signal }, () => {});
    expect(outcome).toMatchObject({ success: false, errorCode: "invalid_result" });
  });
});

describe("media in prompts (data: URLs in ContentBlock.text)", () => {
  const response = create(PromptGetResponseSchema, {
    messages: [
      { role: "user", content: { type: "image", text: mediaDataUrl("image/png", PNG) } },
      { role: "assistant", content: { type: "audio", text: mediaDataUrl("audio/wav", "UklGRg==") } },
    ],
  });

  it("become image and audio content, audio as an embedded blob before 2025-03-26", () => {
    expect(promptGetResponseToResult(response, new Map(), featuresOf("2025-06-18")).messages.map((m) => m.content)).toEqual([
      { type: "image", data: PNG, mimeType: "image/png" },
      { type: "audio", data: "UklGRg==", mimeType: "audio/wav" },
    ]);
    const old = promptGetResponseToResult(response, new Map(), featuresOf("2024-11-05"));
    expect(old.messages[1]!.content).toMatchObject({ type: "resource", resource: { mimeType: "audio/wav", blob: "UklGRg==" } });
    for (const v of VERSIONS) {
      const result = decorateResult(v, "prompts/get", promptGetResponseToResult(response, new Map(), featuresOf(v)), { serverInfo: { name: "t", version: "1" } });
      expect(validatorsFor(v)!.validate("GetPromptResult", result), v).toBeNull();
    }
  });

  it("a media block whose text is not a base64 data: URL cannot be expressed", () => {
    const bad = create(PromptGetResponseSchema, { messages: [{ role: "user", content: { type: "image", text: "https://example.com/a.png" } }] });
    expect(() => promptGetResponseToResult(bad)).toThrow(PromptTranslationError);
  });
});
