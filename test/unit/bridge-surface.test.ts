/**
 * The bridge's MCP server surface on a fake orchestrator: prompts (list_prompts / prompt_get),
 * resources (storage_list / storage_read, templates), cursor pagination, and tool argument checks
 * before the network hop.
 */
import { describe, expect, it } from "vitest";
import type { PluginResponse } from "../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { validatorsFor } from "../../src/mcp/validation.js";
import { answer, ECHO_SCHEMA, FakeSender, harness, modernMeta, scripted } from "../helpers/bridge-fakes.js";

const V = "2025-06-18";

type Res = { id: unknown; result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } };

function kinds(sender: FakeSender): Array<string | undefined> {
  return sender.requests.map((r) => r.request.case);
}

describe("prompts", () => {
  it("maps prompts/list to list_prompts and the definitions to MCP prompts", async () => {
    const sender = new FakeSender(scripted);
    const { init, send, out } = harness(sender);
    await init(V);
    await send({ jsonrpc: "2.0", id: 1, method: "prompts/list" });
    expect(kinds(sender)).toEqual(["listPrompts"]);
    expect(out).toEqual([
      {
        jsonrpc: "2.0",
        id: 1,
        result: {
          prompts: [
            { name: "greet", description: "Greets", arguments: [{ name: "name", description: "Who", required: true }, { name: "style" }] },
            { name: "review", arguments: [{ name: "path", required: true }] },
          ],
        },
      },
    ]);
  });

  it("maps prompts/get to prompt_get with its arguments and back to messages", async () => {
    const sender = new FakeSender(scripted);
    const { init, send, out } = harness(sender);
    await init(V);
    await send({ jsonrpc: "2.0", id: 2, method: "prompts/get", params: { name: "greet", arguments: { name: "Ada" } } });
    const get = sender.requests.find((r) => r.request.case === "promptGet")!;
    expect(get.request.value).toMatchObject({ promptName: "greet", arguments: { name: "Ada" } });
    expect(out).toEqual([{ jsonrpc: "2.0", id: 2, result: { description: "A greeting", messages: [{ role: "user", content: { type: "text", text: "Hello Ada" } }] } }]);
  });

  it("embeds a resource block's storage entry read with storage_read", async () => {
    const sender = new FakeSender(scripted);
    const { init, send, out } = harness(sender);
    await init(V);
    await send({ jsonrpc: "2.0", id: 3, method: "prompts/get", params: { name: "review", arguments: { path: "docs/a.md" } } });
    expect(kinds(sender)).toEqual(["listPrompts", "promptGet", "storageRead"]);
    const result = (out[0] as Res).result!;
    expect(result.messages).toEqual([
      { role: "user", content: { type: "text", text: "Review:" } },
      { role: "user", content: { type: "resource", resource: { uri: "orchestra://storage/docs/a.md", mimeType: "text/markdown", text: "# A\n" } } },
    ]);
    expect(validatorsFor(V)!.validate("GetPromptResult", result)).toBeNull();
  });

  it("rejects an unknown prompt and a missing required argument with -32602 before prompt_get", async () => {
    const sender = new FakeSender(scripted);
    const { init, send, out } = harness(sender);
    await init(V);
    await send({ jsonrpc: "2.0", id: 4, method: "prompts/get", params: { name: "nope" } });
    await send({ jsonrpc: "2.0", id: 5, method: "prompts/get", params: { name: "greet", arguments: { style: "formal" } } });
    expect(out.map((m) => (m as Res).error?.code)).toEqual([-32602, -32602]);
    expect((out[1] as Res).error!.data).toMatchObject({ missing: ["name"] });
    // One list_prompts fetch for both (the second lookup hits the cache), never a prompt_get.
    expect(kinds(sender)).toEqual(["listPrompts"]);
  });

  it("answers -32603 when the orchestrator's prompt has a role MCP does not allow", async () => {
    const { init, send, out } = harness(
      new FakeSender((req) =>
        req.request.case === "promptGet" ? answer(req, { case: "promptGet", value: { messages: [{ role: "system", content: { type: "text", text: "x" } }] } }) : scripted(req),
      ),
    );
    await init(V);
    await send({ jsonrpc: "2.0", id: 6, method: "prompts/get", params: { name: "greet", arguments: { name: "A" } } });
    expect((out[0] as Res).error).toMatchObject({ code: -32603, message: expect.stringContaining("system") });
  });
});

describe("resources", () => {
  it("maps resources/list to one storage_list per exposed prefix and entries to resources", async () => {
    const sender = new FakeSender(scripted);
    const { init, send, out } = harness(sender, { resourcePrefixes: ["docs/", "data/"] });
    await init(V);
    await send({ jsonrpc: "2.0", id: 1, method: "resources/list" });
    const prefixes = sender.requests.map((r) => (r.request.case === "storageList" ? r.request.value.prefix : "?"));
    expect(prefixes.sort()).toEqual(["data/", "docs/"]);
    expect((out[0] as Res).result).toEqual({
      resources: [
        { uri: "orchestra://storage/data/x.bin", name: "data/x.bin", mimeType: "application/octet-stream", size: 3 },
        { uri: "orchestra://storage/docs/a.md", name: "docs/a.md", mimeType: "text/markdown", size: 4 },
        { uri: "orchestra://storage/docs/b%20c.txt", name: "docs/b c.txt", mimeType: "text/plain", size: 5 },
      ],
    });
  });

  it("reads text and binary entries with storage_read", async () => {
    const sender = new FakeSender(scripted);
    const { init, send, out } = harness(sender);
    await init(V);
    await send({ jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "orchestra://storage/docs/b%20c.txt" } });
    await send({ jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: "orchestra://storage/data/x.bin" } });
    const read = sender.requests[0]!;
    expect(read.request.case === "storageRead" && read.request.value.path).toBe("docs/b c.txt");
    expect((out[0] as Res).result).toEqual({ contents: [{ uri: "orchestra://storage/docs/b%20c.txt", mimeType: "text/plain", text: "b ✓" }] });
    expect((out[1] as Res).result).toEqual({ contents: [{ uri: "orchestra://storage/data/x.bin", mimeType: "application/octet-stream", blob: "AP8B" }] });
  });

  it("answers -32002 for a missing entry, a foreign URI and a path outside the exposed prefixes", async () => {
    const sender = new FakeSender(scripted);
    const { init, send, out } = harness(sender, { resourcePrefixes: ["docs/"] });
    await init(V);
    await send({ jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "orchestra://storage/docs/missing.txt" } });
    await send({ jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: "file:///etc/passwd" } });
    await send({ jsonrpc: "2.0", id: 3, method: "resources/read", params: { uri: "orchestra://storage/other/z.txt" } });
    expect(out.map((m) => (m as Res).error?.code)).toEqual([-32002, -32002, -32002]);
    expect((out[0] as Res).error!.data).toEqual({ uri: "orchestra://storage/docs/missing.txt" });
    expect(kinds(sender)).toEqual(["storageRead"]); // only the in-scope URI reached the orchestrator
  });

  it("lists one resource template per exposed prefix, then the listed template resources (which are no resources)", async () => {
    const sender = new FakeSender((request) => {
      const req = request.request;
      if (req.case === "storageList" && req.value.prefix === "test://") {
        return answer(request, {
          case: "storageList",
          value: {
            entries: [
              { path: "test://t/{id}.json", version: 1n },
              { path: "test://static", version: 1n },
            ],
          },
        });
      }
      return scripted(request);
    });
    const { init, send, out } = harness(sender, { resourcePrefixes: ["docs/", "a b/", "test://"] });
    await init(V);
    await send({ jsonrpc: "2.0", id: 1, method: "resources/templates/list" });
    expect(kinds(sender)).toEqual(["storageList", "storageList", "storageList"]);
    expect((out[0] as Res).result!.resourceTemplates).toEqual([
      expect.objectContaining({ uriTemplate: "orchestra://storage/docs/{+path}", name: "storage:docs/" }),
      expect.objectContaining({ uriTemplate: "orchestra://storage/a%20b/{+path}", name: "storage:a b/" }),
      expect.objectContaining({ uriTemplate: "test://{+path}" }),
      { uriTemplate: "test://t/{id}.json", name: "test://t/{id}.json", mimeType: "application/json" },
    ]);
    await send({ jsonrpc: "2.0", id: 2, method: "resources/list" });
    const uris = ((out[1] as Res).result!.resources as Array<{ uri: string }>).map((r) => r.uri);
    expect(uris).toContain("test://static");
    expect(uris).not.toContain("test://t/{id}.json");
  });
});

describe("cursor pagination", () => {
  it("pages tools/list with an opaque cursor of the configured page size", async () => {
    const sender = new FakeSender(scripted);
    const { init, send, out } = harness(sender, { pageSize: 2 });
    await init(V);
    await send({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const first = (out[0] as Res).result!;
    expect((first.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(["echo", "fails"]);
    expect(typeof first.nextCursor).toBe("string");
    await send({ jsonrpc: "2.0", id: 2, method: "tools/list", params: { cursor: first.nextCursor } });
    const second = (out[1] as Res).result!;
    expect((second.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(["count"]);
    expect(second).not.toHaveProperty("nextCursor");
    // The second page came from the list fetched for the first.
    expect(kinds(sender)).toEqual(["listTools"]);
  });

  it("pages resources and prompts, and rejects foreign or malformed cursors with -32602", async () => {
    const sender = new FakeSender(scripted);
    const { init, send, out } = harness(sender, { pageSize: 1 });
    await init(V);
    await send({ jsonrpc: "2.0", id: 1, method: "resources/list" });
    const cursor = (out[0] as Res).result!.nextCursor as string;
    await send({ jsonrpc: "2.0", id: 2, method: "resources/list", params: { cursor } });
    expect((out[1] as Res).result!.resources).toEqual([expect.objectContaining({ name: "docs/a.md" })]);
    await send({ jsonrpc: "2.0", id: 3, method: "prompts/list", params: { cursor } }); // a resources cursor
    await send({ jsonrpc: "2.0", id: 4, method: "tools/list", params: { cursor: "not a cursor!" } });
    expect((out[2] as Res).error!.code).toBe(-32602);
    expect((out[3] as Res).error!.code).toBe(-32602);
  });
});

describe("tool argument checks before the network hop", () => {
  it("rejects arguments that fail the inputSchema with -32602 before 2025-11-25, without a tool_call", async () => {
    for (const version of ["2025-03-26", "2025-06-18"].filter((v) => validatorsFor(v))) {
      const sender = new FakeSender(scripted);
      const { init, send, out } = harness(sender);
      await init(version);
      await send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text: 42 } } });
      expect((out[0] as Res).error).toMatchObject({ code: -32602, data: { pointer: "/params/arguments/text", tool: "echo" } });
      expect(kinds(sender)).toEqual(["listTools"]);
    }
  });

  it("answers an isError tool result from 2025-11-25 on, without a tool_call", async () => {
    for (const version of ["2025-11-25"].filter((v) => validatorsFor(v))) {
      const sender = new FakeSender(scripted);
      const { init, send, out } = harness(sender);
      await init(version);
      await send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: {} } });
      const result = (out[0] as Res).result!;
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toContain("text");
      expect(kinds(sender)).toEqual(["listTools"]);
    }
    const sender = new FakeSender(scripted);
    const { send, out } = harness(sender);
    await send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { _meta: modernMeta(), name: "echo", arguments: { text: [] } } });
    expect((out[0] as Res).result).toMatchObject({ isError: true, resultType: "complete" });
  });

  it("fetches tools/list once for a tool missing from the cache, then uses the cache; a tool still missing is -32602 without a tool_call", async () => {
    const sender = new FakeSender(scripted);
    const { init, send, out, handler } = harness(sender);
    await init(V);
    for (let i = 0; i < 3; i++) await send({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "echo", arguments: { text: `t${i}` } } });
    await send({ jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: "unlisted", arguments: {} } });
    await send({ jsonrpc: "2.0", id: 11, method: "tools/call", params: { name: "unlisted", arguments: {} } });
    // echo: fetched once, then cached. unlisted: one refetch (the list may have grown), then known missing.
    expect(kinds(sender)).toEqual(["listTools", "toolCall", "toolCall", "toolCall", "listTools"]);
    expect(handler.tools.fetches).toBe(2);
    // MCP server/tools "Error Handling": an unknown tool is a protocol error.
    for (const m of out.slice(3)) expect(m).toMatchObject({ error: { code: -32602, message: "Unknown tool: unlisted", data: { tool: "unlisted" } } });
    expect(out.slice(0, 3).map((m) => ((m as Res).result!.content as Array<{ text: string }>)[0]!.text)).toEqual(["t0", "t1", "t2"]);
  });

  it("shares one tools/list fetch between concurrent calls and uses the schema a tools/list refreshed", async () => {
    let schema: Record<string, unknown> = ECHO_SCHEMA;
    const sender = new FakeSender((req) =>
      req.request.case === "listTools" ? answer(req, { case: "listTools", value: { tools: [{ name: "echo", inputSchema: schema }] } }) : (scripted(req) as PluginResponse),
    );
    const { init, handler, out, send } = harness(sender);
    await init(V);
    for (let i = 0; i < 5; i++) handler.handleLine(JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "echo", arguments: { text: "x" } } }));
    await handler.idle();
    expect(kinds(sender).filter((k) => k === "listTools")).toHaveLength(1);
    expect(out.every((m) => "result" in m)).toBe(true);
    schema = { type: "object", properties: { text: { type: "string", maxLength: 1 } } };
    await send({ jsonrpc: "2.0", id: 20, method: "tools/list" });
    out.length = 0;
    await send({ jsonrpc: "2.0", id: 21, method: "tools/call", params: { name: "echo", arguments: { text: "too long" } } });
    expect((out[0] as Res).error).toMatchObject({ code: -32602 });
  });

  it("checks 2020-12 schemas from 2025-11-25 on (e.g. prefixItems)", async () => {
    const schema = { type: "object", properties: { pair: { type: "array", prefixItems: [{ type: "string" }, { type: "number" }], items: false } } };
    const version = "2025-11-25";
    if (!validatorsFor(version)) return;
    const sender = new FakeSender((req) =>
      req.request.case === "listTools" ? answer(req, { case: "listTools", value: { tools: [{ name: "p", inputSchema: schema }] } }) : scripted(req),
    );
    const { init, send, out } = harness(sender);
    await init(version);
    await send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "p", arguments: { pair: ["a", "b"] } } });
    await send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "p", arguments: { pair: ["a", 1] } } });
    expect((out[0] as Res).result).toMatchObject({ isError: true });
    expect(JSON.stringify((out[0] as Res).result)).toContain("/pair/1");
    expect(kinds(sender).filter((k) => k === "toolCall")).toHaveLength(1);
  });
});
