/**
 * End to end per MCP revision, through the compiled `orchestra-stdio serve` on the embedded
 * reference orchestrator (real QUIC):
 * - 2024-11-05 … 2025-11-25: the official SDK client, its `initialize` pinned to the revision
 *   (the SDK asks for its latest, 2025-11-25, otherwise): negotiation, capabilities, tools,
 *   prompts, resources and logging, every result checked by the SDK's own schemas;
 * - 2025-03-26 JSON-RPC batches as raw lines;
 * - 2026-07-28 (stateless) as raw JSON-RPC lines modelled on the specification's examples
 *   (server/discover, per-request `_meta`, resultType, -32022).
 * A revision without a generated schema in this build is skipped, with the reason in its title.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { DEFAULT_VERSION_SUPPORT } from "../../src/mcp/negotiation.js";
import { CLI, requireBuiltCli, runCli } from "../helpers/cli.js";
import { PinnedVersionTransport } from "../helpers/mcp-lines.js";

const INITIALIZE_FAMILY = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const STATELESS = "2026-07-28";
const supported = (v: string) => DEFAULT_VERSION_SUPPORT.legacy.includes(v) || DEFAULT_VERSION_SUPPORT.modern.includes(v);

const line = (m: unknown) => JSON.stringify(m) + "\n";
function parse(stdout: string): unknown[] {
  return stdout
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as unknown);
}

interface Session {
  client: Client;
  transport: PinnedVersionTransport;
  logs: Array<{ level: string }>;
}

/** One `serve` process per revision, all started at once (each is a separate legacy session). */
const sessions = new Map<string, Promise<Session>>();
function session(version: string): Promise<Session> {
  let s = sessions.get(version);
  if (!s) {
    s = (async () => {
      const transport = new PinnedVersionTransport(new StdioClientTransport({ command: process.execPath, args: [CLI, "serve"], stderr: "pipe" }), version);
      const client = new Client({ name: "e2e-versions", version: "1.0.0" });
      const logs: Array<{ level: string }> = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        logs.push(n.params as { level: string });
      });
      await client.connect(transport);
      return { client, transport, logs };
    })();
    sessions.set(version, s);
  }
  return s;
}

beforeAll(async () => {
  requireBuiltCli();
  await Promise.all(INITIALIZE_FAMILY.filter(supported).map(session));
});
afterAll(async () => {
  for (const s of sessions.values()) await (await s).client.close();
});

for (const version of INITIALIZE_FAMILY) {
  describe.skipIf(!supported(version))(`MCP ${version} with the SDK client${supported(version) ? "" : " (skipped: no generated schema for this revision in this build)"}`, () => {
    let client: Client;
    let transport: PinnedVersionTransport;
    let logs: Array<{ level: string }>;

    beforeAll(async () => {
      ({ client, transport, logs } = await session(version));
    });

    it("negotiates the revision and advertises tools, prompts, resources and logging", () => {
      expect(transport.negotiated).toBe(version);
      expect(client.getServerVersion()).toMatchObject({ name: "orchestra-stdio" });
      const caps = client.getServerCapabilities()!;
      expect(Object.keys(caps).sort()).toEqual(["logging", "prompts", "resources", "tools"]);
      expect(caps.tools).toEqual({ listChanged: true });
    });

    it("lists and calls tools", async () => {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["echo", "slow", "count", "stats"]));
      const result = await client.callTool({ name: "echo", arguments: { text: `hello ${version}` } });
      expect(result.content).toEqual([{ type: "text", text: `hello ${version}` }]);
    });

    it("rejects invalid tool arguments as the revision says", async () => {
      if (version >= "2025-11-25") {
        const result = await client.callTool({ name: "echo", arguments: { text: 1 } });
        expect(result.isError).toBe(true);
      } else {
        const error = (await client.callTool({ name: "echo", arguments: { text: 1 } }).catch((e: unknown) => e)) as { code?: number };
        expect(error.code).toBe(-32602);
      }
    });

    it("serves prompts from the orchestrator, embedding a storage entry", async () => {
      const { prompts } = await client.listPrompts();
      expect(prompts.map((p) => p.name)).toEqual(["greet", "review"]);
      const greet = await client.getPrompt({ name: "greet", arguments: { name: "Ada" } });
      expect(greet.messages[0]).toEqual({ role: "user", content: { type: "text", text: "Please greet Ada." } });
      const review = await client.getPrompt({ name: "review", arguments: { path: "docs/readme.md" } });
      expect(review.messages[1]!.content).toMatchObject({ type: "resource", resource: { uri: "orchestra://storage/docs/readme.md", mimeType: "text/markdown" } });
    });

    it("serves the orchestrator's storage as resources", async () => {
      const { resources } = await client.listResources();
      expect(resources.map((r) => r.uri)).toEqual(["orchestra://storage/data/blob.bin", "orchestra://storage/docs/notes.txt", "orchestra://storage/docs/readme.md"]);
      const notes = await client.readResource({ uri: "orchestra://storage/docs/notes.txt" });
      expect(notes.contents).toEqual([{ uri: "orchestra://storage/docs/notes.txt", mimeType: "text/plain", text: "Notes: résumé ✓ 世界\n" }]);
      const blob = await client.readResource({ uri: "orchestra://storage/data/blob.bin" });
      expect(blob.contents[0]).toMatchObject({ blob: Buffer.from([0, 1, 2, 254, 255]).toString("base64") });
      const { resourceTemplates } = await client.listResourceTemplates();
      expect(resourceTemplates).toEqual([expect.objectContaining({ uriTemplate: "orchestra://storage/{+path}" })]);
      const missing = (await client.readResource({ uri: "orchestra://storage/nope" }).catch((e: unknown) => e)) as { code?: number };
      expect(missing.code).toBe(-32002);
    });

    it("sends log notifications once the client set a level", async () => {
      await client.setLoggingLevel("debug");
      await client.listTools();
      expect(logs.length).toBeGreaterThan(0);
      expect(logs.every((l) => l.level === "debug")).toBe(true);
    });
  });
}

describe.skipIf(!supported("2025-03-26"))("MCP 2025-03-26 batches over raw stdio", () => {
  it("answers a batch with one array line and a batch of notifications with nothing", async () => {
    const input =
      line({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }) +
      line([{ jsonrpc: "2.0", method: "notifications/initialized" }]) +
      line([
        { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { text: "batched" } } },
        { jsonrpc: "2.0", id: 3, method: "ping" },
        { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 99 } },
      ]);
    const { stdout, code } = await runCli(["serve"], input);
    expect(code).toBe(0);
    const out = parse(stdout);
    expect(out).toHaveLength(2);
    expect(out[0]).toMatchObject({ id: 1, result: { protocolVersion: "2025-03-26" } });
    const batch = out[1] as Array<{ id: number; result: unknown }>;
    expect(Array.isArray(batch)).toBe(true);
    expect(batch.map((m) => m.id).sort()).toEqual([2, 3]);
    expect(batch.find((m) => m.id === 2)!.result).toEqual({ content: [{ type: "text", text: "batched" }] });
  });
});

describe.skipIf(!supported(STATELESS))(`MCP ${STATELESS} (stateless) over raw stdio`, () => {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientInfo": { name: "ExampleClient", version: "1.0.0" },
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  let byId: Map<unknown, Record<string, unknown>>;
  let all: unknown[];

  beforeAll(async () => {
    const input = [
      { jsonrpc: "2.0", id: "discover-1", method: "server/discover", params: { _meta: meta } },
      { jsonrpc: "2.0", id: "list-tools-example", method: "tools/list", params: { _meta: meta } },
      { jsonrpc: "2.0", id: "call-tool-example", method: "tools/call", params: { _meta: meta, name: "echo", arguments: { text: "New York" } } },
      { jsonrpc: "2.0", id: "progress", method: "tools/call", params: { _meta: { ...meta, progressToken: "oivaizmir" }, name: "count", arguments: { to: 3 } } },
      { jsonrpc: "2.0", id: "prompts", method: "prompts/get", params: { _meta: meta, name: "greet", arguments: { name: "Ada" } } },
      { jsonrpc: "2.0", id: "resources", method: "resources/list", params: { _meta: meta } },
      { jsonrpc: "2.0", id: "read", method: "resources/read", params: { _meta: meta, uri: "orchestra://storage/docs/readme.md" } },
      { jsonrpc: "2.0", id: "logged", method: "tools/list", params: { _meta: { ...meta, "io.modelcontextprotocol/logLevel": "debug" } } },
      { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: { ...meta, "io.modelcontextprotocol/protocolVersion": "1900-01-01" } } },
      { jsonrpc: "2.0", id: 2, method: "ping", params: { _meta: meta } },
      { jsonrpc: "2.0", id: 3, method: "tools/list" },
      { jsonrpc: "2.0", id: "listen-1", method: "subscriptions/listen", params: { _meta: meta, notifications: { toolsListChanged: true, promptsListChanged: true } } },
      // Last: an initialize asking for the stateless revision (it starts a legacy session).
      { jsonrpc: "2.0", id: 4, method: "initialize", params: { protocolVersion: STATELESS, capabilities: {}, clientInfo: { name: "raw", version: "1" } } },
    ]
      .map(line)
      .join("");
    const { stdout, code } = await runCli(["serve"], input);
    expect(code).toBe(0);
    all = parse(stdout);
    byId = new Map((all as Array<Record<string, unknown>>).filter((m) => "id" in m).map((m) => [m.id, m]));
  });

  it("answers server/discover with its revisions, capabilities and identity", () => {
    expect(byId.get("discover-1")).toMatchObject({
      result: {
        resultType: "complete",
        supportedVersions: [STATELESS],
        capabilities: { tools: { listChanged: true }, prompts: {}, resources: {}, logging: {} },
        ttlMs: 0,
        cacheScope: "private",
        _meta: { "io.modelcontextprotocol/serverInfo": { name: "orchestra-stdio" } },
      },
    });
  });

  it("serves tools, prompts and resources per request with resultType and cache hints", () => {
    expect(byId.get("list-tools-example")).toMatchObject({ result: { resultType: "complete", ttlMs: 0, cacheScope: "private", tools: expect.any(Array) } });
    expect(byId.get("call-tool-example")).toMatchObject({ result: { resultType: "complete", content: [{ type: "text", text: "New York" }] } });
    expect(byId.get("prompts")).toMatchObject({ result: { resultType: "complete", messages: [{ role: "user" }] } });
    expect(byId.get("resources")).toMatchObject({ result: { resultType: "complete", cacheScope: "private", resources: expect.any(Array) } });
    expect(byId.get("read")).toMatchObject({ result: { resultType: "complete", ttlMs: 0, contents: [{ uri: "orchestra://storage/docs/readme.md" }] } });
  });

  it("reports progress of a streamed call before its result", () => {
    const progress = all.filter((m) => (m as { method?: string }).method === "notifications/progress") as Array<{ params: { progressToken: string; progress: number } }>;
    expect(progress.map((p) => [p.params.progressToken, p.params.progress])).toEqual([
      ["oivaizmir", 1],
      ["oivaizmir", 2],
      ["oivaizmir", 3],
    ]);
    expect(byId.get("progress")).toMatchObject({ result: { content: [{ type: "text", text: "1\n2\n3\n" }] } });
    expect(all.indexOf(progress[2])).toBeLessThan(all.indexOf(byId.get("progress")));
  });

  it("logs only for the request that asked for a level", () => {
    const logs = all.filter((m) => (m as { method?: string }).method === "notifications/message");
    expect(logs.length).toBeGreaterThan(0);
  });

  it("answers an unsupported version with -32022, ping with -32601 and a request without _meta with -32602", () => {
    expect(byId.get(1)).toMatchObject({ error: { code: -32022, data: { requested: "1900-01-01", supported: [STATELESS] } } });
    expect(byId.get(2)).toMatchObject({ error: { code: -32601 } });
    expect(byId.get(3)).toMatchObject({ error: { code: -32602 } });
  });

  it("acknowledges subscriptions/listen with what it honours and closes it with a result on shutdown", () => {
    const ack = all.find((m) => (m as { method?: string }).method === "notifications/subscriptions/acknowledged");
    expect(ack).toEqual({
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: { _meta: { "io.modelcontextprotocol/subscriptionId": "listen-1" }, notifications: { toolsListChanged: true } },
    });
    expect(byId.get("listen-1")).toMatchObject({ result: { resultType: "complete", _meta: { "io.modelcontextprotocol/subscriptionId": "listen-1" } } });
  });

  it("answers an initialize asking for the stateless revision with an initialize-family one", () => {
    expect(byId.get(4)).toMatchObject({ result: { protocolVersion: DEFAULT_VERSION_SUPPORT.legacy[0] } });
  });
});
