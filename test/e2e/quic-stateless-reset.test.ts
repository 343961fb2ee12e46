/**
 * Fast restart (RFC 9000 §10.3 stateless reset): the reference orchestrator derives each
 * connection's stateless reset token from a secret derived from its private key, so a process
 * restarted with the same cert store answers the packets of its predecessor's connections with
 * a stateless reset. quiche's client side detects it (the token is in the server's transport
 * parameters) and ends the connection, so the bridge's calls do not wait for the idle timeout
 * (15 s by default) after a restart within it. When a packet of the old connection goes out
 * while the port is closed, the ICMP port unreachable it draws ends the connection first.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { requireBuiltCli, tempDir } from "../helpers/cli.js";
import { connectBridge, PROBE_TOOLS, spawnOrchestrator, textOf, type Bridge, type OrchestratorProcess } from "../helpers/transport.js";

beforeAll(() => requireBuiltCli());

describe("orchestrator restart within the idle timeout (quic, stateless reset)", () => {
  let certs: Awaited<ReturnType<typeof tempDir>>;
  let first: OrchestratorProcess;
  let second: OrchestratorProcess | undefined;
  let bridge: Bridge;

  beforeAll(async () => {
    certs = await tempDir();
    first = await spawnOrchestrator({ transport: "quic", certsDir: certs.path, args: ["--tools", PROBE_TOOLS] });
    // Default idle timeout (15 s): without the reset every call below would wait for it.
    bridge = await connectBridge(["--orchestrator-addr", first.address, "--certs-dir", certs.path, "--call-timeout", "120000"]);
  });
  afterAll(async () => {
    await bridge?.close();
    await first?.kill("SIGKILL");
    await second?.stop();
    await certs?.remove();
  });

  it("pending plain and progress calls fail soon after the restart, long before the idle timeout", async () => {
    expect(textOf(await bridge.client.callTool({ name: "block", arguments: { ms: 1 } }))).toContain("waited");
    expect(textOf(await bridge.client.callTool({ name: "block", arguments: { ms: 1 } }, undefined, { onprogress: () => {} }))).toContain("waited");
    const plain = bridge.client.callTool({ name: "block", arguments: {} }, undefined, { timeout: 60_000 });
    const progress = bridge.client.callTool({ name: "block", arguments: {} }, undefined, { timeout: 60_000, onprogress: () => {} });
    const outcomes = Promise.allSettled([plain, progress]);
    await new Promise((r) => setTimeout(r, 300));
    await first.kill("SIGKILL");
    second = await spawnOrchestrator({ transport: "quic", certsDir: certs.path, listen: first.address, args: ["--tools", PROBE_TOOLS] });
    const restartedAt = Date.now();
    const settled = await outcomes;
    // The next packet on the old connections (a keep-alive PING within 5 s) draws the reset.
    expect(Date.now() - restartedAt).toBeLessThan(7_000);
    for (const s of settled) {
      expect(s.status).toBe("rejected");
      const e = (s as PromiseRejectedResult).reason as McpError;
      expect(e).toBeInstanceOf(McpError);
      expect(e.code).toBe(-32603);
      // A keep-alive sent while the port is closed (the restart takes about a second) draws an
      // ICMP port unreachable, which ends the connection as fast (quic-port-unreachable.test.ts).
      expect(e.message).toMatch(/stateless reset|peer unreachable: ICMP port unreachable/);
    }
  });

  it("the next plain and progress calls succeed at once on new connections", async () => {
    const started = Date.now();
    expect(textOf(await bridge.client.callTool({ name: "block", arguments: { ms: 1 } }, undefined, { timeout: 30_000 }))).toContain("waited");
    expect(textOf(await bridge.client.callTool({ name: "block", arguments: { ms: 1 } }, undefined, { timeout: 30_000, onprogress: () => {} }))).toContain("waited");
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
