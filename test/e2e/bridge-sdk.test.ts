/**
 * End to end: the compiled `orchestra-stdio serve` as a child process, driven by the official
 * MCP TypeScript SDK client over stdio, talking real QUIC to the reference orchestrator
 * (embedded in-process, or as a separate process).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { BRIDGE_CERT_NAME, ensureCertStore } from "../../src/pki/store.js";
import { CLI, requireBuiltCli, startOrchestratorProcess, tempDir } from "../helpers/cli.js";

type TextBlock = { type: string; text: string };

async function connect(args: string[] = []): Promise<{ client: Client; transport: StdioClientTransport; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "serve", ...args],
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: "e2e", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

function text(result: unknown): string {
  return ((result as { content: TextBlock[] }).content[0] as TextBlock).text;
}

beforeAll(() => requireBuiltCli());

describe("serve on the embedded default, driven by the MCP SDK client", () => {
  let client: Client;

  beforeAll(async () => {
    ({ client } = await connect());
  });
  afterAll(async () => {
    await client?.close();
  });

  it("completes the initialize handshake", () => {
    expect(client.getServerVersion()).toMatchObject({ name: "orchestra-stdio" });
    expect(client.getServerCapabilities()).toMatchObject({ tools: {} });
  });

  it("answers ping", async () => {
    await expect(client.ping()).resolves.toEqual({});
  });

  it("lists the orchestrator's tools", async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["echo", "slow"]));
    const echo = tools.find((t) => t.name === "echo")!;
    expect(echo.inputSchema.type).toBe("object");
  });

  it("echoes emoji and CJK text unchanged", async () => {
    const sample = 'héllo 🙂👩‍👩‍👧 世界 こんにちは 한국어 \u0000 "quoted" \\ \n line';
    const result = await client.callTool({ name: "echo", arguments: { text: sample } });
    expect(result.isError).toBeFalsy();
    expect(text(result)).toBe(sample);
  });

  it("echoes a 5 MiB string", async () => {
    const big = "0123456789abcdef".repeat((5 * 1024 * 1024) / 16);
    const result = await client.callTool({ name: "echo", arguments: { text: big } });
    expect(text(result).length).toBe(big.length);
    expect(text(result) === big).toBe(true);
  });

  it("answers 100 concurrent calls, each with its own answer", async () => {
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => client.callTool({ name: "echo", arguments: { text: `call-${i}` } })));
    expect(results.map(text)).toEqual(Array.from({ length: 100 }, (_, i) => `call-${i}`));
  });

  it("answers an unknown tool with -32602 (MCP: unknown tools are protocol errors)", async () => {
    const error = await client.callTool({ name: "no-such-tool", arguments: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32602);
    expect((error as McpError).message).toContain("Unknown tool: no-such-tool");
  });

  it("rejects invalid params with -32602", async () => {
    // The SDK sends what it is given: a tools/call without the required `name`.
    const error = await client.request({ method: "tools/call", params: { arguments: {} } } as never, CallToolResultSchema).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32602);
  });
});

describe("serve with an unreachable orchestrator", () => {
  let client: Client;
  beforeAll(async () => {
    // A store with a CA (with an address, serve refuses to start without one).
    const certs = (await tempDir()).path;
    await ensureCertStore(certs, BRIDGE_CERT_NAME);
    ({ client } = await connect(["--orchestrator-addr", "127.0.0.1:9", "--certs-dir", certs]));
  });
  afterAll(async () => {
    await client?.close();
  });

  it("still answers initialize and ping", async () => {
    expect(client.getServerVersion()).toMatchObject({ name: "orchestra-stdio" });
    await expect(client.ping()).resolves.toEqual({});
  });

  it("fails tools/list and tools/call with -32603 naming the address", async () => {
    for (const call of [() => client.listTools(), () => client.callTool({ name: "echo", arguments: { text: "x" } })]) {
      const error = (await call().catch((e: unknown) => e)) as McpError;
      expect(error).toBeInstanceOf(McpError);
      expect(error.code).toBe(-32603);
      expect(error.message).toContain("127.0.0.1:9");
    }
  });
});

describe("serve against the orchestrator running as a separate process", () => {
  let client: Client;
  let orchestrator: Awaited<ReturnType<typeof startOrchestratorProcess>>;
  let certs: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    certs = await tempDir();
    orchestrator = await startOrchestratorProcess(certs.path);
    ({ client } = await connect(["--orchestrator-addr", `127.0.0.1:${orchestrator.port}`, "--certs-dir", certs.path]));
  });
  afterAll(async () => {
    await client?.close();
    await orchestrator?.stop();
    await certs?.remove();
  });

  it("lists and calls tools over real QUIC between two processes", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("echo");
    const result = await client.callTool({ name: "echo", arguments: { text: "across processes" } });
    expect(text(result)).toBe("across processes");
  });

  it("passes a slow tool's structured result through", async () => {
    const result = await client.callTool({ name: "slow", arguments: { ms: 20 } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toBeTypeOf("object");
  });
});
