/**
 * Valid/invalid tables per session rule (`src/validate/rules/<id>.ts`), in the style of ESLint's
 * rule tests: for each rule, captures it must not report and captures it must report at the given
 * lines. Every session rule module has a table here (checked below), so a new rule comes with one.
 * Also: the findings of one message come in the order `rules/index.ts` gives.
 *
 * Built-in validators (no ../shared needed); captures go through `validateFiles` on stdin.
 */
import { describe, expect, it } from "vitest";
import { EVENT_ORDER, SESSION_RULES } from "../../src/validate/rules/index.js";
import type { RuleContext, RuleEvent, Subject } from "../../src/validate/rules/rule.js";
import type { ValidateOptions } from "../../src/validate/index.js";
import { captureText, err, handshake, init, initialized, initResult, ok, req, validateText, type Rec } from "../helpers/validate-records.js";

interface Case {
  name: string;
  records: Array<Rec | { raw: string }>;
  options?: ValidateOptions;
  /** Invalid cases: the lines the rule reports, in order. */
  lines?: number[];
}

const note = (dir: "c2s" | "s2c", method: string, params?: object): Rec => req(dir, undefined, method, params);
const call = (id: number | string, params: object = { name: "echo", arguments: {} }): Rec => req("c2s", id, "tools/call", params);
const text = (dir: "c2s" | "s2c", id: number | string | null): Rec => ok(dir, id, { content: [{ type: "text", text: "x" }] });
const H = handshake();

const TABLES: Record<string, { valid: Case[]; invalid: Case[] }> = {
  "json/parse-error": {
    valid: [{ name: "JSON lines", records: [...H] }],
    invalid: [{ name: "a raw line that is not JSON", records: [...H, { raw: '{"jsonrpc": "2.0", oops' }], lines: [4] }],
  },
  "jsonrpc/invalid": {
    valid: [{ name: "requests, notifications, responses", records: [...H, call(1), text("s2c", 1)] }],
    invalid: [
      {
        name: "not an object, a bad method, both result and error, neither, jsonrpc 1.0, an empty batch",
        records: [
          ...H,
          ["c2s", 5],
          ["c2s", { jsonrpc: "2.0", id: 9, method: 3 }],
          ["s2c", { jsonrpc: "2.0", id: 1, result: {}, error: { code: 1, message: "m" } }],
          ["c2s", { jsonrpc: "2.0", id: 8 }],
          ["c2s", { jsonrpc: "1.0", id: 7, method: "ping" }],
          ["c2s", []],
        ],
        lines: [4, 5, 6, 7, 8, 9],
      },
    ],
  },
  "jsonrpc/null-id-error": {
    valid: [{ name: "an error with an id", records: [...H, call(1), err("s2c", 1)] }],
    invalid: [{ name: "an error answering an unparseable line with id null", records: [...H, { raw: "{oops" }, err("s2c", null, -32700, "Parse error")], lines: [5] }],
  },
  "jsonrpc/kind-mismatch": {
    valid: [{ name: "a notification without an id", records: [...H, note("c2s", "notifications/cancelled", { requestId: 5 })] }],
    invalid: [
      {
        name: "a notification method with an id, a request method without one",
        records: [...H, req("c2s", 4, "notifications/cancelled", { requestId: 5 }), req("c2s", undefined, "tools/list")],
        lines: [4, 5],
      },
    ],
  },
  "schema/envelope": {
    valid: [{ name: "well-formed envelopes", records: [...H, call(1), text("s2c", 1)] }],
    invalid: [{ name: "a request with an id of the wrong type", records: [...H, req("c2s", true as never, "ping")], lines: [4] }],
  },
  "schema/request": {
    valid: [{ name: "a tools/call with a name", records: [...H, call(1), text("s2c", 1)] }],
    invalid: [{ name: "a tools/call without a name", records: [...H, call(1, {}), text("s2c", 1)], lines: [4] }],
  },
  "schema/notification": {
    valid: [
      {
        name: "a progress notification with its token",
        records: [...H, call(1, { name: "e", _meta: { progressToken: "t" } }), note("s2c", "notifications/progress", { progressToken: "t", progress: 1 }), text("s2c", 1)],
      },
    ],
    invalid: [
      {
        name: "a progress notification without progress",
        records: [...H, call(1, { name: "e", _meta: { progressToken: "t" } }), note("s2c", "notifications/progress", { progressToken: "t" }), text("s2c", 1)],
        lines: [5],
      },
    ],
  },
  "schema/result": {
    valid: [{ name: "a CallToolResult", records: [...H, call(1), text("s2c", 1)] }],
    invalid: [{ name: "a tools/list result without tools", records: [...H, req("c2s", 1, "tools/list"), ok("s2c", 1, { tools: 5 })], lines: [5] }],
  },
  "schema/error-response": {
    valid: [{ name: "an error with an integer code", records: [...H, call(1), err("s2c", 1)] }],
    invalid: [{ name: "an error with a string code", records: [...H, call(1), ["s2c", { jsonrpc: "2.0", id: 1, error: { code: "E1", message: "m" } }]], lines: [5] }],
  },
  "schema/unknown-method": {
    valid: [{ name: "methods of the schema", records: [...H, call(1), text("s2c", 1)] }],
    invalid: [{ name: "a custom method", records: [...H, req("c2s", 1, "custom/thing"), ok("s2c", 1)], lines: [4] }],
  },
  "session/wrong-direction": {
    valid: [{ name: "sampling/createMessage from the server", records: [init(), initResult(), initialized, req("s2c", 1, "ping"), ok("c2s", 1)] }],
    invalid: [{ name: "tools/list sent by the server", records: [...H, req("s2c", 1, "tools/list"), ok("c2s", 1, { tools: [] })], lines: [4] }],
  },
  "session/initialize-first": {
    valid: [
      { name: "initialize first", records: [...H] },
      { name: "an excerpt with --partial", records: [call(1), text("s2c", 1)], options: { partial: true } },
    ],
    invalid: [
      {
        name: "a client and a server request before initialize (once per side)",
        records: [req("c2s", 1, "ping"), req("s2c", 7, "ping"), req("c2s", 2, "ping"), ...H],
        lines: [1, 2],
      },
    ],
  },
  "session/premature-request": {
    valid: [{ name: "ping before the initialize result", records: [init(), req("c2s", 1, "ping"), ok("s2c", 1), initResult(), initialized] }],
    invalid: [
      {
        name: "tools/list before the initialize result, a server request before initialized",
        records: [init(), req("c2s", 1, "tools/list"), initResult(), ok("s2c", 1, { tools: [] }), req("s2c", 2, "roots/list"), ok("c2s", 2, { roots: [] }), initialized],
        lines: [2, 5],
      },
    ],
  },
  "session/initialized-after-result": {
    valid: [{ name: "initialized after the result", records: [...H, req("c2s", 1, "tools/list"), ok("s2c", 1, { tools: [] })] }],
    invalid: [
      { name: "initialized before the result", records: [init(), initialized, initResult()], lines: [2] },
      {
        name: "a request after the result without initialized (reported once)",
        records: [init(), initResult(), req("c2s", 1, "tools/list"), ok("s2c", 1, { tools: [] }), req("c2s", 2, "tools/list"), ok("s2c", 2, { tools: [] })],
        lines: [3],
      },
    ],
  },
  "session/reinitialize": {
    valid: [{ name: "a retry after an initialize error", records: [init(), err("s2c", 0), init(), initResult(), initialized] }],
    invalid: [{ name: "a second initialize", records: [...H, init("2025-06-18", 5), initResult("2025-06-18", 5), initialized], lines: [4] }],
  },
  "session/batch-not-allowed": {
    valid: [{ name: "a batch in 2024-11-05", records: [...handshake("2024-11-05"), ["c2s", [{ jsonrpc: "2.0", id: 1, method: "ping" }]], ok("s2c", 1)] }],
    invalid: [
      { name: "a batch in 2025-06-18", records: [...H, ["c2s", [{ jsonrpc: "2.0", id: 1, method: "ping" }]], ok("s2c", 1)], lines: [4] },
      { name: "initialize inside a batch", records: [["c2s", [init()[1]]], initResult(), initialized], lines: [1] },
    ],
  },
  "session/duplicate-request-id": {
    valid: [{ name: "an id reused after its answer is reused-request-id, not this", records: [...H, req("c2s", 1, "ping"), ok("s2c", 1), req("c2s", 1, "ping"), ok("s2c", 1)] }],
    invalid: [{ name: "an id reused while in flight", records: [...H, req("c2s", 1, "ping"), req("c2s", 1, "ping"), ok("s2c", 1), ok("s2c", 1)], lines: [5] }],
  },
  "session/reused-request-id": {
    valid: [{ name: "fresh ids; the same id from the other side", records: [...H, req("c2s", 1, "ping"), ok("s2c", 1), req("s2c", 1, "ping"), ok("c2s", 1)] }],
    invalid: [{ name: "an id used again after its answer", records: [...H, req("c2s", 1, "ping"), ok("s2c", 1), req("c2s", 1, "ping"), ok("s2c", 1)], lines: [6] }],
  },
  "session/unmatched-response": {
    valid: [{ name: "each response answers its request", records: [...H, req("c2s", 1, "ping"), ok("s2c", 1)] }],
    invalid: [{ name: "a response to no request, one answered twice", records: [...H, ok("s2c", 42), req("c2s", 1, "ping"), ok("s2c", 1), ok("s2c", 1)], lines: [4, 7] }],
  },
  "session/response-to-notification": {
    valid: [{ name: "a null-id error answering an unparseable line", records: [...H, { raw: "{oops" }, err("s2c", null, -32700, "Parse error")] }],
    invalid: [{ name: "a result with id null", records: [...H, ok("s2c", null)], lines: [4] }],
  },
  "session/unanswered-request": {
    valid: [
      { name: "every request answered", records: [...H, req("c2s", 1, "ping"), ok("s2c", 1)] },
      { name: "a cancelled request", records: [...H, req("c2s", 1, "ping"), note("c2s", "notifications/cancelled", { requestId: 1 })] },
    ],
    invalid: [{ name: "a request never answered", records: [...H, req("c2s", 1, "tools/list")], lines: [4] }],
  },
  "session/missing-capability": {
    valid: [{ name: "tools/list with the tools capability", records: [...H, req("c2s", 1, "tools/list"), ok("s2c", 1, { tools: [] })] }],
    invalid: [{ name: "resources/list without the resources capability", records: [...H, req("c2s", 1, "resources/list"), ok("s2c", 1, { resources: [] })], lines: [4] }],
  },
  "session/unadvertised-notification": {
    valid: [
      {
        name: "tools/list_changed with tools.listChanged",
        records: [init(), initResult("2025-06-18", 0, { tools: { listChanged: true } }), initialized, note("s2c", "notifications/tools/list_changed")],
      },
    ],
    invalid: [{ name: "tools/list_changed without it", records: [...H, note("s2c", "notifications/tools/list_changed")], lines: [4] }],
  },
  "session/answered-after-cancel": {
    valid: [{ name: "a response before the cancellation", records: [...H, call(1), text("s2c", 1), note("c2s", "notifications/cancelled", { requestId: 1 })] }],
    invalid: [{ name: "a response after it", records: [...H, call(1), note("c2s", "notifications/cancelled", { requestId: 1 }), text("s2c", 1)], lines: [6] }],
  },
  "session/cancel-initialize": {
    valid: [{ name: "cancelling another request", records: [...H, call(1), note("c2s", "notifications/cancelled", { requestId: 1 })] }],
    invalid: [{ name: "cancelling initialize", records: [init(), note("c2s", "notifications/cancelled", { requestId: 0 }), initResult(), initialized], lines: [2] }],
  },
  "session/unknown-progress-token": {
    valid: [
      {
        name: "a token of a request in flight",
        records: [...H, call(1, { name: "e", _meta: { progressToken: "t" } }), note("s2c", "notifications/progress", { progressToken: "t", progress: 1 }), text("s2c", 1)],
      },
    ],
    invalid: [{ name: "a token no request announced", records: [...H, note("s2c", "notifications/progress", { progressToken: "t", progress: 1 })], lines: [4] }],
  },
  "session/progress-not-increasing": {
    valid: [
      {
        name: "increasing progress",
        records: [
          ...H,
          call(1, { name: "e", _meta: { progressToken: "t" } }),
          note("s2c", "notifications/progress", { progressToken: "t", progress: 1 }),
          note("s2c", "notifications/progress", { progressToken: "t", progress: 2 }),
          text("s2c", 1),
        ],
      },
    ],
    invalid: [
      {
        name: "the same value twice",
        records: [
          ...H,
          call(1, { name: "e", _meta: { progressToken: "t" } }),
          note("s2c", "notifications/progress", { progressToken: "t", progress: 1 }),
          note("s2c", "notifications/progress", { progressToken: "t", progress: 1 }),
          text("s2c", 1),
        ],
        lines: [6],
      },
    ],
  },
  "session/version-mismatch": {
    valid: [{ name: "the forced version negotiated", records: [...H], options: { protocolVersion: "2025-06-18" } }],
    invalid: [{ name: "another version negotiated", records: [...handshake("2025-03-26")], options: { protocolVersion: "2025-06-18" }, lines: [2] }],
  },
  "session/unsupported-version": {
    valid: [{ name: "a known version", records: [...H] }],
    invalid: [{ name: "a version without validators", records: [init("1999-01-01"), initResult("1999-01-01"), initialized], lines: [2] }],
  },
};

/** The capture text of a case (`{ raw }` records as capture `raw` lines). */
function textOf(records: Case["records"]): string {
  return records.map((r) => (Array.isArray(r) ? captureText([r]) : `${JSON.stringify({ ts: "2025-06-18T10:00:00.000Z", dir: "c2s", raw: r.raw })}\n`)).join("");
}

describe("every session rule module has a valid/invalid table", () => {
  it("a table with valid and invalid cases per rule of rules/index.ts", () => {
    const ids: readonly string[] = SESSION_RULES.map((r) => r.meta.id);
    expect(ids.filter((id) => !(id in TABLES)).map((id) => `no valid/invalid table for \`${id}\``)).toEqual([]);
    expect(
      Object.keys(TABLES)
        .filter((id) => !ids.includes(id))
        .map((id) => `a table for \`${id}\`, which is no rule of rules/index.ts`),
    ).toEqual([]);
    for (const [id, t] of Object.entries(TABLES)) {
      expect(t.valid.length, id).toBeGreaterThan(0);
      expect(t.invalid.length, id).toBeGreaterThan(0);
    }
  });
});

describe("EVENT_ORDER lists each rule for exactly the events it has handlers for", () => {
  it("per rule, the events of its handlers (create() with a stub context) are those EVENT_ORDER lists it under", () => {
    const context = { meta: undefined, session: undefined, report: () => {}, check: () => undefined } as unknown as RuleContext;
    const mismatches: string[] = [];
    for (const rule of SESSION_RULES) {
      const id = rule.meta.id;
      const handlers = rule.create({ ...context, meta: rule.meta }) as Record<string, unknown>;
      for (const event of Object.keys(EVENT_ORDER) as RuleEvent[]) {
        const listed = (EVENT_ORDER[event] as readonly string[]).includes(id);
        const handled = typeof handlers[event] === "function";
        if (handled && !listed) mismatches.push(`\`${id}\` has a ${event} handler that EVENT_ORDER.${event} does not list`);
        if (listed && !handled) mismatches.push(`EVENT_ORDER.${event} lists \`${id}\`, which has no ${event} handler`);
      }
      for (const key of Object.keys(handlers)) if (!(key in EVENT_ORDER)) mismatches.push(`\`${id}\` has a handler for ${key}, which is no event of EVENT_ORDER`);
    }
    expect(mismatches).toEqual([]);
  });
});

describe("the checker calls a handler only for the messages its rule's filter (`only`) names", () => {
  it("a method filter, a method-standing filter and a pairing filter: called for those messages and no others", async () => {
    const calls: string[] = [];
    /** Records each call of `id`'s `event` handler (the method, or the response's pairing) before it runs. */
    const spy = (id: string, event: "request" | "notification" | "response"): (() => void) => {
      const rule = SESSION_RULES.find((r) => r.meta.id === id)! as unknown as { create: (c: RuleContext) => Record<string, (m: Subject) => void> };
      const create = rule.create;
      rule.create = (context) => {
        const handlers = create(context);
        const handler = handlers[event]!;
        return { ...handlers, [event]: (m: Subject) => (calls.push(`${id} ${event === "response" ? context.session.m.pairing : m.facts.method}`), handler(m)) };
      };
      return () => (rule.create = create);
    };
    const restore = [spy("session/cancel-initialize", "notification"), spy("session/wrong-direction", "request"), spy("session/answered-after-cancel", "response")];
    try {
      const { findings } = await validateText(
        captureText([
          ...H, // initialize (a request), its result (paired), notifications/initialized
          call(1),
          req("c2s", 2, "sampling/createMessage", { messages: [], maxTokens: 1 }), // defined s2c only
          note("c2s", "notifications/roots/list_changed"),
          note("c2s", "notifications/cancelled", { requestId: 1 }),
          text("s2c", 1), // paired
          text("s2c", 99), // answers nothing
        ]),
      );
      expect(findings.map((f) => `${f.line} ${f.rule}`)).toContain("5 session/wrong-direction");
    } finally {
      for (const r of restore) r();
    }
    expect(calls).toEqual([
      "session/answered-after-cancel paired",
      "session/wrong-direction sampling/createMessage",
      "session/cancel-initialize notifications/cancelled",
      "session/answered-after-cancel paired",
    ]);
  });
});

for (const rule of SESSION_RULES) {
  const id = rule.meta.id;
  const table = TABLES[id];
  if (table === undefined) {
    it(`${id}: has a valid/invalid table`, () => {
      throw new Error(`no valid/invalid table for \`${id}\` in test/unit/validate-rule-tables.test.ts`);
    });
    continue;
  }
  describe(id, () => {
    it.each(table.valid.map((c) => [c.name, c] as const))("valid: %s", async (_name, c) => {
      const { findings } = await validateText(textOf(c.records), c.options);
      expect(findings.filter((f) => f.rule === id)).toEqual([]);
    });
    it.each(table.invalid.map((c) => [c.name, c] as const))("invalid: %s", async (_name, c) => {
      const { findings } = await validateText(textOf(c.records), c.options);
      const mine = findings.filter((f) => f.rule === id);
      expect(mine.map((f) => f.line)).toEqual(c.lines);
      for (const f of mine) expect(f.severity).toBe(rule.meta.severity);
    });
  });
}

describe("the findings of one message come in the order rules/index.ts gives", () => {
  it("a request before initialize, with a bad id type, of an unknown method: initialize-first, envelope, unknown-method", async () => {
    const { findings } = await validateText(textOf([req("c2s", true as never, "custom/thing"), ...H]));
    expect(findings.filter((f) => f.line === 1).map((f) => f.rule)).toEqual(["session/initialize-first", "schema/envelope", "schema/unknown-method"]);
  });

  it("a client progress notification with a bad jsonrpc before initialize: jsonrpc/invalid, initialize-first, wrong-direction", async () => {
    const { findings } = await validateText(textOf([["c2s", { jsonrpc: "1.0", method: "notifications/progress" }]]));
    expect(findings.filter((f) => f.line === 1).map((f) => f.rule)).toEqual(["jsonrpc/invalid", "session/initialize-first", "session/wrong-direction"]);
  });

  it("a duplicate id with a missing capability: missing-capability before duplicate-request-id", async () => {
    const { findings } = await validateText(
      textOf([...H, req("c2s", 1, "resources/list"), req("c2s", 1, "resources/list"), ok("s2c", 1, { resources: [] }), ok("s2c", 1, { resources: [] })]),
    );
    expect(findings.filter((f) => f.line === 5).map((f) => f.rule)).toEqual(["session/missing-capability", "session/duplicate-request-id"]);
  });

  it("an answer after a cancel with a bad result: answered-after-cancel before schema/result", async () => {
    const { findings } = await validateText(textOf([...H, req("c2s", 1, "tools/list"), note("c2s", "notifications/cancelled", { requestId: 1 }), ok("s2c", 1, { tools: 5 })]));
    expect(findings.filter((f) => f.line === 6).map((f) => f.rule)).toEqual(["session/answered-after-cancel", "schema/result"]);
  });
});
