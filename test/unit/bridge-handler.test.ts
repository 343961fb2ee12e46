/**
 * The bridge's MCP behaviour with a fake Sender: one named test per behaviour of the seed
 * (initialize, ping, tools/list, tools/call success and failure, sender failures, invalid input).
 */
import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import {
  ListToolsResponseSchema,
  PluginResponseSchema,
  ToolDefinitionSchema,
  ToolResponseSchema,
  type PluginRequest,
  type PluginResponse,
} from "../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { serialize } from "../../src/jsonrpc/serialize.js";
import { McpHandler } from "../../src/bridge/handler.js";
import type { OutboundLine } from "../../src/jsonrpc/message.js";
import { SenderError } from "../../src/transport/sender.js";
import { SUPPORTED_PROTOCOL_VERSIONS } from "../../src/mcp/versions.js";
import { FakeSender, type Reply } from "../helpers/fake-sender.js";
import { PassThrough } from "node:stream";
import { StdioBridge } from "../../src/bridge/stdio-bridge.js";
import { STDIO_MAX_LINE_BYTES } from "../../src/framing/line-splitter.js";
import { fitOutboundLine } from "../../src/jsonrpc/outbound-limit.js";

const UUIDV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function toolResponse(request: PluginRequest, fields: Parameters<typeof create<typeof ToolResponseSchema>>[1]): PluginResponse {
  return create(PluginResponseSchema, {
    requestId: request.requestId,
    response: { case: "toolCall", value: create(ToolResponseSchema, fields) },
  });
}

const echoOrchestrator: Reply = (request) => {
  switch (request.request.case) {
    case "listTools":
      return create(PluginResponseSchema, {
        requestId: request.requestId,
        response: {
          case: "listTools",
          value: create(ListToolsResponseSchema, {
            tools: [
              create(ToolDefinitionSchema, {
                name: "echo",
                description: "Echoes text",
                inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
              }),
              create(ToolDefinitionSchema, { name: "fails", inputSchema: { type: "object" } }),
              create(ToolDefinitionSchema, { name: "slow", inputSchema: { type: "object" } }),
            ],
          }),
        },
      });
    case "toolCall": {
      const call = request.request.value;
      if (call.toolName === "echo") return toolResponse(request, { success: true, result: { text: String(call.arguments?.text) } });
      if (call.toolName === "fails") return toolResponse(request, { success: false, errorCode: "boom", errorMessage: "it broke" });
      return toolResponse(request, { success: false, errorCode: "tool_not_found" });
    }
    default:
      throw new Error(`unexpected ${request.request.case}`);
  }
};

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } },
};

/**
 * A handler on a fake orchestrator. By default the session is initialized (protocol 2025-06-18)
 * and that answer cleared from `out`: a dual-era server rejects other requests before
 * `initialize` unless they name a per-request version (src/mcp/negotiation.ts).
 */
function setup(reply: Reply = echoOrchestrator, { initialized = true }: { initialized?: boolean } = {}) {
  const sender = new FakeSender(reply);
  const out: OutboundLine[] = [];
  const handler = new McpHandler({
    sender,
    sink: (m) => out.push(JSON.parse(serialize(m)) as OutboundLine), // as written to stdout (exact ids spliced)
    serverInfo: { name: "orchestra-stdio", version: "0.0.0-test" },
    sessionId: "session-1",
  });
  if (initialized) {
    handler.handleLine(JSON.stringify(initialize));
    out.length = 0;
  }
  const send = async (message: unknown) => {
    handler.handleLine(typeof message === "string" ? message : JSON.stringify(message));
    await handler.idle();
  };
  return { sender, out, handler, send };
}

describe("McpHandler", () => {
  it("answers the initialize handshake locally with version, capabilities and serverInfo", async () => {
    const { out, send, sender, handler } = setup(echoOrchestrator, { initialized: false });
    await send(initialize);
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({
      jsonrpc: "2.0",
      id: 1,
      result: {
        protocolVersion: "2025-06-18",
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: "orchestra-stdio", version: "0.0.0-test" },
      },
    });
    expect(sender.requests).toHaveLength(0);
    expect(handler.initialized).toBe(true);
  });

  it("answers initialize with our latest version when the client's is unsupported", async () => {
    const { out, send } = setup(echoOrchestrator, { initialized: false });
    await send({ ...initialize, params: { ...initialize.params, protocolVersion: "1999-01-01" } });
    const latestInitializeFamily = SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v < "2026-07-28").at(-1);
    expect((out[0] as { result: { protocolVersion: string } }).result.protocolVersion).toBe(latestInitializeFamily);
  });

  it("answers ping with an empty result", async () => {
    const { out, send } = setup();
    await send({ jsonrpc: "2.0", id: "p", method: "ping" });
    expect(out).toEqual([{ jsonrpc: "2.0", id: "p", result: {} }]);
  });

  it("maps tools/list to list_tools and the ToolDefinitions to MCP tools", async () => {
    const { out, send, sender } = setup();
    await send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    expect(sender.requests[0]!.request.case).toBe("listTools");
    expect(sender.requests[0]!.requestId).toMatch(UUIDV7);
    expect(out).toEqual([
      {
        jsonrpc: "2.0",
        id: 2,
        result: {
          tools: [
            {
              name: "echo",
              description: "Echoes text",
              inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
            },
            { name: "fails", inputSchema: { type: "object" } },
            { name: "slow", inputSchema: { type: "object" } },
          ],
        },
      },
    ]);
  });

  it("maps a successful tools/call to tool_call and back to a text block", async () => {
    const { out, send, sender } = setup();
    await send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo", arguments: { text: "hi ✓" } } });
    // The tool list is fetched first (argument check against the cached inputSchema).
    expect(sender.requests.map((r) => r.request.case)).toEqual(["listTools", "toolCall"]);
    const request = sender.requests[1]!;
    expect(request.request.case).toBe("toolCall");
    if (request.request.case !== "toolCall") throw new Error("unreachable");
    expect(request.request.value.toolName).toBe("echo");
    expect(request.request.value.arguments).toEqual({ text: "hi ✓" });
    expect(request.request.value.callerPlugin).toBe("transport.stdio");
    expect(request.request.value.sessionId).toBe("session-1");
    expect(request.requestId).toMatch(UUIDV7);
    expect(out).toEqual([{ jsonrpc: "2.0", id: 3, result: { content: [{ type: "text", text: "hi ✓" }] } }]);
  });

  it("turns a failed ToolResponse into an isError result with the error message", async () => {
    const { out, send } = setup();
    await send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "fails", arguments: {} } });
    expect(out).toEqual([{ jsonrpc: "2.0", id: 4, result: { content: [{ type: "text", text: "it broke" }], isError: true } }]);
  });

  it("fails tools/call with -32603 naming the orchestrator address when the sender fails", async () => {
    const { out, send } = setup(() => {
      throw new SenderError("connect", "connection refused");
    });
    await send({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "echo", arguments: { text: "x" } } });
    const error = (out[0] as { error: { code: number; message: string } }).error;
    expect(out[0]).toMatchObject({ jsonrpc: "2.0", id: 5 });
    expect(error.code).toBe(-32603);
    expect(error.message).toContain("fake.test:50100");
    expect(error.message).toContain("connection refused");
  });

  it("names the deadline that expired: a tools/call whose tool list times out names list_tools and --list-timeout", async () => {
    const { out, send } = setup((request) => {
      throw new SenderError("timeout", `orchestrator fake.test:50100: ${request.request.case} not answered in time`);
    });
    await send({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "echo", arguments: { text: "x" } } });
    const error = (out[0] as { error: { code: number; message: string; data: { kind: string } } }).error;
    expect(error).toMatchObject({ code: -32603, data: { kind: "timeout" } });
    expect(error.message).toMatch(/listTools not answered in time \(list_tools deadline, serve --list-timeout\)$/);
    expect(error.message).not.toContain("--call-timeout");
  });

  it("names --call-timeout when the tool_call itself times out", async () => {
    const { out, send } = setup((request, options) => {
      if (request.request.case === "toolCall") throw new SenderError("timeout", `orchestrator fake.test:50100: no answer within ${options?.timeoutMs} ms`);
      return echoOrchestrator(request, options);
    });
    await send({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "echo", arguments: { text: "x" } } });
    const error = (out[0] as { error: { message: string } }).error;
    expect(error.message).toMatch(/no answer within 300000 ms \(tool_call deadline, serve --call-timeout\)$/);
  });

  it("fails tools/list with -32603 when the sender fails", async () => {
    const { out, send } = setup(() => {
      throw new SenderError("closed", "connection lost");
    });
    await send({ jsonrpc: "2.0", id: 6, method: "tools/list" });
    expect(out[0]).toMatchObject({ jsonrpc: "2.0", id: 6, error: { code: -32603 } });
  });

  it("rejects tools/call without a name with -32602 and the failing pointer", async () => {
    const { out, send, sender } = setup();
    await send({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { arguments: {} } });
    expect(sender.requests).toHaveLength(0);
    const error = (out[0] as { error: { code: number; data: { pointer: string; reason: string } } }).error;
    expect(error.code).toBe(-32602);
    expect(error.data.pointer).toBe("/params");
    expect(error.data.reason).toMatch(/name/);
  });

  it("rejects tools/call whose arguments are not an object with -32602", async () => {
    const { out, send } = setup();
    await send({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "echo", arguments: [1, 2] } });
    const error = (out[0] as { error: { code: number; data: { pointer: string } } }).error;
    expect(error.code).toBe(-32602);
    expect(error.data.pointer).toBe("/params/arguments");
  });

  it("never answers a notification", async () => {
    const { out, send } = setup();
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await send({ jsonrpc: "2.0", method: "notifications/something-else", params: { a: 1 } });
    await send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 99 } });
    expect(out).toEqual([]);
  });

  it("answers an unknown method with -32601", async () => {
    const { out, send } = setup();
    await send({ jsonrpc: "2.0", id: 9, method: "does/not/exist" });
    expect(out).toEqual([{ jsonrpc: "2.0", id: 9, error: { code: -32601, message: "Method not found: does/not/exist" } }]);
  });

  it("answers invalid JSON with -32700 and a null id", async () => {
    const { out, send } = setup();
    await send('{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
  });

  it("answers a message that is not a valid request with -32600", async () => {
    const { out, send } = setup();
    await send({ jsonrpc: "1.0", id: 10, method: "ping" });
    await send(42);
    await send({ jsonrpc: "2.0", id: { nested: true }, method: "ping" });
    expect(out.map((m) => [(m as { id: unknown }).id, (m as { error: { code: number } }).error.code])).toEqual([
      [10, -32600],
      [null, -32600],
      [null, -32600],
    ]);
  });

  it("rejects a JSON-RPC batch with -32600 in protocol 2025-06-18", async () => {
    const { out, send } = setup();
    await send([{ jsonrpc: "2.0", id: 1, method: "ping" }]);
    expect(out[0]).toMatchObject({ id: null, error: { code: -32600 } });
  });

  it("answers several sequential requests, each once, in order", async () => {
    const { out, send } = setup(echoOrchestrator, { initialized: false });
    await send(initialize);
    await send({ jsonrpc: "2.0", id: 2, method: "ping" });
    await send({ jsonrpc: "2.0", id: 3, method: "tools/list" });
    await send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "echo", arguments: { text: "a" } } });
    expect(out.map((m) => (m as { id: unknown }).id)).toEqual([1, 2, 3, 4]);
    expect(out.every((m) => "result" in m)).toBe(true);
  });

  it("runs tools/call concurrently and answers out of order", async () => {
    const releases = new Map<string, () => void>();
    const { out, handler } = setup(async (request) => {
      if (request.request.case === "listTools") return echoOrchestrator(request);
      if (request.request.case !== "toolCall") throw new Error("unexpected");
      const text = String(request.request.value.arguments?.text);
      await new Promise<void>((resolve) => releases.set(text, resolve));
      return toolResponse(request, { success: true, result: { text } });
    });
    for (const text of ["a", "b", "c"]) {
      handler.handleLine(JSON.stringify({ jsonrpc: "2.0", id: text, method: "tools/call", params: { name: "echo", arguments: { text } } }));
    }
    await new Promise((r) => setTimeout(r, 10));
    expect(handler.pending).toBe(3);
    releases.get("c")!();
    releases.get("a")!();
    releases.get("b")!();
    await handler.idle();
    expect(out.map((m) => (m as { id: unknown }).id)).toEqual(["c", "a", "b"]);
    expect(out.map((m) => (m as { result: { content: Array<{ text: string }> } }).result.content[0]!.text)).toEqual(["c", "a", "b"]);
  });

  it("cancels an in-flight tools/call on notifications/cancelled and sends no response for it", async () => {
    const { out, handler, sender } = setup((request) => (request.request.case === "listTools" ? echoOrchestrator(request) : new Promise<PluginResponse>(() => {})));
    handler.handleLine(JSON.stringify({ jsonrpc: "2.0", id: 11, method: "tools/call", params: { name: "slow", arguments: { ms: 10_000 } } }));
    await new Promise((r) => setTimeout(r, 5));
    handler.handleLine(JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 11, reason: "user" } }));
    await handler.idle();
    const call = sender.requests.findIndex((r) => r.request.case === "toolCall");
    expect(call).toBeGreaterThanOrEqual(0);
    expect(sender.options[call]!.signal!.aborted).toBe(true);
    expect(out).toEqual([]);
  });

  it("rejects a request id that is already in flight with -32600 under a null id, so the original keeps its answer", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { out, handler } = setup(async (request) => {
      await gate;
      return echoOrchestrator(request);
    });
    const call = JSON.stringify({ jsonrpc: "2.0", id: 12, method: "tools/call", params: { name: "echo", arguments: { text: "x" } } });
    handler.handleLine(call);
    handler.handleLine(call);
    release();
    await handler.idle();
    expect(out.map((m) => ("error" in m ? m.error.code : "ok"))).toEqual([-32600, "ok"]);
    expect(out[0]).toMatchObject({ id: null, error: { data: { duplicateId: 12 } } });
    expect(out[1]).toMatchObject({ id: 12, result: { content: [{ type: "text", text: "x" }] } });
  });

  it("fails every pending request with -32603 on failAll and answers each once", async () => {
    const { out, handler } = setup(() => new Promise<PluginResponse>(() => {}));
    handler.handleLine(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x", arguments: {} } }));
    handler.handleLine(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
    await new Promise((r) => setTimeout(r, 5));
    handler.failAll("shutting down");
    await handler.idle();
    await new Promise((r) => setTimeout(r, 5));
    expect(out.map((m) => (m as { id: unknown }).id).sort()).toEqual([1, 2]);
    expect(out.every((m) => "error" in m && m.error.code === -32603)).toBe(true);
  });

  it("answers an oversized line with -32600 using the id recovered from its head", () => {
    const { out, handler } = setup();
    handler.handleOversizedLine(Buffer.from('{"jsonrpc":"2.0","id":"big-1","method":"tools/call","params":{"name":"echo","arguments":{"text":"xxxx'), 20_000_000, 16_000_000);
    expect(out[0]).toMatchObject({ id: "big-1", error: { code: -32600, data: { bytes: 20_000_000, maxBytes: 16_000_000 } } });
  });

  it("answers -32603 instead of writing a result that is not valid MCP", async () => {
    const { out, send } = setup((request) =>
      create(PluginResponseSchema, {
        requestId: request.requestId,
        response: {
          case: "listTools",
          value: create(ListToolsResponseSchema, {
            tools: [create(ToolDefinitionSchema, { name: "bad", inputSchema: { type: "string" } })],
          }),
        },
      }),
    );
    await send({ jsonrpc: "2.0", id: 13, method: "tools/list" });
    expect(out[0]).toMatchObject({ id: 13, error: { code: -32603 } });
  });
});

describe("outgoing line limit", () => {
  it("fitOutboundLine replaces an 18.9 MB tools/call result by -32603 for the same id, under 16 MiB", () => {
    const big = "x".repeat(9 * 1024 * 1024);
    const response = {
      jsonrpc: "2.0" as const,
      id: 7,
      result: { content: [{ type: "text" as const, text: JSON.stringify({ blob: big }) }], structuredContent: { blob: big } },
    };
    const text = JSON.stringify(response);
    expect(Buffer.byteLength(text)).toBeGreaterThan(STDIO_MAX_LINE_BYTES);
    const fitted = fitOutboundLine(response, text, STDIO_MAX_LINE_BYTES);
    expect(fitted.oversizedBytes).toBe(Buffer.byteLength(text));
    expect(fitted.message).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: {
        code: -32603,
        message: `Internal error: result of ${Buffer.byteLength(text)} bytes exceeds the 16 MiB line limit`,
        data: { bytes: Buffer.byteLength(text), maxLineBytes: STDIO_MAX_LINE_BYTES },
      },
    });
    expect(fitted.text).toBe(JSON.stringify(fitted.message));
  });

  it("fitOutboundLine keeps lines within the limit, drops oversized notifications and fits batches", () => {
    const small = { jsonrpc: "2.0" as const, id: 1, result: {} };
    const smallText = JSON.stringify(small);
    expect(fitOutboundLine(small, smallText, 1000)).toEqual({ message: small, text: smallText });
    const note = { jsonrpc: "2.0" as const, method: "notifications/message", params: { level: "info", data: "y".repeat(2000) } };
    expect(fitOutboundLine(note, JSON.stringify(note), 1000)).toEqual({ oversizedBytes: JSON.stringify(note).length });
    const batch = [small, { jsonrpc: "2.0" as const, id: 2, result: { big: "z".repeat(2000) } }];
    const fitted = fitOutboundLine(batch, JSON.stringify(batch), 1000);
    expect(Buffer.byteLength(fitted.text!)).toBeLessThanOrEqual(1000);
    expect(fitted.message).toMatchObject([
      small,
      { id: 2, error: { code: -32603, message: expect.stringMatching(/^Internal error: result of \d+ bytes exceeds the 1000-byte line limit$/) } },
    ]);
  });

  it("StdioBridge never writes a line over its limit: a too-large tool result becomes -32603 for that id", async () => {
    const limit = 64 * 1024;
    const bigTool: Reply = (request) =>
      request.request.case === "toolCall" ? toolResponse(request, { success: true, result: { blob: "b".repeat(40 * 1024) } }) : echoOrchestrator(request);
    const input = new PassThrough();
    const output = new PassThrough();
    const chunks: Buffer[] = [];
    output.on("data", (c: Buffer) => chunks.push(c));
    const bridge = new StdioBridge({
      input,
      output,
      sender: new FakeSender(bigTool),
      serverInfo: { name: "orchestra-stdio", version: "0.0.0-test" },
      maxLineBytes: limit,
      shutdownGraceMs: 5_000,
    });
    const done = bridge.run();
    input.write(JSON.stringify(initialize) + "\n");
    input.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
    input.write(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }) + "\n");
    input.write(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo", arguments: { text: "hi" } } }) + "\n");
    input.end();
    await done;
    const lines = Buffer.concat(chunks)
      .toString("utf8")
      .split("\n")
      .filter((l) => l !== "");
    for (const l of lines) expect(Buffer.byteLength(l)).toBeLessThanOrEqual(limit);
    const answer = lines.map((l) => JSON.parse(l) as { id?: unknown; error?: { code: number; message: string } }).find((m) => m.id === 3);
    expect(answer?.error?.code).toBe(-32603);
    expect(answer?.error?.message).toMatch(/^Internal error: result of \d+ bytes exceeds the 65536-byte line limit$/);
  });
});
