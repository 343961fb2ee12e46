/**
 * The bridge per MCP revision (fake orchestrator): initialize negotiation, capabilities that
 * match the methods served, JSON-RPC batches only in 2025-03-26, the stateless 2026-07-28
 * requests (per-request `_meta` version, server/discover, resultType, cache hints, -32022), and
 * logging per revision (logging/setLevel vs per-request log level).
 */
import { describe, expect, it } from "vitest";
import type { PluginResponse } from "../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { DEFAULT_VERSION_SUPPORT } from "../../src/mcp/negotiation.js";
import { validatorsFor } from "../../src/mcp/validation.js";
import { answer, FakeSender, harness, modernMeta, scripted } from "../helpers/bridge-fakes.js";

const LEGACY = [...DEFAULT_VERSION_SUPPORT.legacy];
const MODERN = DEFAULT_VERSION_SUPPORT.modern[0];
const NEWEST_LEGACY = LEGACY[0]!;

/** Methods each advertised capability stands for. */
const CAPABILITY_METHODS: Record<string, string[]> = {
  tools: ["tools/list", "tools/call"],
  prompts: ["prompts/list", "prompts/get"],
  resources: ["resources/list", "resources/read"],
};

describe("initialize-family revisions", () => {
  it.each(LEGACY)("negotiates %s when the client asks for it, with a result valid in that revision", async (version) => {
    const { init } = harness(new FakeSender(scripted));
    const result = await init(version);
    expect(result.protocolVersion).toBe(version);
    expect(validatorsFor(version)!.validate("InitializeResult", result)).toBeNull();
  });

  it("answers initialize for a stateless or unknown revision with the newest initialize-family one", async () => {
    for (const asked of ["2026-07-28", "2099-01-01", "1999-01-01"]) {
      const { init } = harness(new FakeSender(scripted));
      expect((await init(asked)).protocolVersion).toBe(NEWEST_LEGACY);
    }
  });

  it.each(LEGACY)("advertises in %s exactly the capabilities whose methods it serves", async (version) => {
    const { init, send, out } = harness(new FakeSender(scripted));
    const caps = (await init(version)).capabilities as Record<string, unknown>;
    const validators = validatorsFor(version)!;
    const c2s = (m: string) => validators.messageDefinition("c2s", m)?.kind === "request";
    for (const [cap, methods] of Object.entries(CAPABILITY_METHODS)) {
      expect(cap in caps, `${version} ${cap}`).toBe(methods.every(c2s));
    }
    expect("logging" in caps).toBe(c2s("logging/setLevel"));
    expect(caps).not.toHaveProperty("completions");
    expect(caps).not.toHaveProperty("tasks");
    // Every method behind an advertised capability answers with a result, not -32601.
    let id = 0;
    for (const cap of Object.keys(caps)) {
      for (const method of CAPABILITY_METHODS[cap] ?? []) {
        const params =
          method === "tools/call"
            ? { name: "echo", arguments: { text: "x" } }
            : method === "prompts/get"
              ? { name: "greet", arguments: { name: "A" } }
              : method === "resources/read"
                ? { uri: "orchestra://storage/docs/a.md" }
                : {};
        await send({ jsonrpc: "2.0", id: ++id, method, params });
      }
    }
    expect(out.filter((m) => "error" in m)).toEqual([]);
  });

  it.each(LEGACY)("shapes tools/call results for %s (structuredContent only from 2025-06-18)", async (version) => {
    const structured = new FakeSender((req) => (req.request.case === "toolCall" ? answer(req, { case: "toolCall", value: { success: true, result: { n: 1 } } }) : scripted(req)));
    const { init, send, out } = harness(structured);
    await init(version);
    await send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text: "x" } } });
    const result = (out[0] as { result: Record<string, unknown> }).result;
    expect(result).toMatchObject({ content: [{ type: "text", text: '{"n":1}' }] });
    expect("structuredContent" in result).toBe(version >= "2025-06-18");
    expect(validatorsFor(version)!.validate("CallToolResult", result)).toBeNull();
  });

  it("rejects requests other than ping before initialize with -32602 (no per-request version), unknown methods with -32601", async () => {
    const { send, out } = harness(new FakeSender(scripted));
    await send({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    await send({ jsonrpc: "2.0", id: 2, method: "ping" });
    await send({ jsonrpc: "2.0", id: 3, method: "no/such/method" }); // unknown in every revision
    expect(out).toEqual([
      expect.objectContaining({ id: 1, error: expect.objectContaining({ code: -32602 }) }),
      { jsonrpc: "2.0", id: 2, result: {} },
      { jsonrpc: "2.0", id: 3, error: { code: -32601, message: "Method not found: no/such/method" } },
    ]);
  });
});

describe("JSON-RPC batches", () => {
  const hasBatchRevision = LEGACY.includes("2025-03-26");

  it.runIf(hasBatchRevision)("answers a 2025-03-26 batch with one array of the responses", async () => {
    const { init, send, out } = harness(new FakeSender(scripted));
    await init("2025-03-26");
    await send([
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { text: "in a batch" } } },
      { jsonrpc: "2.0", id: 3, method: "no/such/method" },
      42,
    ]);
    expect(out).toHaveLength(1);
    const batch = out[0] as Array<Record<string, unknown>>;
    expect(Array.isArray(batch)).toBe(true);
    const byId = new Map(batch.map((m) => [m.id, m]));
    expect(batch).toHaveLength(4);
    expect(byId.get(1)).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    expect(byId.get(2)).toMatchObject({ result: { content: [{ type: "text", text: "in a batch" }] } });
    expect(byId.get(3)).toMatchObject({ error: { code: -32601 } });
    expect(byId.get(null)).toMatchObject({ error: { code: -32600 } });
  });

  it.runIf(hasBatchRevision)("sends nothing for a batch of notifications and -32600 for an empty batch", async () => {
    const { init, send, out } = harness(new FakeSender(scripted));
    await init("2025-03-26");
    await send([{ jsonrpc: "2.0", method: "notifications/initialized" }]);
    expect(out).toEqual([]);
    await send([]);
    expect(out).toEqual([expect.objectContaining({ id: null, error: expect.objectContaining({ code: -32600 }) })]);
  });

  it.runIf(hasBatchRevision)("refuses initialize inside a batch and leaves a cancelled request out of the answer", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { init, handler, out } = harness(
      new FakeSender(async (req) => {
        if (req.request.case === "toolCall" && req.request.value.toolName === "echo" && req.request.value.arguments?.text === "slow") await new Promise(() => {});
        if (req.request.case === "toolCall") await gate;
        return scripted(req);
      }),
    );
    await init("2025-03-26");
    handler.handleMessage([
      { jsonrpc: "2.0", id: "a", method: "tools/call", params: { name: "echo", arguments: { text: "slow" } } },
      { jsonrpc: "2.0", id: "b", method: "tools/call", params: { name: "echo", arguments: { text: "fast" } } },
      { jsonrpc: "2.0", id: "c", method: "initialize", params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "t", version: "1" } } },
    ]);
    await new Promise((r) => setTimeout(r, 10));
    expect(out).toEqual([]); // nothing until every element is done
    handler.handleMessage({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "a" } });
    release();
    await handler.idle();
    expect(out).toHaveLength(1);
    const batch = out[0] as Array<{ id: unknown; error?: { code: number } }>;
    expect(batch.map((m) => m.id).sort()).toEqual(["b", "c"]);
    expect(batch.find((m) => m.id === "c")!.error!.code).toBe(-32600);
  });

  it.runIf(hasBatchRevision)("answers a duplicate id inside one batch with -32600 under a null id; the first keeps its answer", async () => {
    const { init, send, out } = harness(new FakeSender(scripted));
    await init("2025-03-26");
    await send([
      { jsonrpc: "2.0", id: "d", method: "ping" },
      { jsonrpc: "2.0", id: "d", method: "ping" },
      { jsonrpc: "2.0", id: "e", method: "ping" },
    ]);
    expect(out).toHaveLength(1);
    const batch = out[0] as Array<{ id: unknown; result?: unknown; error?: { code: number; message: string } }>;
    expect(batch.filter((m) => m.id === "d")).toEqual([expect.objectContaining({ result: {} })]);
    expect(batch.filter((m) => m.id === "e")).toHaveLength(1);
    expect(batch.filter((m) => m.id === null)).toEqual([
      expect.objectContaining({ error: expect.objectContaining({ code: -32600, message: expect.stringContaining("duplicate id in batch") }) }),
    ]);
  });

  it.each(LEGACY.filter((v) => v !== "2025-03-26"))("rejects a batch with a single -32600 in %s", async (version) => {
    const { init, send, out } = harness(new FakeSender(scripted));
    await init(version);
    await send([{ jsonrpc: "2.0", id: 1, method: "ping" }]);
    expect(out).toEqual([expect.objectContaining({ id: null, error: expect.objectContaining({ code: -32600 }) })]);
  });

  it("rejects a batch before initialize", async () => {
    const { send, out } = harness(new FakeSender(scripted));
    await send([{ jsonrpc: "2.0", id: 1, method: "ping" }]);
    expect(out).toEqual([expect.objectContaining({ id: null, error: expect.objectContaining({ code: -32600 }) })]);
  });
});

describe.runIf(MODERN !== undefined)("stateless revision (2026-07-28)", () => {
  const version = MODERN!;
  const validators = () => validatorsFor(version)!;

  it("answers server/discover with the stateless revisions, capabilities and serverInfo", async () => {
    const { send, out } = harness(new FakeSender(scripted));
    await send({ jsonrpc: "2.0", id: "discover-1", method: "server/discover", params: { _meta: modernMeta() } });
    const result = (out[0] as { result: Record<string, unknown> }).result;
    expect(validators().validate("DiscoverResult", result)).toBeNull();
    expect(result).toMatchObject({
      resultType: "complete",
      supportedVersions: expect.arrayContaining([version]),
      capabilities: { tools: { listChanged: false }, prompts: {}, resources: {}, logging: {} },
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "orchestra-stdio" } },
    });
    expect(result.supportedVersions).not.toContain(NEWEST_LEGACY);
  });

  it("serves tools/list and tools/call per request, with resultType and cache hints", async () => {
    const { send, out } = harness(new FakeSender(scripted));
    await send({ jsonrpc: "2.0", id: "l", method: "tools/list", params: { _meta: modernMeta() } });
    await send({ jsonrpc: "2.0", id: "c", method: "tools/call", params: { _meta: modernMeta(), name: "echo", arguments: { text: "hi" } } });
    const list = (out[0] as { result: Record<string, unknown> }).result;
    expect(validators().validate("ListToolsResult", list)).toBeNull();
    expect(list).toMatchObject({ resultType: "complete", ttlMs: 0, cacheScope: "private" });
    const call = (out[1] as { result: Record<string, unknown> }).result;
    expect(validators().validate("CallToolResult", call)).toBeNull();
    expect(call).toMatchObject({ resultType: "complete", content: [{ type: "text", text: "hi" }] });
    expect(call).not.toHaveProperty("ttlMs");
  });

  it("never sends an InputRequiredResult: a tool result carrying resultType is wrapped in a complete CallToolResult", async () => {
    for (const result of [{ resultType: "input_required" }, { resultType: "input_required", content: [] }, { resultType: "input_required", requestState: "s" }]) {
      const tool = new FakeSender((req) => (req.request.case === "toolCall" ? answer(req, { case: "toolCall", value: { success: true, result } }) : scripted(req)));
      const { send, out } = harness(tool);
      await send({ jsonrpc: "2.0", id: "c", method: "tools/call", params: { _meta: modernMeta(), name: "echo", arguments: { text: "x" } } });
      const sent = (out[0] as { result: Record<string, unknown> }).result;
      expect(sent).toMatchObject({ resultType: "complete", content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result });
      expect(validators().validate("CallToolResult", sent)).toBeNull();
    }
  });

  it("answers an unsupported per-request version with -32022 listing the supported ones", async () => {
    const { send, out } = harness(new FakeSender(scripted));
    await send({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: modernMeta({}, "1900-01-01") } });
    expect(out[0]).toMatchObject({ id: 1, error: { code: -32022, data: { requested: "1900-01-01", supported: expect.arrayContaining([version]) } } });
  });

  it("rejects a stateless request without clientCapabilities with -32602, and ping/initialize-only methods with -32601", async () => {
    const { send, out } = harness(new FakeSender(scripted));
    const meta = modernMeta();
    delete meta["io.modelcontextprotocol/clientCapabilities"];
    await send({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: meta } });
    await send({ jsonrpc: "2.0", id: 2, method: "logging/setLevel", params: { _meta: modernMeta(), level: "debug" } });
    expect(out[0]).toMatchObject({ id: 1, error: { code: -32602 } });
    expect(out[1]).toMatchObject({ id: 2, error: { code: -32601 } });
  });

  it("serves a stateless request inside an initialized session in its own revision", async () => {
    const { init, send, out } = harness(new FakeSender(scripted));
    await init(NEWEST_LEGACY);
    await send({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
    await send({ jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: modernMeta() } });
    expect((out[0] as { result: object }).result).not.toHaveProperty("resultType");
    expect((out[1] as { result: object }).result).toHaveProperty("resultType", "complete");
  });

  it("sends notifications/message for a request only at or above its _meta log level", async () => {
    const { send, out } = harness(new FakeSender(scripted));
    await send({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: modernMeta() } });
    expect(out.filter((m) => "method" in m)).toEqual([]);
    await send({ jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: modernMeta({ "io.modelcontextprotocol/logLevel": "debug" }) } });
    const logs = out.filter((m) => "method" in m && m.method === "notifications/message");
    expect(logs.length).toBeGreaterThan(0);
    for (const l of logs) expect(validators().validate("LoggingMessageNotification", l)).toBeNull();
    // The notification comes before the response it belongs to.
    expect(out.indexOf(logs[0]!)).toBeLessThan(out.findIndex((m) => "id" in m && m.id === 2));
    out.length = 0;
    await send({ jsonrpc: "2.0", id: 3, method: "tools/list", params: { _meta: modernMeta({ "io.modelcontextprotocol/logLevel": "error" }) } });
    expect(out.filter((m) => "method" in m)).toEqual([]);
  });

  it("cancels a stateless request on notifications/cancelled", async () => {
    const sender = new FakeSender((req) => (req.request.case === "toolCall" ? new Promise<PluginResponse>(() => {}) : scripted(req)));
    const { handler, out } = harness(sender);
    handler.handleLine(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { _meta: modernMeta(), name: "echo", arguments: { text: "x" } } }));
    await new Promise((r) => setTimeout(r, 10));
    handler.handleLine(JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7, reason: "user" } }));
    await handler.idle();
    expect(out).toEqual([]);
    const call = sender.requests.findIndex((r) => r.request.case === "toolCall");
    expect(sender.options[call]!.signal!.aborted).toBe(true);
  });
});

describe("logging/setLevel (initialize-family revisions)", () => {
  it("sends no log notifications until the client sets a level, then only at or above it", async () => {
    const { init, send, out } = harness(new FakeSender(scripted));
    await init("2025-06-18");
    await send({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(out.filter((m) => "method" in m)).toEqual([]);
    await send({ jsonrpc: "2.0", id: 2, method: "logging/setLevel", params: { level: "debug" } });
    out.length = 0;
    await send({ jsonrpc: "2.0", id: 3, method: "tools/list" });
    const logs = out.filter((m) => "method" in m && m.method === "notifications/message") as Array<{ params: { level: string; logger: string } }>;
    expect(logs.length).toBeGreaterThan(0);
    expect(logs[0]!.params).toMatchObject({ level: "debug", logger: "orchestra-stdio" });
    // Said in words, with the protobuf names of what went over the wire.
    expect(logs.map((l) => (l.params as { data?: { message?: string } }).data?.message)).toContain(
      "tools/list: forwarded to the orchestrator (PluginRequest listTools), which answered (PluginResponse listTools)",
    );
    for (const l of logs) expect(validatorsFor("2025-06-18")!.validate("LoggingMessageNotification", l)).toBeNull();
    await send({ jsonrpc: "2.0", id: 4, method: "logging/setLevel", params: { level: "warning" } });
    out.length = 0;
    await send({ jsonrpc: "2.0", id: 5, method: "tools/list" });
    expect(out.filter((m) => "method" in m)).toEqual([]);
  });

  it("reports an orchestrator failure as an error log notification", async () => {
    const { SenderError } = await import("../../src/transport/sender.js");
    const { init, send, out } = harness(
      new FakeSender(() => {
        throw new SenderError("connect", "connection refused");
      }),
    );
    await init("2025-06-18");
    await send({ jsonrpc: "2.0", id: 1, method: "logging/setLevel", params: { level: "error" } });
    await send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    expect(out).toContainEqual(expect.objectContaining({ method: "notifications/message", params: expect.objectContaining({ level: "error" }) }));
    expect(out).toContainEqual(expect.objectContaining({ id: 2, error: expect.objectContaining({ code: -32603 }) }));
  });
});
