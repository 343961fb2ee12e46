/**
 * Progress and tool-set changes through a streaming sender (fake): a tools/call with a progress
 * token uses stream_start (chunks → notifications/progress, stream_end → result), falls back to
 * tool_call when the orchestrator refuses to stream, stops on cancellation; the tools
 * subscription turns event deliveries into notifications/tools/list_changed.
 */
import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import { WATCH_RETRY_MAX_MS } from "../../src/bridge/handler.js";
import { SenderError } from "../../src/transport/sender.js";
import { StreamUnsupportedError } from "../../src/transport/sender.js";
import { ToolArgumentChecker } from "../../src/bridge/tool-args.js";
import { validatorsFor } from "../../src/mcp/validation.js";
import { PROGRESS_CONTENT_TYPE } from "../../src/translate/streams.js";
import { answer, FakeStreamingSender, harness, modernMeta, scripted, type StreamReply } from "../helpers/bridge-fakes.js";
import type { Reply } from "../helpers/fake-sender.js";

/** {@link scripted}, whose tool list also holds `extra` while `grown.value` is set (a tool-set change). */
function growable(): { reply: Reply; grown: { value: boolean } } {
  const grown = { value: false };
  const reply: Reply = async (request) => {
    const r = await scripted(request);
    if (request.request.case === "listTools" && grown.value && r.response.case === "listTools") {
      return answer(request, { case: "listTools", value: { tools: [...r.response.value.tools, { name: "extra", inputSchema: { type: "object" } }] } });
    }
    return r;
  };
  return { reply, grown };
}

const V = "2025-06-18";
const enc = (s: string) => new TextEncoder().encode(s);

/** Streams `count` as one chunk per number; refuses `echo`; subscriptions wait until aborted. */
const streams: StreamReply = async (request, emit, options) => {
  const req = request.request;
  if (req.case === "subscribe") {
    await new Promise<void>((resolve) => options?.signal?.addEventListener("abort", () => resolve(), { once: true }));
    return;
  }
  if (req.case !== "streamStart") throw new Error(`unexpected ${req.case}`);
  const streamId = req.value.streamId;
  if (req.value.toolName !== "count") {
    emit({ case: "streamEnd", value: { streamId, success: false, errorCode: "stream_unsupported" } });
    return;
  }
  const to = Number(req.value.arguments?.to);
  for (let n = 1; n <= to; n++) emit({ case: "streamChunk", value: { streamId, data: enc(`${n}\n`), sequence: BigInt(n - 1) } });
  emit({ case: "streamEnd", value: { streamId, success: true, totalChunks: BigInt(to) } });
};

type Msg = { id?: unknown; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown>; error?: { code: number } };

describe("tools/call with a progress token", () => {
  it("streams: each chunk is one notifications/progress before the result built from the chunks", async () => {
    const sender = new FakeStreamingSender(scripted, streams);
    const { init, send, out } = harness(sender, { watchToolChanges: false });
    await init(V);
    await send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "count", arguments: { to: 3 }, _meta: { progressToken: "tok" } } });
    const start = sender.streamRequests[0]!;
    expect(start.request.case).toBe("streamStart");
    expect(start.request.value).toMatchObject({ toolName: "count", arguments: { to: 3 }, callerPlugin: "transport.stdio", streamId: start.requestId });
    const msgs = out as Msg[];
    expect(msgs.map((m) => m.method ?? m.id)).toEqual(["notifications/progress", "notifications/progress", "notifications/progress", 1]);
    expect(msgs.slice(0, 3).map((m) => m.params)).toEqual([
      { progressToken: "tok", progress: 1, message: "1\n" },
      { progressToken: "tok", progress: 2, message: "2\n" },
      { progressToken: "tok", progress: 3, message: "3\n" },
    ]);
    for (const m of msgs.slice(0, 3)) expect(validatorsFor(V)!.validate("ProgressNotification", m)).toBeNull();
    expect(msgs[3]!.result).toEqual({ content: [{ type: "text", text: "1\n2\n3\n" }] });
    expect(sender.requests.filter((r) => r.request.case === "toolCall")).toHaveLength(0);
  });

  it("reports progress-only chunks with their progress, total and message", async () => {
    const sender = new FakeStreamingSender(scripted, async (request, emit) => {
      const streamId = request.requestId;
      emit({ case: "streamChunk", value: { streamId, contentType: PROGRESS_CONTENT_TYPE, data: enc('{"progress":5,"total":10,"message":"half"}') } });
      emit({ case: "streamChunk", value: { streamId, data: enc("done") } });
      emit({ case: "streamEnd", value: { streamId, success: true } });
    });
    const { init, send, out } = harness(sender, { watchToolChanges: false });
    await init(V);
    await send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "count", arguments: { to: 1 }, _meta: { progressToken: 9 } } });
    const msgs = out as Msg[];
    expect(msgs[0]!.params).toEqual({ progressToken: 9, progress: 5, total: 10, message: "half" });
    expect(msgs[1]!.params).toEqual({ progressToken: 9, progress: 5, message: "done" }); // never decreases
    expect(msgs[2]!.result).toEqual({ content: [{ type: "text", text: "done" }] });
  });

  it("falls back to tool_call when the orchestrator refuses to stream the tool, then calls it unary directly", async () => {
    const sender = new FakeStreamingSender(scripted, streams);
    const { init, send, out } = harness(sender, { watchToolChanges: false });
    await init(V);
    const call = { jsonrpc: "2.0", method: "tools/call", params: { name: "echo", arguments: { text: "hi" }, _meta: { progressToken: "p" } } };
    await send({ ...call, id: 1 });
    await send({ ...call, id: 2 });
    expect(sender.streamRequests).toHaveLength(1);
    expect(sender.requests.filter((r) => r.request.case === "toolCall")).toHaveLength(2);
    expect((out as Msg[]).map((m) => m.result)).toEqual([{ content: [{ type: "text", text: "hi" }] }, { content: [{ type: "text", text: "hi" }] }]);
  });

  it("falls back to tool_call when the orchestrator does not serve stream_start at all", async () => {
    const sender = new FakeStreamingSender(scripted, async () => {
      throw new StreamUnsupportedError("unsupported");
    });
    const { init, send, out } = harness(sender, { watchToolChanges: false });
    await init(V);
    await send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "count", arguments: { to: 2 }, _meta: { progressToken: "p" } } });
    expect((out[0] as Msg).result).toEqual({ content: [{ type: "text", text: "unary" }] });
  });

  it("uses tool_call without a progress token", async () => {
    const sender = new FakeStreamingSender(scripted, streams);
    const { init, send } = harness(sender, { watchToolChanges: false });
    await init(V);
    await send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "count", arguments: { to: 2 } } });
    expect(sender.streamRequests).toHaveLength(0);
  });

  it("a failed stream_end is an isError result", async () => {
    const sender = new FakeStreamingSender(scripted, async (request, emit) => {
      emit({ case: "streamChunk", value: { streamId: "s", data: enc("1") } });
      emit({ case: "streamEnd", value: { streamId: "s", success: false, errorCode: "bad", errorMessage: "went wrong" } });
    });
    const { init, send, out } = harness(sender, { watchToolChanges: false });
    await init(V);
    await send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "count", arguments: { to: 2 }, _meta: { progressToken: "p" } } });
    expect((out.at(-1) as Msg).result).toEqual({ content: [{ type: "text", text: "went wrong" }], isError: true });
  });

  it("on notifications/cancelled aborts the stream and sends neither progress nor a response afterwards", async () => {
    let emitLater!: (n: number) => void;
    const sender = new FakeStreamingSender(scripted, (request, emit) => {
      emit({ case: "streamChunk", value: { streamId: request.requestId, data: enc("1") } });
      emitLater = (n) => emit({ case: "streamChunk", value: { streamId: request.requestId, data: enc(String(n)) } });
      return new Promise<void>(() => {});
    });
    const { init, handler, out } = harness(sender, { watchToolChanges: false });
    await init(V);
    handler.handleLine(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "count", arguments: { to: 9 }, _meta: { progressToken: "p" } } }));
    await new Promise((r) => setTimeout(r, 20));
    handler.handleLine(JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 5 } }));
    emitLater(2);
    await handler.idle();
    expect(sender.streamOptions[0]!.signal!.aborted).toBe(true);
    expect((out as Msg[]).map((m) => m.method ?? m.id)).toEqual(["notifications/progress"]);
  });

  it("streams in the stateless revision too, with resultType on the result", async () => {
    const sender = new FakeStreamingSender(scripted, streams);
    const { send, out } = harness(sender, { watchToolChanges: false });
    await send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "count", arguments: { to: 2 }, _meta: modernMeta({ progressToken: "m" }) } });
    expect((out as Msg[]).map((m) => m.method ?? m.id)).toEqual(["notifications/progress", "notifications/progress", 1]);
    expect((out.at(-1) as Msg).result).toMatchObject({ resultType: "complete", content: [{ type: "text", text: "1\n2\n" }] });
  });
});

describe("tool-set changes", () => {
  it("subscribes to the tools topic, advertises listChanged and notifies an event that changed the tool set", async () => {
    let deliver!: () => void;
    const { reply, grown } = growable();
    const sender = new FakeStreamingSender(reply, async (request, emit, options) => {
      if (request.request.case !== "subscribe") throw new Error("unexpected");
      deliver = () => emit({ case: "eventDelivery", value: { subscriptionId: request.request.value.subscriptionId, topic: "tools", eventType: "list_changed" } });
      await new Promise<void>((resolve) => options?.signal?.addEventListener("abort", () => resolve(), { once: true }));
    });
    const { init, send, out, handler } = harness(sender);
    const result = await init(V);
    expect(result.capabilities).toMatchObject({ tools: { listChanged: true } });
    const sub = sender.streamRequests[0]!;
    expect(sub.request.case === "subscribe" && sub.request.value.topic).toBe("tools");
    await send({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(handler.tools.peek("echo")).toBeDefined();
    out.length = 0;
    grown.value = true;
    deliver();
    await vi.waitFor(() => expect(out).toEqual([{ jsonrpc: "2.0", method: "notifications/tools/list_changed" }]));
    expect(handler.tools.peek("extra")).toBeDefined(); // the list fetched for the comparison
    handler.close();
    expect(sender.streamOptions[0]!.signal!.aborted).toBe(true);
  });

  it("delivers tool-set changes on a 2026-07-28 subscriptions/listen stream until cancelled or shut down", async () => {
    let deliver!: () => void;
    const { reply, grown } = growable();
    const sender = new FakeStreamingSender(reply, async (request, emit, options) => {
      if (request.request.case !== "subscribe") throw new Error("unexpected");
      deliver = () => emit({ case: "eventDelivery", value: { topic: "tools", eventType: "list_changed" } });
      await new Promise<void>((resolve) => options?.signal?.addEventListener("abort", () => resolve(), { once: true }));
    });
    const { handler, out, send } = harness(sender);
    const v2026 = validatorsFor("2026-07-28")!;
    await send({ jsonrpc: "2.0", id: "d", method: "server/discover", params: { _meta: modernMeta() } });
    expect((out[0] as Msg).result!.capabilities).toMatchObject({ tools: { listChanged: true } });
    out.length = 0;
    const listen = (id: string) => ({
      jsonrpc: "2.0",
      id,
      method: "subscriptions/listen",
      params: { _meta: modernMeta(), notifications: { toolsListChanged: true, promptsListChanged: true, resourceSubscriptions: ["orchestra://storage/x"] } },
    });
    handler.handleLine(JSON.stringify(listen("listen-1")));
    handler.handleLine(JSON.stringify(listen("listen-2")));
    expect(out).toEqual([
      {
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: { _meta: { "io.modelcontextprotocol/subscriptionId": "listen-1" }, notifications: { toolsListChanged: true } },
      },
      {
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: { _meta: { "io.modelcontextprotocol/subscriptionId": "listen-2" }, notifications: { toolsListChanged: true } },
      },
    ]);
    for (const m of out) expect(v2026.validate("SubscriptionsAcknowledgedNotification", m)).toBeNull();
    out.length = 0;
    handler.handleLine(JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "listen-2" } }));
    grown.value = true;
    deliver();
    await vi.waitFor(() => expect(out).toHaveLength(1));
    expect(out).toEqual([{ jsonrpc: "2.0", method: "notifications/tools/list_changed", params: { _meta: { "io.modelcontextprotocol/subscriptionId": "listen-1" } } }]);
    expect(v2026.validate("ToolListChangedNotification", out[0])).toBeNull();
    out.length = 0;
    handler.close();
    await handler.idle();
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ id: "listen-1", result: { resultType: "complete", _meta: { "io.modelcontextprotocol/subscriptionId": "listen-1" } } });
    expect(v2026.validate("SubscriptionsListenResult", (out[0] as Msg).result)).toBeNull();
  });

  it("advertises listChanged false when the sender cannot stream", async () => {
    const { FakeSender } = await import("../helpers/bridge-fakes.js");
    const { init } = harness(new FakeSender(scripted));
    expect((await init(V)).capabilities).toMatchObject({ tools: { listChanged: false } });
  });

  it("retries a lost tools subscription with backoff capped at WATCH_RETRY_MAX_MS (1, 2, 4, then every 5 s)", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const sender = new FakeStreamingSender(scripted, async () => {
        throw new SenderError("closed", "connection lost");
      });
      const { init, handler } = harness(sender);
      await init(V);
      // Attempts at 0, 1, 3, 7, 12, 17, 22 s; with the old 30 s cap only 0, 1, 3, 7, 15 s.
      await vi.advanceTimersByTimeAsync(22_100);
      expect(WATCH_RETRY_MAX_MS).toBe(5_000);
      expect(sender.streamRequests).toHaveLength(7);
      handler.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it("stops watching after the orchestrator refuses subscribe", async () => {
    const sender = new FakeStreamingSender(scripted, async () => {
      throw new StreamUnsupportedError("no subscribe");
    });
    const { init, handler } = harness(sender);
    await init(V);
    await new Promise((r) => setTimeout(r, 20));
    expect(sender.streamRequests).toHaveLength(1);
    handler.close();
  });
});

describe("ToolArgumentChecker", () => {
  it("compiles each distinct schema once and reports the first problem with its pointer", async () => {
    const checker = new ToolArgumentChecker(undefined, { validatorCache: null });
    const schema = { type: "object", properties: { a: { type: "integer" } }, required: ["a"] };
    expect(await checker.check(schema, { a: 1 }, V)).toBeNull();
    expect(await checker.check({ ...schema }, { a: "x" }, V)).toEqual({ pointer: "/a", reason: "must be integer" });
    expect(await checker.check(schema, undefined, V)).toEqual({ pointer: "", reason: "must have required property 'a'" });
    expect(checker.compilations).toBe(1);
    // An uncompilable schema is not enforced.
    expect(await checker.check({ type: "object", properties: { a: { $ref: "#/nowhere" } } }, { a: 1 }, V)).toBeNull();
  });
});

/** A subscription that stays open until aborted; `deliver(type)` emits one event on it. */
function openSubscription(): { reply: StreamReply; deliver: (eventType?: string) => void } {
  let emitEvent: ((eventType: string) => void) | undefined;
  const reply: StreamReply = async (request, emit, options) => {
    if (request.request.case !== "subscribe") throw new Error(`unexpected ${request.request.case}`);
    emitEvent = (eventType) => emit({ case: "eventDelivery", value: { topic: "tools", eventType } });
    await new Promise<void>((resolve) => options?.signal?.addEventListener("abort", () => resolve(), { once: true }));
  };
  return { reply, deliver: (eventType = "list_changed") => emitEvent!(eventType) };
}

describe("what the bridge learns from the orchestrator (docs/mcp-orchestra-mapping.md)", () => {
  it("refusalOf: unknown_request to a streaming kind and an empty PluginResponse are refusals; answers of the kind are not", async () => {
    const { refusalOf } = await import("../../src/transport/sender.js");
    const { create } = await import("@bufbuild/protobuf");
    const { PluginRequestSchema } = await import("../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js");
    const start = create(PluginRequestSchema, { requestId: "r", request: { case: "streamStart", value: { toolName: "echo" } } });
    const sub = create(PluginRequestSchema, { requestId: "s", request: { case: "subscribe", value: { topic: "tools" } } });
    const call = create(PluginRequestSchema, { requestId: "c", request: { case: "toolCall", value: { toolName: "echo" } } });
    const upstream = { case: "toolCall" as const, value: { success: false, errorCode: "unknown_request", errorMessage: "unrecognized request type" } };
    expect(refusalOf(start, answer(start, upstream))).toBe("refused streamStart: unrecognized request type");
    expect(refusalOf(sub, answer(sub, { case: undefined }))).toBe("answered subscribe with an empty PluginResponse");
    expect(refusalOf(start, answer(start, { case: undefined }))).toMatch(/empty PluginResponse/);
    // Not refusals: the kind's own answers, another tool_call failure, and a tool_call's own answer.
    expect(refusalOf(start, answer(start, { case: "streamChunk", value: { data: enc("x") } }))).toBeUndefined();
    expect(refusalOf(sub, answer(sub, { case: "eventDelivery", value: { topic: "tools" } }))).toBeUndefined();
    expect(refusalOf(start, answer(start, { case: "toolCall", value: { success: false, errorCode: "tool_not_found" } }))).toBeUndefined();
    expect(refusalOf(start, answer(start, { case: "toolCall", value: { success: true, result: { text: "x" } } }))).toBeUndefined();
    expect(refusalOf(call, answer(call, upstream))).toBeUndefined();
  });

  it("a progress-token call refused with unknown_request is retried as a plain tool_call (the echo, no error, no progress); later ones skip stream_start", async () => {
    // The upstream Go orchestrator's answer to stream_start.
    const sender = new FakeStreamingSender(scripted, async (request, emit) => {
      emit({ case: "toolCall", value: { success: false, errorCode: "unknown_request", errorMessage: "unrecognized request type" } });
    });
    const { init, send, out } = harness(sender, { watchToolChanges: false });
    await init(V);
    const call = (id: number, text: string) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: { text }, _meta: { progressToken: id } } });
    await send(call(1, "first"));
    await send(call(2, "second"));
    await send({ ...call(3, "third"), params: { name: "count", arguments: { to: 2 }, _meta: { progressToken: 3 } } });
    expect(out).toEqual([
      { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "first" }] } },
      { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "second" }] } },
      { jsonrpc: "2.0", id: 3, result: { content: [{ type: "text", text: "unary" }] } },
    ]);
    expect(sender.streamRequests).toHaveLength(1); // the kind is known refused: count is not tried either
    expect(sender.requests.filter((r) => r.request.case === "toolCall")).toHaveLength(3);
  });

  it("stops the tool-change subscription after an empty PluginResponse, sends no list_changed and no longer advertises listChanged", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      // The upstream Go orchestrator's answer to subscribe: PluginResponse{} and the stream closed.
      const sender = new FakeStreamingSender(scripted, async (request, emit) => {
        emit({ case: undefined });
      });
      const records: Array<{ level: number; msg: string; err?: unknown; answer?: string }> = [];
      const logger = pino({ level: "debug" }, { write: (line: string) => void records.push(JSON.parse(line) as { level: number; msg: string }) });
      const { init, send, out, handler } = harness(sender, { logger });
      expect((await init(V)).capabilities).toMatchObject({ tools: { listChanged: true } }); // not known yet
      await send({ jsonrpc: "2.0", id: 1, method: "tools/list" });
      out.length = 0;
      await vi.advanceTimersByTimeAsync(30_000);
      expect(sender.streamRequests).toHaveLength(1);
      expect(out).toEqual([]);
      expect(handler.watchesToolChanges).toBe(false);
      // Expected of the main deployment target: one info line, no warning.
      expect(records.filter((r) => r.level >= 30).map((r) => [r.level, r.msg])).toEqual([[30, expect.stringContaining("does not serve tool-change subscriptions")]]);
      // The orchestrator's answer is a detail, not an `err` (log viewers show a record with `err` as an error).
      const info = records.find((r) => r.level === 30)!;
      expect(info.err).toBeUndefined();
      expect(info.answer).toEqual(expect.stringContaining("empty PluginResponse"));
      // What is answered after learning it no longer promises list changes.
      await send({ jsonrpc: "2.0", id: "d", method: "server/discover", params: { _meta: modernMeta() } });
      expect((out[0] as Msg).result!.capabilities).toMatchObject({ tools: { listChanged: false } });
      handler.handleLine(JSON.stringify({ jsonrpc: "2.0", id: "l", method: "subscriptions/listen", params: { _meta: modernMeta(), notifications: { toolsListChanged: true } } }));
      expect(out[1]).toMatchObject({ method: "notifications/subscriptions/acknowledged", params: { notifications: {} } });
      handler.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it("an event (or a resync after a lost subscription) whose tool set is unchanged sends no list_changed", async () => {
    const sub = openSubscription();
    const { reply, grown } = growable();
    const sender = new FakeStreamingSender(reply, sub.reply);
    const { init, send, out, handler } = harness(sender);
    await init(V);
    await send({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    out.length = 0;
    const { RESUBSCRIBED_EVENT_TYPE } = await import("../../src/transport/rpc-client.js");
    const fetchesBefore = handler.tools.fetches;
    sub.deliver(RESUBSCRIBED_EVENT_TYPE);
    sub.deliver("list_changed");
    await vi.waitFor(() => expect(handler.tools.fetches).toBeGreaterThanOrEqual(fetchesBefore + 2)); // compared (the second event folded in)
    await send({ jsonrpc: "2.0", id: 2, method: "ping" }); // let the last comparison settle
    expect(out).toEqual([{ jsonrpc: "2.0", id: 2, result: {} }]);
    // Now it really changes: announced once.
    out.length = 0;
    grown.value = true;
    sub.deliver("list_changed");
    await vi.waitFor(() => expect(out).toEqual([{ jsonrpc: "2.0", method: "notifications/tools/list_changed" }]));
    handler.close();
  });

  it("a tool the orchestrator does not have is -32602, whether the catalogue, a tool_call or a stream_end says so", async () => {
    // Listed, but the orchestrator answers tool_not_found (its plugin went away): unary and streaming.
    const gone: Reply = async (request) =>
      request.request.case === "toolCall"
        ? answer(request, { case: "toolCall", value: { success: false, errorCode: "tool_not_found", errorMessage: 'no plugin provides tool "echo"' } })
        : scripted(request);
    const sender = new FakeStreamingSender(gone, async (request, emit) => {
      emit({ case: "streamEnd", value: { success: false, errorCode: "tool_not_found", errorMessage: 'unknown tool "count"' } });
    });
    const { init, send, out } = harness(sender, { watchToolChanges: false });
    await init(V);
    await send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text: "x" } } });
    await send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "count", arguments: { to: 1 }, _meta: { progressToken: "t" } } });
    await send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "nowhere", arguments: {} } });
    expect(out).toEqual([
      { jsonrpc: "2.0", id: 1, error: { code: -32602, message: "Unknown tool: echo", data: { tool: "echo", detail: 'no plugin provides tool "echo"' } } },
      { jsonrpc: "2.0", id: 2, error: { code: -32602, message: "Unknown tool: count", data: { tool: "count", detail: 'unknown tool "count"' } } },
      { jsonrpc: "2.0", id: 3, error: { code: -32602, message: "Unknown tool: nowhere", data: { tool: "nowhere", detail: "not in the orchestrator's tool list" } } },
    ]);
    expect(sender.requests.filter((r) => r.request.case === "toolCall").map((r) => r.request.value)).toMatchObject([{ toolName: "echo" }]);
    // Each tool_not_found made the cached list stale: fetched again for the next lookup.
    expect(sender.requests.filter((r) => r.request.case === "listTools")).toHaveLength(3);
  });
});
