/**
 * End to end, the bridge's full server surface against a reference orchestrator running in this
 * process (so the test can change its tools and storage): the compiled `serve` connects over real
 * QUIC and the official SDK client drives it. Covers progress through `stream_start`,
 * `notifications/tools/list_changed` through `subscribe`, prompts, resources (live storage),
 * logging, and cursor pagination (`--page-size`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CallToolResultSchema,
  ListToolsResultSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
  type Progress,
} from "@modelcontextprotocol/sdk/types.js";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/quic-server.js";
import type { Tool } from "../../src/orchestrator/registry.js";
import { CLI, requireBuiltCli, tempDir } from "../helpers/cli.js";
import { PinnedVersionTransport } from "../helpers/mcp-lines.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const shoutTool: Tool = {
  name: "shout",
  description: "Upper-cases its text.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  async handler(args) {
    return { text: String(args.text).toUpperCase() };
  },
};

describe("the server surface against an in-process orchestrator", () => {
  let orchestrator: RunningOrchestrator;
  let certs: Awaited<ReturnType<typeof tempDir>>;
  let client: Client;
  let transport: PinnedVersionTransport;
  const listChanged: number[] = [];
  const logs: Array<{ level: string; data: unknown }> = [];

  beforeAll(async () => {
    requireBuiltCli();
    certs = await tempDir();
    orchestrator = await startOrchestrator({ host: "127.0.0.1", port: 0, certsDir: certs.path });
    // The pinning wrapper only records the raw messages here (2025-11-25 is the SDK's own choice).
    transport = new PinnedVersionTransport(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, "serve", "--orchestrator-addr", `127.0.0.1:${orchestrator.port}`, "--certs-dir", certs.path, "--page-size", "2"],
        stderr: "pipe",
      }),
      "2025-11-25",
    );
    client = new Client({ name: "e2e-surface", version: "1.0.0" });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      listChanged.push(Date.now());
    });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push(n.params as { level: string; data: unknown });
    });
    await client.connect(transport);
  });
  afterAll(async () => {
    await client?.close();
    await orchestrator?.stop();
    await certs?.remove();
  });

  it("reports each chunk of a streaming tool as progress, then its result", async () => {
    const from = transport.received.length;
    const result = await client.callTool({ name: "count", arguments: { to: 4 } }, CallToolResultSchema, { onprogress: () => {} });
    expect(result).toEqual({ content: [{ type: "text", text: "1\n2\n3\n4\n" }] });
    // Read from the raw stream: the SDK runs notification handlers a microtask late, so progress
    // that arrives in the same read as the response never reaches `onprogress` (an SDK race).
    const progress = transport.received
      .slice(from)
      .filter((m) => "method" in m && m.method === "notifications/progress")
      .map((m) => (m as { params: Progress & { progressToken: unknown } }).params);
    expect(progress.map((p) => [p.progress, p.message])).toEqual([
      [1, "1\n"],
      [2, "2\n"],
      [3, "3\n"],
      [4, "4\n"],
    ]);
    expect(new Set(progress.map((p) => p.progressToken)).size).toBe(1);
    expect(orchestrator.stats.streamCalls).toBeGreaterThanOrEqual(1);
  });

  it("falls back to a unary call with progress requested for a tool that does not stream", async () => {
    const from = transport.received.length;
    const before = orchestrator.stats.toolCalls;
    const result = await client.callTool({ name: "echo", arguments: { text: "no stream" } }, CallToolResultSchema, { onprogress: () => {} });
    expect(result.content).toEqual([{ type: "text", text: "no stream" }]);
    expect(transport.received.slice(from).filter((m) => "method" in m)).toEqual([]);
    expect(orchestrator.stats.toolCalls).toBe(before + 1);
  });

  it("pages tools/list with the configured page size", async () => {
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.request({ method: "tools/list", params: cursor ? { cursor } : {} }, ListToolsResultSchema);
      expect(page.tools.length).toBeLessThanOrEqual(2);
      names.push(...page.tools.map((t) => t.name));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(names).toEqual(orchestrator.tools.list().map((t) => t.name));
    expect(pages).toBe(Math.ceil(names.length / 2));
  });

  it("notifies tools/list_changed when the orchestrator's tool set changes, and serves the new tool", async () => {
    const seen = listChanged.length;
    orchestrator.tools.register(shoutTool);
    for (let i = 0; i < 500 && listChanged.length === seen; i++) await sleep(10);
    expect(listChanged.length).toBe(seen + 1);
    const result = await client.callTool({ name: "shout", arguments: { text: "hey" } });
    expect(result.content).toEqual([{ type: "text", text: "HEY" }]);
    // Its schema is enforced by the bridge (2025-11-25: an isError result, no orchestrator call).
    const before = orchestrator.stats.toolCalls;
    const invalid = await client.callTool({ name: "shout", arguments: {} });
    expect(invalid.isError).toBe(true);
    expect(orchestrator.stats.toolCalls).toBe(before);
  });

  it("serves prompts and the live storage as resources", async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(["greet", "review"]);
    orchestrator.storage!.write("docs/new.txt", new TextEncoder().encode("fresh"), {}, 0);
    const uris: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listResources(cursor ? { cursor } : {});
      uris.push(...page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
    } while (cursor);
    expect(uris).toContain("orchestra://storage/docs/new.txt");
    const read = await client.readResource({ uri: "orchestra://storage/docs/new.txt" });
    expect(read.contents).toEqual([{ uri: "orchestra://storage/docs/new.txt", mimeType: "text/plain", text: "fresh" }]);
    const review = await client.getPrompt({ name: "review", arguments: { path: "docs/new.txt" } });
    expect(review.messages[1]!.content).toMatchObject({ type: "resource", resource: { text: "fresh" } });
  });

  it("sends log notifications at the level the client set", async () => {
    await client.setLoggingLevel("debug");
    const before = logs.length;
    await client.callTool({ name: "echo", arguments: { text: "logged" } });
    expect(logs.length).toBeGreaterThan(before);
    await client.setLoggingLevel("error");
    const after = logs.length;
    await client.callTool({ name: "echo", arguments: { text: "quiet" } });
    expect(logs.length).toBe(after);
  });
});
