/**
 * What a module may declare and how its mistakes are reported (src/orchestrator/load-tools.ts,
 * registry.ts, prompts.ts, storage.ts; docs/modules.md).
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadModule, loadOrchestratorContent } from "../../src/orchestrator/load-tools.js";
import { tempDir } from "../helpers/cli.js";
import { moduleBridge } from "../helpers/module-bridge.js";
import { SenderError } from "../../src/transport/sender.js";
import { answer, FakeSender, harness } from "../helpers/bridge-fakes.js";
import { ToolRegistry, type ToolChunk, type ToolContext } from "../../src/orchestrator/registry.js";
import { LOG_CONTENT_TYPE } from "../../src/translate/streams.js";

let dir: Awaited<ReturnType<typeof tempDir>>;
let seq = 0;
/** Writes `source` as a new module file and returns its path. */
const mod = async (source: string) => {
  const file = join(dir.path, `m${seq++}.mjs`);
  await writeFile(file, source);
  return file;
};
beforeAll(async () => {
  dir = await tempDir("orchestra-module-checks-");
});
afterAll(async () => {
  await dir.remove();
});

const tool = (inputSchema: string) => `export const tools = [{ name: "t", description: "", inputSchema: ${inputSchema}, handler: async () => ({}) }];`;

describe("tool inputSchema at load", () => {
  it("refuses a schema ajv cannot compile, naming the module, the tool and the problem", async () => {
    const requiredNotArray = await mod(tool(`{ type: "object", required: "a" }`));
    await expect(loadModule(requiredNotArray)).rejects.toThrow(
      new RegExp(`${requiredNotArray.replace(/[.\\/]/g, "\\$&")} \\[0\\] \\(t\\): "inputSchema" is not a valid JSON Schema: .*required must be array`),
    );
    const badType = await mod(tool(`{ type: "object", properties: { a: { type: "strng" } } }`));
    await expect(loadModule(badType)).rejects.toThrow(/\(t\): "inputSchema" is not a valid JSON Schema: .*properties\/a\/type/);
  });
  it("accepts valid schemas", async () => {
    const ok = await mod(tool(`{ type: "object", properties: { a: { type: "string", format: "uri" } }, required: ["a"] }`));
    expect((await loadModule(ok)).tools.map((t) => t.name)).toEqual(["t"]);
  });
});

type Answer = { id: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } };
/** A bridge in front of `source` as a module; `call` answers one request. */
const bridgeOf = async (source: string, version = "2025-06-18") => {
  const b = await moduleBridge([await mod(source)]);
  await b.init(version);
  let id = 0;
  const call = async (method: string, params: Record<string, unknown> = {}): Promise<Answer> => {
    const mine = ++id;
    await b.send({ jsonrpc: "2.0", id: mine, method, params });
    return b.byId().get(mine) as Answer;
  };
  return { ...b, call };
};

describe("prompts: async render and render failures", () => {
  const source = `export const prompts = [
    { name: "later", description: "", arguments: [], async render() { await new Promise((r) => setTimeout(r, 5)); return { messages: [{ role: "user", type: "text", text: "awaited" }] }; } },
    { name: "boom", description: "", arguments: [], render() { throw new Error("render exploded"); } },
    { name: "asyncboom", description: "", arguments: [], async render() { throw new Error("async exploded"); } },
  ];`;
  it("awaits an async render", async () => {
    const b = await bridgeOf(source);
    expect((await b.call("prompts/get", { name: "later" })).result?.messages).toEqual([{ role: "user", content: { type: "text", text: "awaited" } }]);
  });
  it("answers a render that throws with a JSON-RPC error naming the prompt and the message", async () => {
    const b = await bridgeOf(source);
    for (const [name, message] of [
      ["boom", "render exploded"],
      ["asyncboom", "async exploded"],
    ]) {
      const answer = await b.call("prompts/get", { name });
      expect(answer.error?.code).toBe(-32603);
      expect(answer.error?.message).toContain(`prompt ${name}: ${message}`);
    }
  });
});

describe("template resources: async read", () => {
  it("awaits an async read", async () => {
    const b = await bridgeOf(
      `export const resources = [{ uriTemplate: "t://x/{id}", mimeType: "text/plain", async read({ id }) { await new Promise((r) => setTimeout(r, 5)); return "id " + id; } }];`,
    );
    expect((await b.call("resources/read", { uri: "t://x/7" })).result?.contents).toEqual([{ uri: "t://x/7", mimeType: "text/plain", text: "id 7" }]);
  });
});

describe("messages about tool calls", () => {
  it("a non-streaming tool called with a log level set says so at debug level only", async () => {
    const b = await bridgeOf(`export const tools = [{ name: "plain", description: "", inputSchema: { type: "object" }, handler: async () => ({ text: "ok" }) }];`);
    await b.call("logging/setLevel", { level: "info" });
    b.out.length = 0;
    expect((await b.call("tools/call", { name: "plain", arguments: {} })).result).toEqual({ content: [{ type: "text", text: "ok" }] });
    expect(b.out.filter((m) => !Array.isArray(m) && m.method === "notifications/message")).toEqual([]);
  });

  it("an invalid result names the tool", async () => {
    const b = await bridgeOf(
      `export const tools = [{ name: "badimage", description: "", inputSchema: { type: "object" }, handler: async () => ({ content: [{ type: "image", data: "AA==" }] }) }];`,
    );
    const answer = await b.call("tools/call", { name: "badimage", arguments: {} });
    expect(answer.error?.code).toBe(-32603);
    expect(answer.error?.message).toMatch(/the result of tool badimage would not be valid MCP: \/content\/0/);
  });

  it("a call timeout names the tool, the address once and --call-timeout", async () => {
    const sender = new FakeSender((request) => {
      if (request.request.case === "listTools")
        return answer(request, { case: "listTools", value: { tools: [{ name: "hangs", description: "", inputSchema: { type: "object" } }] } });
      throw new SenderError("timeout", `orchestrator ${sender.address}: no response within 5 ms`);
    });
    const { init, send, byId } = harness(sender);
    await init("2025-06-18");
    await send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "hangs", arguments: {} } });
    const message = (byId().get(1) as Answer).error!.message;
    expect(message).toContain("tool hangs");
    expect(message).toContain("--call-timeout");
    expect(message.split(sender.address).length - 1).toBe(1);
  });
});

describe("start-up messages", () => {
  const oneTool = (name: string) => `export const tools = [{ name: "${name}", description: "", inputSchema: { type: "object" }, handler: async () => ({}) }];`;
  it("a tool name used twice names both modules and indexes; a built-in's hints at --no-builtins", async () => {
    const a = await mod(oneTool("x"));
    const b = await mod(`export const tools = [${"{ name: 'y', description: '', inputSchema: {}, handler: async () => ({}) }"}, ...(await import(${JSON.stringify(a)})).tools];`);
    await expect(loadOrchestratorContent([a, b], false)).rejects.toThrow(`tool module ${b} [1]: tool "x" is defined twice: already by tool module ${a} [0]`);
    await expect(loadOrchestratorContent([await mod(oneTool("echo"))], true)).rejects.toThrow(
      /tool "echo" is defined twice: already by a built-in \(leave the built-ins out with --no-builtins\)/,
    );
    expect((await loadOrchestratorContent([await mod(oneTool("echo"))], false)).tools.list().map((t) => t.name)).toEqual(["echo"]);
  });
  it("a resource URI used twice is named, not a version conflict", async () => {
    const r = await mod(`export const resources = [{ uri: "test://a", text: "1" }, { uri: "test://a", text: "2" }];`);
    await expect(loadOrchestratorContent([r], false)).rejects.toThrow(
      `tool module ${r} resources[1]: resource "test://a" is defined twice: already by tool module ${r} resources[0]`,
    );
  });
  it("refuses a blob that is not base64", async () => {
    const bad = await mod(`export const resources = [{ uri: "test://b", mimeType: "image/png", blob: "not base64!" }];`);
    await expect(loadModule(bad)).rejects.toThrow(/resources\[0\]: "blob" is not valid base64/);
    const ok = await mod(`export const resources = [{ uri: "test://b", mimeType: "image/png", blob: "AAEC" }];`);
    expect((await loadModule(ok)).resources).toHaveLength(1);
  });
  it("a missing module file names the resolved path and the current directory, not this project's files", async () => {
    const error = await loadModule("no-such-dir/tools.mjs").then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).toContain(join(process.cwd(), "no-such-dir/tools.mjs"));
    expect(error?.message).toContain(`current directory, ${process.cwd()}`);
    expect(error?.message).not.toMatch(/load-tools/);
    const missingImport = await mod(`import "./not-there.mjs"; export const tools = [];`);
    const inner = await loadModule(missingImport).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(inner?.message).toContain("not-there.mjs");
    expect(inner?.message).not.toMatch(/load-tools/);
  });
});

describe("ctx.log and ctx.progress arguments", () => {
  const run = async (body: (ctx: ToolContext) => void) => {
    const registry = new ToolRegistry([
      { name: "t", description: "", inputSchema: { type: "object" }, handler: async (_a, ctx) => (body(ctx), {}), stream: async (_a, ctx) => void body(ctx) },
    ]);
    const chunks: ToolChunk[] = [];
    const outcome = await registry.callStream("t", {}, { signal: new AbortController().signal }, (c) => void chunks.push(c));
    const unary = await registry.call("t", {}, { signal: new AbortController().signal });
    return { outcome, chunks: chunks.map((c) => ({ contentType: c.contentType, data: JSON.parse(String(c.data)) as unknown })), unary };
  };
  it("refuses an unknown level with a TypeError naming the allowed ones", async () => {
    const { outcome, unary } = await run((ctx) => ctx.log("bogus" as never, "x"));
    expect(unary).toMatchObject({ success: false, errorMessage: expect.stringContaining("ctx.log: level") }); // the same in a unary call
    expect(outcome).toMatchObject({
      success: false,
      errorMessage: expect.stringMatching(/ctx\.log: level "bogus" is not one of debug, info, notice, warning, error, critical, alert, emergency/),
    });
  });
  it("refuses progress that is not a finite number", async () => {
    for (const bad of ["half", NaN, Infinity]) {
      const { outcome } = await run((ctx) => ctx.progress(bad as number));
      expect(outcome).toMatchObject({ success: false, errorMessage: expect.stringContaining("ctx.progress: progress must be a finite number") });
    }
    const { outcome } = await run((ctx) => ctx.progress(1, "2" as never));
    expect(outcome).toMatchObject({ success: false, errorMessage: expect.stringContaining("total must be a finite number") });
  });
  it("sends a log whose data cannot be serialised as a string saying so, and the call succeeds", async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const { outcome, chunks } = await run((ctx) => ctx.log("info", cyclic));
    expect(outcome).toEqual({ success: true });
    expect(chunks).toEqual([{ contentType: LOG_CONTENT_TYPE, data: { level: "info", data: expect.stringMatching(/^\[log data not serialisable as JSON: .*circular/) } }]);
  });
});

describe("binary stream chunks", () => {
  it("carry their bytes as blob / image blocks, in order with the text", async () => {
    const b = await bridgeOf(`export const tools = [{ name: "bin", description: "", inputSchema: { type: "object" }, handler: async () => ({}),
      async stream(_a, _ctx, emit) {
        emit({ data: "head " });
        emit({ data: new Uint8Array([0, 1, 255]), contentType: "application/octet-stream" });
        emit({ data: "tail" });
        emit({ data: new Uint8Array([137, 80, 78, 71]), contentType: "image/png" });
      } }];`);
    const answer = await b.call("tools/call", { name: "bin", arguments: {}, _meta: { progressToken: "p" } });
    expect(answer.result).toEqual({
      content: [
        { type: "text", text: "head " },
        { type: "resource", resource: { uri: "orchestra://content/1", mimeType: "application/octet-stream", blob: "AAH/" } },
        { type: "text", text: "tail" },
        { type: "image", mimeType: "image/png", data: "iVBORw==" },
      ],
    });
  });
});

describe("resources: list and read agree on the type", () => {
  it("refuses a mimeType that the path's extension contradicts; accepts one it confirms or no extension", async () => {
    const bad = await mod(`export const resources = [{ path: "notes.txt", mimeType: "image/png", blob: "AAEC" }];`);
    await expect(loadModule(bad)).rejects.toThrow(/resources\[0\]: "mimeType" image\/png contradicts the path's extension, which resources\/list reports as text\/plain/);
    const ok = await mod(
      `export const resources = [{ path: "notes.txt", mimeType: "text/plain; charset=utf-8", text: "n" }, { uri: "test://bin", mimeType: "image/png", blob: "AAEC" }];`,
    );
    const b = await moduleBridge([ok]);
    await b.init("2025-06-18");
    await b.send({ jsonrpc: "2.0", id: 1, method: "resources/list" });
    await b.send({ jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: "orchestra://storage/notes.txt" } });
    const list = (b.byId().get(1) as Answer).result!.resources as Array<{ uri: string; mimeType?: string }>;
    const read = (b.byId().get(2) as Answer).result!.contents as Array<{ mimeType?: string }>;
    expect(list.find((r) => r.uri === "orchestra://storage/notes.txt")?.mimeType).toBe("text/plain");
    expect(read[0]!.mimeType!.startsWith(list.find((r) => r.uri === "orchestra://storage/notes.txt")!.mimeType!)).toBe(true);
    expect(list.find((r) => r.uri === "test://bin")).not.toHaveProperty("mimeType");
  });
});
