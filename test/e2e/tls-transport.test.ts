/**
 * End to end over the TLS-over-TCP transport (docs/tls-transport.md): `serve --transport tls`
 * and `orchestrator --transport tls` as separate processes, the bridge driven by the MCP SDK
 * client over stdio.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BRIDGE_CERT_NAME, ensureCertStore } from "../../src/pki/store.js";
import { requireBuiltCli, tempDir } from "../helpers/cli.js";
import { connectBridge, mcpError, spawnOrchestrator, textOf, waitFor, type Bridge, type OrchestratorProcess } from "../helpers/transport.js";

beforeAll(() => requireBuiltCli());

/** Orchestrator debug log lines (pino JSON) whose msg is `msg`. */
function logLines(stderr: string, msg: string): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const line of stderr.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const rec = JSON.parse(line) as Record<string, unknown>;
      if (rec.msg === msg) out.push(rec);
    } catch {
      /* not a log line */
    }
  }
  return out;
}

let certs: Awaited<ReturnType<typeof tempDir>>;
let otherCerts: Awaited<ReturnType<typeof tempDir>>;
let orchestrator: OrchestratorProcess;
/** Same cert store as the orchestrator. */
let bridge: Bridge;
/** A cert store of its own, with a CA unrelated to the orchestrator's. */
let foreign: Bridge;
/** No address: the embedded in-process TLS orchestrator. */
let embedded: Bridge;

beforeAll(async () => {
  [certs, otherCerts] = await Promise.all([tempDir(), tempDir()]);
  await ensureCertStore(otherCerts.path, BRIDGE_CERT_NAME);
  orchestrator = await spawnOrchestrator({
    transport: "tls",
    certsDir: certs.path,
    env: { ORCHESTRA_LOG_LEVEL: "debug" }, // the cancellation check reads its debug log
  });
  [bridge, foreign, embedded] = await Promise.all([
    connectBridge(["--transport", "tls", "--orchestrator-addr", orchestrator.address, "--certs-dir", certs.path]),
    connectBridge(["--transport", "tls", "--orchestrator-addr", orchestrator.address, "--certs-dir", otherCerts.path]),
    connectBridge(["--transport", "tls"]),
  ]);
});
afterAll(async () => {
  await Promise.all([bridge?.close(), foreign?.close(), embedded?.close()]);
  await orchestrator?.stop();
  await Promise.all([certs?.remove(), otherCerts?.remove()]);
});

describe("serve --transport tls against orchestrator --transport tls", () => {
  it("lists the tools and echoes text", async () => {
    const { tools } = await bridge.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["echo", "slow"]));
    const sample = 'TLS 🙂 世界 "quoted" \\ \n line';
    const result = await bridge.client.callTool({ name: "echo", arguments: { text: sample } });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe(sample);
  });

  it("answers 100 concurrent calls on the one connection, each with its own answer", async () => {
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        i % 4 === 0 ? bridge.client.callTool({ name: "slow", arguments: { ms: i % 7 } }) : bridge.client.callTool({ name: "echo", arguments: { text: `call-${i}` } }),
      ),
    );
    results.forEach((r, i) => {
      expect(r.isError).toBeFalsy();
      if (i % 4 === 0) expect(r.structuredContent).toEqual({ slept: i % 7 });
      else expect(textOf(r)).toBe(`call-${i}`);
    });
  });

  it("answers an unknown tool with -32602 (MCP: unknown tools are protocol errors)", async () => {
    const e = await mcpError(bridge.client.callTool({ name: "no-such-tool", arguments: {} }));
    expect(e.code).toBe(-32602);
    expect(e.message).toContain("Unknown tool: no-such-tool");
  });

  it("cancels a slow call through the SDK's AbortSignal: the orchestrator stops it and the next call works", async () => {
    const before = logLines(orchestrator.stderr(), "request cancelled by the client").length;
    const ac = new AbortController();
    const call = bridge.client.callTool({ name: "slow", arguments: { ms: 60_000 } }, undefined, { signal: ac.signal });
    const settled = call.then(
      () => "resolved",
      () => "rejected",
    );
    // Give the request time to reach the orchestrator (not a timing assertion: if it had not,
    // the orchestrator would log no cancellation and the wait below would fail).
    await new Promise((r) => setTimeout(r, 300));
    ac.abort("user pressed stop");
    expect(await settled).toBe("rejected");
    await waitFor(() => logLines(orchestrator.stderr(), "request cancelled by the client").length > before, "the orchestrator to log the cancellation");
    const cancelled = logLines(orchestrator.stderr(), "request cancelled by the client").slice(before);
    expect(cancelled.map((r) => r.what)).toContain("tool_call slow");
    const next = await bridge.client.callTool({ name: "echo", arguments: { text: "still here" } });
    expect(textOf(next)).toBe("still here");
  });
});

describe("serve --transport tls with the embedded orchestrator", () => {
  it("serves echo over an in-process TLS orchestrator", async () => {
    const result = await embedded.client.callTool({ name: "echo", arguments: { text: "embedded" } });
    expect(textOf(result)).toBe("embedded");
  });
});

describe("mutual TLS over the TLS transport", () => {
  it("a bridge whose cert store holds another CA is refused: -32603 naming the address", async () => {
    for (const call of [() => foreign.client.listTools(), () => foreign.client.callTool({ name: "echo", arguments: { text: "x" } })]) {
      const e = await mcpError(call());
      expect(e.code).toBe(-32603);
      expect(e.message).toContain(orchestrator.address);
      expect(e.message).toMatch(/TLS verification of the server failed/);
    }
  });

  it("the orchestrator keeps serving clients of its own CA", async () => {
    expect(textOf(await bridge.client.callTool({ name: "echo", arguments: { text: "ok" } }))).toBe("ok");
  });
});
