/**
 * The messages of a session's start are validated by each revision's small
 * `validators-start.cjs` alone (START_DEFINITIONS in codegen/generate.mjs): answering
 * `initialize` (or `server/discover`), `notifications/initialized` and `ping` never loads the
 * whole `validators.cjs`, which follows on the next turn of the event loop. A definition used at
 * the start but missing from the list makes this test fail.
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

describe("validators of the start", () => {
  it.each(GENERATED_VERSIONS)("%s: initialize (or server/discover), notifications/initialized and ping (where defined) use validators-start.cjs only", async (version) => {
    const { handler, out } = harness(new FakeSender(scripted));
    const c2s = GENERATED_TABLES[version]!.methods.c2s;
    const lines =
      "initialize" in c2s
        ? [
            { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "t", version: "1" } } },
            { jsonrpc: "2.0", method: "notifications/initialized" },
            { jsonrpc: "2.0", id: 2, method: "ping" },
          ]
        : [
            { jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: modernMeta({}, version) } },
            ...("ping" in c2s ? [{ jsonrpc: "2.0", id: 2, method: "ping", params: { _meta: modernMeta({}, version) } }] : []),
          ];
    wholeModule.mockClear();
    for (const line of lines) handler.handleLine(JSON.stringify(line));
    // initialize, server/discover and ping are answered synchronously: before the whole module's turn.
    const answers = out.filter((m) => !Array.isArray(m) && "id" in m);
    expect(answers.map((m) => (m as { id: unknown }).id)).toEqual(lines.flatMap((l) => ("id" in l ? [l.id] : [])));
    for (const a of answers) expect(a).toHaveProperty("result");
    expect(wholeModule).not.toHaveBeenCalled();
    // …and it follows on the next turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    expect(wholeModule).toHaveBeenCalledWith(version);
    handler.close();
  });
});
