/**
 * A session's start and its tool calls are validated by each revision's small
 * `validators-start.cjs` alone (START_DEFINITIONS in codegen/generate.mjs): `initialize` (or
 * `server/discover`), `notifications/initialized`, `ping`, `tools/list`, `tools/call` and
 * `notifications/cancelled` never load the whole `validators.cjs`; another method does. A
 * definition these messages use but missing from the list makes this test fail.
 */
import { describe, expect, it, vi } from "vitest";
import { GENERATED_TABLES, GENERATED_VERSIONS } from "../../src/gen/mcp/catalog.js";
import * as catalog from "../../src/gen/mcp/catalog.js";
import { FakeSender, harness, modernMeta, scripted } from "../helpers/bridge-fakes.js";

vi.mock("../../src/gen/mcp/catalog.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/gen/mcp/catalog.js")>();
  return { ...original, loadGeneratedValidatorsSync: vi.fn(original.loadGeneratedValidatorsSync) };
});

const wholeModule = vi.mocked(catalog.loadGeneratedValidatorsSync);

describe("validators of the start and of tool calls", () => {
  it.each(GENERATED_VERSIONS)(
    "%s: initialize (or server/discover), initialized, ping, tools/list, tools/call and a cancellation use validators-start.cjs only",
    async (version) => {
      const { send, out, handler } = harness(new FakeSender(scripted));
      const c2s = GENERATED_TABLES[version]!.methods.c2s;
      const stateless = !("initialize" in c2s);
      const params = (p: Record<string, unknown> = {}) => (stateless ? { ...p, _meta: modernMeta({}, version) } : p);
      const messages = [
        stateless
          ? { jsonrpc: "2.0", id: 1, method: "server/discover", params: params() }
          : { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "t", version: "1" } } },
        ...(stateless ? [] : [{ jsonrpc: "2.0", method: "notifications/initialized" }]),
        ...("ping" in c2s ? [{ jsonrpc: "2.0", id: 2, method: "ping", params: params() }] : []),
        { jsonrpc: "2.0", id: 3, method: "tools/list", params: params() },
        { jsonrpc: "2.0", id: 4, method: "tools/call", params: params({ name: "echo", arguments: { text: "hi" } }) },
        { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 99, reason: "gone" } },
      ];
      wholeModule.mockClear();
      for (const message of messages) await send(message);
      const answers = out.filter((m) => !Array.isArray(m) && "id" in m) as Array<{ id: unknown; result?: unknown }>;
      expect(answers.map((a) => a.id)).toEqual(messages.flatMap((m) => ("id" in m ? [m.id] : [])));
      for (const a of answers) expect(a, JSON.stringify(a)).toHaveProperty("result");
      expect(wholeModule).not.toHaveBeenCalled();
      // Any other definition loads the whole module (here prompts/list, in every revision).
      await send({ jsonrpc: "2.0", id: 5, method: "prompts/list", params: params() });
      expect(wholeModule).toHaveBeenCalledWith(version);
      handler.close();
    },
  );
});
