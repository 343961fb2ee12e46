/**
 * The session core (src/bridge/session.ts) with a registry of fake handlers, no sender: the
 * registry decides what is served (absent: -32601), a handler's JsonRpcError answers with its own
 * code, other failures go through the `failure` hook or become -32603, and cancellation drops the
 * answer.
 */
import { describe, expect, it } from "vitest";
import { ErrorCode, JsonRpcError } from "../../src/jsonrpc/errors.js";
import type { OutboundLine } from "../../src/jsonrpc/message.js";
import { serialize } from "../../src/jsonrpc/serialize.js";
import { childLogger } from "../../src/log.js";
import { MethodRegistry, type RequestScope } from "../../src/bridge/methods/context.js";
import { McpSession, type SessionOptions } from "../../src/bridge/session.js";
import { modernMeta } from "../helpers/bridge-fakes.js";

type Answer = { id: unknown; result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } };

/** A session over `registry`; `answers` are the parsed lines it wrote. */
function sessionOf(registry: MethodRegistry, extra: Partial<SessionOptions> = {}) {
  const lines: OutboundLine[] = [];
  const session = new McpSession({ registry, sink: (m) => lines.push(m), serverInfo: { name: "test", version: "0" }, log: childLogger("test"), ...extra });
  const answers = () => lines.map((l) => JSON.parse(serialize(l)) as Answer);
  const request = (id: number | string, method: string, params: Record<string, unknown> = {}) =>
    session.handleLine(JSON.stringify({ jsonrpc: "2.0", id, method, params: { _meta: modernMeta(), ...params } }));
  return { session, answers, request };
}

describe("session core: the registry decides what is served", () => {
  it("answers -32601 for a method the revision defines but nothing registered, and serves a registered one with its scope", async () => {
    const registry = new MethodRegistry();
    const scopes: RequestScope[] = [];
    registry.register("tools/list", (params, scope) => {
      scopes.push(scope);
      return { tools: [], ...(params.cursor === undefined ? {} : { nextCursor: params.cursor }) };
    });
    const { session, answers, request } = sessionOf(registry);
    request(1, "prompts/list");
    request(2, "tools/list", { cursor: "c1" });
    await session.idle();
    expect(answers()).toEqual([
      { jsonrpc: "2.0", id: 1, error: { code: -32601, message: "Method not found: prompts/list" } },
      { jsonrpc: "2.0", id: 2, result: expect.objectContaining({ tools: [], nextCursor: "c1", resultType: "complete" }) },
    ]);
    expect(scopes.map((s) => [s.id.text, s.method, s.version])).toEqual([["2", "tools/list", "2026-07-28"]]);
  });

  it("refuses to register a method twice", () => {
    const registry = new MethodRegistry();
    registry.register("ping", () => ({}));
    expect(() => registry.register("ping", () => ({}))).toThrow("method ping is registered twice");
  });
});

describe("session core: errors carry their own code", () => {
  class TeapotError extends JsonRpcError {
    constructor() {
      super(-32042, "short and stout", { spout: true });
    }
  }
  const failing = (err: unknown) => {
    const registry = new MethodRegistry();
    registry.register("tools/list", async () => {
      throw err;
    });
    return registry;
  };

  it("answers a thrown JsonRpcError (or subclass) with its code, message and data", async () => {
    const { session, answers, request } = sessionOf(failing(new TeapotError()));
    request(1, "tools/list");
    await session.idle();
    expect(answers()).toEqual([{ jsonrpc: "2.0", id: 1, error: { code: -32042, message: "short and stout", data: { spout: true } } }]);
  });

  it("maps another error through the failure hook, else -32603 naming it", async () => {
    class Foreign extends Error {}
    const failure = (_scope: RequestScope, err: unknown) => (err instanceof Foreign ? new JsonRpcError(ErrorCode.InternalError, "mapped", { foreign: true }) : undefined);
    const mapped = sessionOf(failing(new Foreign("x")), { failure });
    mapped.request(1, "tools/list");
    await mapped.session.idle();
    expect(mapped.answers()).toEqual([{ jsonrpc: "2.0", id: 1, error: { code: -32603, message: "mapped", data: { foreign: true } } }]);
    const plain = sessionOf(failing(new Error("boom")), { failure });
    plain.request(2, "tools/list");
    await plain.session.idle();
    expect(plain.answers()).toEqual([{ jsonrpc: "2.0", id: 2, error: { code: -32603, message: "Internal error: boom" } }]);
  });
});

describe("session core: in flight and cancellation", () => {
  it("aborts a cancelled request's signal and sends no response for it", async () => {
    const registry = new MethodRegistry();
    let aborted = false;
    registry.register(
      "tools/list",
      (_params, scope) =>
        new Promise((resolve) => {
          scope.signal.addEventListener("abort", () => {
            aborted = true;
            resolve({ tools: [] });
          });
        }),
    );
    const { session, answers, request } = sessionOf(registry);
    request("a", "tools/list");
    expect(session.pending).toBe(1);
    session.handleLine(JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "a", reason: "no longer needed" } }));
    await session.idle();
    expect(aborted).toBe(true);
    expect(session.pending).toBe(0);
    expect(answers()).toEqual([]);
  });
});
