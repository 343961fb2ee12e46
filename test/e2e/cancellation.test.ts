/**
 * End to end cancellation (MCP "Utilities / Cancellation"): through the compiled `serve` on the
 * embedded reference orchestrator (real QUIC), a `notifications/cancelled` for an in-flight
 * `tools/call` gets no response, cancels the RPC's QUIC stream (the orchestrator counts it, read
 * back through its `stats` tool), and the session keeps serving. The same for a streaming call
 * (progress token → `stream_start`). A first `tools/call` or `prompts/get` cancelled at once while
 * the orchestrator is unreachable leaves `serve` serving (no unhandled rejection of the shared
 * tool-list fetch).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BRIDGE_CERT_NAME, ensureCertStore } from "../../src/pki/store.js";
import { cliEnvironment, requireBuiltCli, tempDir } from "../helpers/cli.js";
import { LineClient } from "../helpers/mcp-lines.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Stats {
  streamsCancelled: number;
  activeStreams: number;
  toolCalls: number;
  streamCalls?: number;
}

beforeAll(() => requireBuiltCli());

describe("cancellation through serve", () => {
  let client: LineClient;
  let nextId = 0;

  const call = (name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) =>
    client.request({ jsonrpc: "2.0", id: `c${++nextId}`, method: "tools/call", params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) } });

  const stats = async (): Promise<Stats> => {
    const r = (await call("stats", {})) as { result: { structuredContent: Stats } };
    return r.result.structuredContent;
  };

  /** Polls the orchestrator's counters until `ok` holds (at most `tries` reads). */
  const statsUntil = async (ok: (s: Stats) => boolean, tries = 500): Promise<Stats> => {
    let s = await stats();
    for (let i = 0; i < tries && !ok(s); i++) {
      await sleep(20);
      s = await stats();
    }
    return s;
  };

  beforeAll(async () => {
    client = new LineClient();
    await client.initialize("2025-06-18", "e2e-cancel");
    // Warm up: connection open and the tool list cached, so the next call goes straight out.
    await client.request({ jsonrpc: "2.0", id: "warm", method: "tools/list" });
  });
  afterAll(async () => {
    await client?.kill();
  });

  it("a slow call cancelled after 100 ms gets no response, its stream is cancelled, and the next call works", async () => {
    const before = await stats();
    client.write({ jsonrpc: "2.0", id: "slow-1", method: "tools/call", params: { name: "slow", arguments: { ms: 60_000 } } });
    await sleep(100);
    // The slow call reached the orchestrator: `toolCalls` counts it besides each stats read.
    let reads = 0;
    const running = await statsUntil((s) => s.toolCalls - before.toolCalls - ++reads >= 1);
    expect(running.toolCalls - before.toolCalls - reads).toBe(1);
    client.write({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "slow-1", reason: "user pressed stop" } });

    const next = await call("echo", { text: "still serving" });
    expect(next).toMatchObject({ result: { content: [{ type: "text", text: "still serving" }] } });
    const after = await statsUntil((s) => s.streamsCancelled > before.streamsCancelled);
    expect(after.streamsCancelled).toBe(before.streamsCancelled + 1);
    expect(client.responsesTo("slow-1")).toEqual([]);
  });

  it("a streaming call cancelled after its first progress stops streaming and gets no response", async () => {
    const before = await stats();
    client.write({
      jsonrpc: "2.0",
      id: "count-1",
      method: "tools/call",
      params: { name: "count", arguments: { to: 100, delayMs: 50 }, _meta: { progressToken: "count-progress" } },
    });
    const progressOf = () =>
      client.lines.filter((l) => !Array.isArray(l) && l.method === "notifications/progress" && (l.params as { progressToken: string }).progressToken === "count-progress");
    for (let i = 0; i < 500 && progressOf().length === 0; i++) await sleep(10);
    expect(progressOf().length).toBeGreaterThan(0);
    client.write({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "count-1" } });
    const after = await statsUntil((s) => s.streamsCancelled > before.streamsCancelled);
    expect(after.streamsCancelled).toBe(before.streamsCancelled + 1);
    expect(after.streamCalls).toBe((before.streamCalls ?? 0) + 1);
    expect(progressOf().length).toBeLessThan(100);
    expect(client.responsesTo("count-1")).toEqual([]);
  });

  it("ends cleanly with no response ever written for the cancelled requests", async () => {
    expect(await client.end()).toBe(0);
    expect(client.responsesTo("slow-1")).toEqual([]);
    expect(client.responsesTo("count-1")).toEqual([]);
  });
});

describe("cancellation with the orchestrator unreachable", () => {
  it.each(["tools/call", "prompts/get"])(
    "a first %s cancelled at once gets no response, and serve goes on (ping answered, exit 0)",
    async (method) => {
      const dir = await tempDir("orchestra-cancel-down-");
      try {
        await ensureCertStore(dir.path, BRIDGE_CERT_NAME);
        // UDP port 1 on loopback: nothing listens (each connect attempt fails with ECONNREFUSED).
        const client = new LineClient(["--orchestrator-addr", "127.0.0.1:1", "--certs-dir", dir.path], undefined, cliEnvironment({ ORCHESTRA_LOG_LEVEL: "warn" }));
        try {
          await client.initialize("2025-06-18", "e2e-cancel-down");
          client.write({
            jsonrpc: "2.0",
            id: 5,
            method,
            params: { name: method === "tools/call" ? "echo" : "greet", ...(method === "tools/call" ? { arguments: { text: "x" } } : {}) },
          });
          client.write({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 5 } });
          // The tool-list fetch started for the call fails while the session goes on.
          for (let i = 0; i < 1_000 && !client.stderr.includes("unreachable"); i++) await sleep(20);
          const exitedEarly = client.exited.then((code) => ({ exited: code, stderr: client.stderr }));
          expect(await Promise.race([client.request({ jsonrpc: "2.0", id: 6, method: "ping" }), exitedEarly])).toMatchObject({ id: 6, result: {} });
          expect(await client.end()).toBe(0);
          expect(client.responsesTo(5)).toEqual([]);
          expect(client.stderr).not.toContain("SenderError");
        } finally {
          await client.kill();
        }
      } finally {
        await dir.remove();
      }
    },
    120_000,
  );
});
