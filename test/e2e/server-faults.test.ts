/**
 * Robustness (issue 5): tool handlers that misbehave on the orchestrator side, loaded with
 * `orchestrator --tools test/fixtures/tools/faulty-tools.mjs`, seen through the bridge by the
 * MCP SDK client, for both transports. After each fault the connection must stay usable.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBuiltCli, tempDir } from "../helpers/cli.js";
import { connectBridge, FAULTY_TOOLS, mcpError, spawnOrchestrator, textOf, type Bridge, type OrchestratorProcess, type TransportKind } from "../helpers/transport.js";

beforeAll(() => requireBuiltCli());

const CALL_TIMEOUT_MS = 2_000;

interface Setup {
  certs: Awaited<ReturnType<typeof tempDir>>;
  orchestrator?: OrchestratorProcess;
  bridge?: Bridge;
}
const setups = new Map<TransportKind, Setup>();

// Both transports' processes start together (process start-up dominates this file's runtime).
beforeAll(async () => {
  await Promise.all(
    (["tls", "quic"] as const).map(async (transport) => {
      const setup: Setup = { certs: await tempDir() };
      setups.set(transport, setup);
      setup.orchestrator = await spawnOrchestrator({ transport, certsDir: setup.certs.path, args: ["--tools", FAULTY_TOOLS] });
      setup.bridge = await connectBridge([
        "--transport",
        transport,
        "--orchestrator-addr",
        setup.orchestrator.address,
        "--certs-dir",
        setup.certs.path,
        "--call-timeout",
        String(CALL_TIMEOUT_MS),
      ]);
    }),
  );
});
afterAll(async () => {
  await Promise.all(
    [...setups.values()].map(async ({ certs, orchestrator, bridge }) => {
      await bridge?.close();
      await orchestrator?.stop();
      await certs.remove();
    }),
  );
});

describe.each<TransportKind>(["tls", "quic"])("faulty tool handlers (%s)", (transport) => {
  let orchestrator: OrchestratorProcess;
  let bridge: Bridge;
  beforeAll(() => {
    const setup = setups.get(transport)!;
    orchestrator = setup.orchestrator!;
    bridge = setup.bridge!;
  });

  async function echoWorks(text: string): Promise<void> {
    const r = await bridge.client.callTool({ name: "echo", arguments: { text } });
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toBe(text);
  }

  it("a handler that throws becomes an isError result carrying its message", async () => {
    const r = await bridge.client.callTool({ name: "throws", arguments: {} });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/deliberate failure from the throws tool/);
    await echoWorks("after throws");
  });

  it(`a handler that never returns hits the bridge's --call-timeout: JSON-RPC -32603`, async () => {
    const e = await mcpError(bridge.client.callTool({ name: "hangs", arguments: {} }, undefined, { timeout: 60_000 }));
    expect(e.code).toBe(-32603);
    expect(e.message).toContain(orchestrator.address);
    expect(e.message).toMatch(new RegExp(`no response within ${CALL_TIMEOUT_MS} ms`));
    expect(e.data).toMatchObject({ kind: "timeout" });
    await echoWorks("after hangs");
  });

  it("a result of 16 MiB + 1 byte is refused with a clear error and the connection stays usable", async () => {
    const r = await bridge.client.callTool({ name: "huge", arguments: {} }, undefined, { timeout: 60_000 });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/exceeds the 16777216-byte frame limit/);
    await echoWorks("after huge");
  });
});
