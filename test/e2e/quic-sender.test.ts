/**
 * QuicSender ↔ reference orchestrator over real QUIC on loopback (in-process).
 */
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { HealthResult_Status, PluginRequestSchema, PluginResponseSchema, type PluginResponse } from "../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { encodeFrame, encodeFrameHeader, MAX_FRAME_BYTES } from "../../src/framing/frame.js";
import { StreamCode } from "../../src/quic/quic-common.js";
import { writeFrameAndClose } from "../helpers/quic/library.js";
import { parseHostPort, QuicSender } from "../../src/quic/quic-link.js";
import { builtinTools } from "../../src/orchestrator/builtin-tools.js";
import { loadToolModule } from "../../src/orchestrator/load-tools.js";
import { ToolDefinitionError, ToolError, ToolRegistry, type Tool } from "../../src/orchestrator/registry.js";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/quic-server.js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { healthRequest, listToolsRequest, makePki, RawQuicClient, rid, ScriptedQuicServer, toolCallRequest, type TestPki } from "../helpers/quic/index.js";
import { rejection } from "../helpers/sender-error.js";

const digestTool: Tool = {
  name: "digest",
  description: "sha256 and length of `data`",
  inputSchema: { type: "object", properties: { data: { type: "string" } }, required: ["data"] },
  async handler(args) {
    const data = String(args.data);
    return { length: data.length, sha256: createHash("sha256").update(data).digest("hex") };
  },
};
const failTool: Tool = {
  name: "fail",
  description: "always fails",
  inputSchema: { type: "object" },
  async handler() {
    throw new ToolError("boom_code", "it went boom");
  },
};

function toolResult(r: PluginResponse): { success: boolean; result?: unknown; errorCode: string; errorMessage: string } {
  expect(r.response.case).toBe("toolCall");
  if (r.response.case !== "toolCall") throw new Error("not a tool_call response");
  return r.response.value;
}

let pki: TestPki;
let server: RunningOrchestrator;
let sender: QuicSender;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  pki = await makePki();
  server = await startOrchestrator({
    tls: pki.server,
    tools: new ToolRegistry([...builtinTools(), digestTool, failTool]),
  });
  sender = new QuicSender({ host: "127.0.0.1", port: server.port, tls: pki.client, connectTimeoutMs: 5_000 });
});

afterAll(async () => {
  await sender?.close();
  for (const c of cleanups.reverse()) await c();
  await server?.stop();
});

describe("QuicSender against the reference orchestrator", () => {
  it("parseHostPort splits host:port, [v6]:port and rejects junk", () => {
    expect(parseHostPort("localhost:50100")).toEqual({ host: "localhost", port: 50100 });
    expect(parseHostPort("[::1]:9")).toEqual({ host: "::1", port: 9 });
    expect(parseHostPort("10.0.0.1", 50100)).toEqual({ host: "10.0.0.1", port: 50100 });
    expect(() => parseHostPort("nohost")).toThrow(/missing port/);
    expect(() => parseHostPort("h:99999")).toThrow(/port/);
    expect(() => parseHostPort(":80")).toThrow(/missing host/);
    expect(() => parseHostPort("h:0", undefined, 1)).toThrow(/port 0 cannot be connected to: port must be 1\.\.65535/);
    expect(parseHostPort("h:0")).toEqual({ host: "h", port: 0 });
    for (const junk of ["http://h:1", " h:1", "h:1 ", "::1:1", "h:01", "h/p:1", "user@h:1"]) expect(() => parseHostPort(junk), junk).toThrow(TypeError);
  });

  it("health answers STATUS_HEALTHY and echoes request_id", async () => {
    const id = rid("health");
    const r = await sender.send(healthRequest(id));
    expect(r.requestId).toBe(id);
    expect(r.response.case).toBe("health");
    if (r.response.case === "health") expect(r.response.value.status).toBe(HealthResult_Status.HEALTHY);
  });

  it("list_tools lists echo and slow with their input schemas", async () => {
    const r = await sender.send(listToolsRequest());
    expect(r.response.case).toBe("listTools");
    if (r.response.case !== "listTools") return;
    const byName = new Map(r.response.value.tools.map((t) => [t.name, t]));
    expect([...byName.keys()]).toEqual(expect.arrayContaining(["echo", "slow"]));
    expect(byName.get("echo")!.inputSchema).toMatchObject({ type: "object", required: ["text"] });
    expect(byName.get("slow")!.inputSchema).toMatchObject({ type: "object", required: ["ms"] });
    expect(byName.get("echo")!.description).not.toBe("");
  });

  it("echo round-trips its text", async () => {
    const r = await sender.send(toolCallRequest("echo", { text: "hello över QUIC" }));
    const v = toolResult(r);
    expect(v.success).toBe(true);
    expect(v.result).toEqual({ text: "hello över QUIC" });
  });

  it("100 concurrent echo calls each get their own answer", async () => {
    const ids = Array.from({ length: 100 }, (_, i) => ({ id: rid(`c${i}`), text: `text-${i}-${Math.random()}` }));
    const responses = await Promise.all(ids.map(({ id, text }) => sender.send(toolCallRequest("echo", { text }, id))));
    responses.forEach((r, i) => {
      expect(r.requestId).toBe(ids[i]!.id);
      expect(toolResult(r).result).toEqual({ text: ids[i]!.text });
    });
  });

  it("an unknown tool yields success:false with tool_not_found", async () => {
    const v = toolResult(await sender.send(toolCallRequest("no_such_tool", {})));
    expect(v.success).toBe(false);
    expect(v.errorCode).toBe("tool_not_found");
    expect(v.errorMessage).toMatch(/no_such_tool/);
  });

  it("a failing handler yields its error code and message", async () => {
    const v = toolResult(await sender.send(toolCallRequest("fail", {})));
    expect(v).toMatchObject({ success: false, errorCode: "boom_code", errorMessage: "it went boom" });
    const bad = toolResult(await sender.send(toolCallRequest("echo", { text: 5 })));
    expect(bad).toMatchObject({ success: false, errorCode: "invalid_arguments" });
  });

  it("carries a 5 MiB argument", async () => {
    const data = "0123456789abcdef".repeat((5 * 1024 * 1024) / 16);
    const v = toolResult(await sender.send(toolCallRequest("digest", { data }), { timeoutMs: 120_000 }));
    expect(v.success).toBe(true);
    expect(v.result).toEqual({ length: data.length, sha256: createHash("sha256").update(data).digest("hex") });
  });

  it("refuses a request over 16 MiB with SenderError('frame') without sending, then keeps working", async () => {
    const opened = server.stats.streamsOpened;
    const huge = toolCallRequest("echo", { text: "x".repeat(MAX_FRAME_BYTES) });
    const e = await rejection(sender.send(huge));
    expect(e.kind).toBe("frame");
    expect(e.message).toContain(`127.0.0.1:${server.port}`);
    expect(e.message).toMatch(/exceeds/);
    expect(server.stats.streamsOpened).toBe(opened);
    const ok = toolResult(await sender.send(toolCallRequest("echo", { text: "after" })));
    expect(ok.result).toEqual({ text: "after" });
  });

  it("an unsupported request kind is refused as upstream does: tool_call {success: false, error_code: unknown_request}", async () => {
    const before = server.stats.unsupportedRequests;
    const req = create(PluginRequestSchema, { requestId: rid("boot"), request: { case: "boot", value: {} } });
    const r = await sender.send(req);
    expect(r.requestId).toBe(req.requestId);
    expect(r.response.case === "toolCall" && r.response.value).toMatchObject({ success: false, errorCode: "unknown_request", errorMessage: "unrecognized request type: boot" });
    expect(server.stats.unsupportedRequests).toBe(before + 1);
  });

  it("aborting a slow call rejects it and cancels the stream on the server", async () => {
    const cancelledBefore = server.stats.streamsCancelled;
    const ac = new AbortController();
    const call = sender.send(toolCallRequest("slow", { ms: 60_000 }), { signal: ac.signal });
    call.catch(() => {}); // inspected below
    await vi.waitFor(() => expect(server.stats.activeStreams).toBeGreaterThan(0), { timeout: 10_000 });
    ac.abort();
    const e = await rejection(call);
    expect(e.kind).toBe("aborted");
    expect(e.message).toContain(`127.0.0.1:${server.port}`);
    // The server saw the cancellation and the handler stopped (it would otherwise run 60 s).
    await vi.waitFor(
      () => {
        expect(server.stats.streamsCancelled).toBe(cancelledBefore + 1);
        expect(server.stats.activeStreams).toBe(0);
      },
      { timeout: 10_000 },
    );
    // The connection is still usable.
    expect((await sender.send(healthRequest())).response.case).toBe("health");
  });

  it("a call past its deadline rejects with 'timeout' and is cancelled on the server", async () => {
    const cancelledBefore = server.stats.streamsCancelled;
    const e = await rejection(sender.send(toolCallRequest("slow", { ms: 60_000 }), { timeoutMs: 200 }));
    expect(e.kind).toBe("timeout");
    await vi.waitFor(() => expect(server.stats.streamsCancelled).toBe(cancelledBefore + 1), { timeout: 10_000 });
  });

  it("an already-aborted signal rejects at once", async () => {
    const ac = new AbortController();
    ac.abort();
    const e = await rejection(sender.send(healthRequest(), { signal: ac.signal }));
    expect(e.kind).toBe("aborted");
  });

  it("the server refuses a frame declaring more than 16 MiB and stays up", async () => {
    const raw = await RawQuicClient.connect(server.port, pki.client);
    cleanups.push(() => raw.close());
    const before = server.stats.framesTooLarge;
    const out = await raw.exchange([encodeFrameHeader(MAX_FRAME_BYTES + 1, Number.MAX_SAFE_INTEGER)], false);
    expect(out).toEqual({ kind: "reset", code: StreamCode.FRAME_TOO_LARGE });
    expect(server.stats.framesTooLarge).toBe(before + 1);
    // Same raw connection: a valid request still gets an answer.
    const ok = await raw.exchange([encodeFrame(toBinary(PluginRequestSchema, healthRequest("raw-1")))]);
    expect(ok.kind).toBe("data");
    // Malformed protobuf and a truncated frame are refused as MALFORMED.
    const garbage = await raw.exchange([encodeFrame(new Uint8Array([0xff, 0xff, 0xff]))]);
    expect(garbage).toEqual({ kind: "reset", code: StreamCode.MALFORMED });
    const truncated = await raw.exchange([encodeFrame(new Uint8Array(10)).subarray(0, 7)]);
    expect(truncated).toEqual({ kind: "reset", code: StreamCode.MALFORMED });
    // And the sender is unaffected.
    expect((await sender.send(healthRequest())).response.case).toBe("health");
  });
});

describe("QuicSender queueing, reconnects and failures", () => {
  it("300 concurrent calls against a server granting 100 streams all complete (queued)", async () => {
    const limited = await startOrchestrator({ tls: pki.server, maxStreams: 100 });
    // A local cap above the server's limit, so only the peer's stream credit gates.
    const s = new QuicSender({ host: "127.0.0.1", port: limited.port, tls: pki.client, maxConcurrentStreams: 1000 });
    try {
      await s.send(healthRequest()); // connect first
      const calls = Array.from({ length: 300 }, (_, i) => s.send(toolCallRequest("echo", { text: `q${i}` })));
      // Synchronously after issuing: only the granted streams are open, the rest wait.
      expect(s.stats.active).toBeLessThanOrEqual(100);
      expect(s.stats.queued).toBeGreaterThanOrEqual(200);
      const responses = await Promise.all(calls);
      responses.forEach((r, i) => expect(toolResult(r).result).toEqual({ text: `q${i}` }));
      expect(limited.stats.streamsCompleted).toBe(301);
      expect(limited.stats.peakActiveStreams).toBeLessThanOrEqual(100);
    } finally {
      await s.close();
      await limited.stop();
    }
  });

  it("an unreachable address fails with SenderError('connect') naming the address", async () => {
    const s = new QuicSender({ host: "127.0.0.1", port: 1, tls: pki.client, connectTimeoutMs: 500 });
    try {
      const e = await rejection(s.send(healthRequest()));
      expect(e.kind).toBe("connect");
      expect(e.message).toMatch(/^orchestrator 127\.0\.0\.1:1 unreachable: /);
    } finally {
      await s.close();
    }
  });

  it("a lost connection rejects pending calls with 'closed' and the next call reconnects", async () => {
    const first = await startOrchestrator({ tls: pki.server });
    const port = first.port;
    const s = new QuicSender({ host: "127.0.0.1", port, tls: pki.client });
    let second: RunningOrchestrator | undefined;
    try {
      expect((await s.send(healthRequest())).response.case).toBe("health");
      const pending = s.send(toolCallRequest("slow", { ms: 60_000 }));
      pending.catch(() => {}); // inspected below
      await vi.waitFor(() => expect(first.stats.activeStreams).toBe(1), { timeout: 10_000 });
      await first.stop();
      const e = await rejection(pending);
      expect(e.kind).toBe("closed");
      expect(e.message).toContain(`127.0.0.1:${port}`);
      second = await startOrchestrator({ tls: pki.server, port });
      expect((await s.send(healthRequest())).response.case).toBe("health");
      expect(second.stats.connections).toBe(1);
    } finally {
      await s.close();
      await first.stop();
      await second?.stop();
    }
  });

  it("close() rejects in-flight calls with 'closed' and later sends too", async () => {
    const s = new QuicSender({ host: "127.0.0.1", port: server.port, tls: pki.client });
    const pending = s.send(toolCallRequest("slow", { ms: 60_000 }));
    pending.catch(() => {}); // inspected below
    await vi.waitFor(() => expect(s.stats.active).toBe(1), { timeout: 10_000 });
    await s.close();
    expect((await rejection(pending)).kind).toBe("closed");
    expect((await rejection(s.send(healthRequest()))).kind).toBe("closed");
    await s.close(); // idempotent
  });

  it("rejects a keep-alive not below the idle timeout", () => {
    expect(() => new QuicSender({ host: "127.0.0.1", port: 1, tls: pki.client, idleTimeoutMs: 1000, keepAliveMs: 1000 })).toThrow(/keepAliveMs/);
  });
});

describe("tool modules", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "orchestra-tools-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("serves tools loaded from an ES module", async () => {
    const file = join(dir, "add.mjs");
    await writeFile(
      file,
      `export default [{ name: "add", description: "adds a and b",
        inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
        async handler(args) { return { sum: args.a + args.b }; } }];`,
    );
    const tools = await loadToolModule(file);
    const orch = await startOrchestrator({ tls: pki.server, tools: new ToolRegistry(tools) });
    const s = new QuicSender({ host: "127.0.0.1", port: orch.port, tls: pki.client });
    try {
      const list = await s.send(listToolsRequest());
      expect(list.response.case === "listTools" && list.response.value.tools.map((t) => t.name)).toEqual(["add"]);
      expect(toolResult(await s.send(toolCallRequest("add", { a: 2, b: 40 }))).result).toEqual({ sum: 42 });
    } finally {
      await s.close();
      await orch.stop();
    }
  });

  it("rejects a module with an invalid tool, naming the module, index and field", async () => {
    const file = join(dir, "bad.mjs");
    await writeFile(file, `export const tools = [{ name: "x", description: "d", inputSchema: { type: "object" } }];`);
    await expect(loadToolModule(file)).rejects.toThrow(ToolDefinitionError);
    await expect(loadToolModule(file)).rejects.toThrow(/bad\.mjs \[0\] \(x\): "handler" must be a function/);
    const none = join(dir, "none.mjs");
    await writeFile(none, `export const other = 1;`);
    await expect(loadToolModule(none)).rejects.toThrow(/must export an array of tools/);
    await expect(loadToolModule(join(dir, "missing.mjs"))).rejects.toThrow(/cannot load tool module/);
  });
});

describe("QuicSender against a scripted (misbehaving) server", () => {
  let scripted: ScriptedQuicServer;
  let s: QuicSender;
  beforeAll(async () => {
    scripted = await ScriptedQuicServer.start(pki.server);
    s = new QuicSender({ host: "127.0.0.1", port: scripted.port, tls: pki.client, finGraceMs: 200 });
    // Warm-up. The @matrixai/quic server refuses (RESET_STREAM code 6) streams that arrive
    // before its connection object finished starting, which our engine's client is fast enough
    // to hit on the first call of a new connection. Not a wire-protocol matter: retry until
    // the connection is up on the library's side too.
    scripted.script = async (stream, req) => {
      await writeFrameAndClose(stream, toBinary(PluginResponseSchema, healthy(fromBinary(PluginRequestSchema, req).requestId)));
    };
    for (let i = 0; ; i++) {
      try {
        await s.send(healthRequest("warm-up"));
        break;
      } catch (e) {
        if (i >= 20) throw e;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  });
  afterAll(async () => {
    await s?.close();
    await scripted?.stop();
  });

  const answer = (req: Uint8Array, patch: (id: string) => PluginResponse): Uint8Array => {
    const request = fromBinary(PluginRequestSchema, req);
    return toBinary(PluginResponseSchema, patch(request.requestId));
  };
  const healthy = (id: string): PluginResponse =>
    create(PluginResponseSchema, {
      requestId: id,
      response: { case: "health", value: { status: HealthResult_Status.HEALTHY } },
    });

  it("resolves on a complete response frame even if the FIN never comes, and stops the stream after finGraceMs", async () => {
    let stopped: Promise<unknown> | undefined;
    scripted.script = async (stream, req) => {
      const writer = stream.writable.getWriter();
      await writer.write(encodeFrame(answer(req, healthy))); // no close(): no FIN
      stopped = writer.closed.then(
        () => "closed",
        (e: unknown) => e,
      );
    };
    const r = await s.send(healthRequest("no-fin"), { timeoutMs: 20_000 });
    expect(r.requestId).toBe("no-fin");
    // The client's reset after the grace reaches the server as STOP_SENDING with code NONE.
    await vi.waitFor(() => expect(stopped).toBeDefined(), { timeout: 20_000 });
    expect(await stopped).toMatchObject({ code: StreamCode.NONE });
  });

  it("reassembles a response written in small pieces over several turns", async () => {
    scripted.script = async (stream, req) => {
      const frame = encodeFrame(answer(req, healthy));
      const writer = stream.writable.getWriter();
      for (let i = 0; i < frame.length; i += 3) {
        await writer.write(frame.subarray(i, i + 3));
        await new Promise((r) => setImmediate(r));
      }
      await writer.close();
    };
    const r = await s.send(healthRequest("pieces"));
    expect(r.requestId).toBe("pieces");
    expect(r.response.case).toBe("health");
  });

  it("fills in an empty request_id with a UUIDv7, as over TLS (regression: QUIC sent it empty)", async () => {
    let seen: string | undefined;
    scripted.script = async (stream, req) => {
      seen = fromBinary(PluginRequestSchema, req).requestId;
      await writeFrameAndClose(stream, answer(req, healthy));
    };
    const r = await s.send(healthRequest(""));
    expect(seen).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    expect(r.requestId).toBe(seen);
  });

  it("rejects a response for another request_id with 'protocol'", async () => {
    scripted.script = async (stream, req) => {
      await writeFrameAndClose(
        stream,
        answer(req, () => healthy("someone-else")),
      );
    };
    const e = await rejection(s.send(healthRequest("mine")));
    expect(e.kind).toBe("protocol");
    expect(e.message).toMatch(/someone-else/);
  });

  it("rejects an undecodable response and an oversized response header with 'frame', staying usable", async () => {
    scripted.script = async (stream) => {
      await writeFrameAndClose(stream, new Uint8Array([0xff, 0xff, 0xff, 0xff]));
    };
    const bad = await rejection(s.send(healthRequest()));
    expect(bad.kind).toBe("frame");
    expect(bad.message).toMatch(/undecodable PluginResponse/);

    scripted.script = async (stream) => {
      const writer = stream.writable.getWriter();
      await writer.write(encodeFrameHeader(MAX_FRAME_BYTES + 1, Number.MAX_SAFE_INTEGER));
      await writer.close();
    };
    const big = await rejection(s.send(healthRequest()));
    expect(big.kind).toBe("frame");
    expect(big.message).toMatch(/exceeds/);

    scripted.script = async (stream) => {
      const writer = stream.writable.getWriter();
      await writer.close(); // FIN without any byte
    };
    const empty = await rejection(s.send(healthRequest()));
    expect(empty.kind).toBe("frame");

    scripted.script = async (stream, req) => {
      await writeFrameAndClose(stream, answer(req, healthy));
    };
    expect((await s.send(healthRequest("again"))).requestId).toBe("again");
  });

  it("a server that never answers is cut off by the call deadline", async () => {
    scripted.script = async () => {
      /* silence */
    };
    const e = await rejection(s.send(healthRequest(), { timeoutMs: 300 }));
    expect(e.kind).toBe("timeout");
    expect(e.message).toContain(`127.0.0.1:${scripted.port}`);
  });
});
