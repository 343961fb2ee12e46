/**
 * Issue #13 items 1 and 2 at the unit level: exact request ids (scanner, keys, serializer), the
 * stdin BOM, U+2028/U+2029 on output, id and params shapes, the nesting depth limit; and the
 * stdio bridge's backpressure (item 3) on in-memory streams.
 */
import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { StdioBridge } from "../../src/bridge/stdio-bridge.js";
import { stdioLineSplitter, type LineEvent } from "../../src/framing/line-splitter.js";
import { exceedsDepth, MAX_NESTING_DEPTH, scanLine } from "../../src/jsonrpc/line-scan.js";
import { ExactId, exactInteger } from "../../src/jsonrpc/request-id.js";
import { serialize } from "../../src/jsonrpc/serialize.js";
import type { PluginRequest } from "../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { answer, FakeSender, FakeStreamingSender, scripted } from "../helpers/bridge-fakes.js";
import type { Reply } from "../helpers/fake-sender.js";

const INIT = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}';
const deep = (depth: number, inner = "1") => "[".repeat(depth) + inner + "]".repeat(depth);

describe("exact integers and ids", () => {
  it("gives the exact decimal value of integer tokens and rejects non-integers", () => {
    expect(exactInteger("9007199254740993")).toBe("9007199254740993");
    expect(exactInteger("1e2")).toBe("100");
    // Plain integer tokens are their own canonical decimal; the others go through the general path.
    expect(["0", "7", "-7", "12345", "-0", "007", "-00", "10e0"].map(exactInteger)).toEqual(["0", "7", "-7", "12345", "0", "7", "0", "10"]);
    expect(exactInteger("1.50e1")).toBe("15");
    expect(exactInteger("100.00")).toBe("100");
    expect(exactInteger("-0")).toBe("0");
    expect(exactInteger("-12E+1")).toBe("-120");
    expect(exactInteger("1.5")).toBeUndefined();
    expect(exactInteger("9007199254740993.5")).toBeUndefined();
    expect(exactInteger("true")).toBeUndefined();
  });

  it("keys ids by exact value: ids equal as doubles but not as integers differ", () => {
    const a = ExactId.parse("9007199254740993")!;
    const b = ExactId.parse("9007199254740992")!;
    expect(a.value).toBe(b.value);
    expect(a.key).not.toBe(b.key);
    expect(ExactId.parse("1e2")!.key).toBe(ExactId.parse("100")!.key);
    expect(ExactId.parse('"1"')!.key).not.toBe(ExactId.parse("1")!.key);
    expect(ExactId.parse("1.5")).toBeUndefined();
    expect(ExactId.parse("true")).toBeUndefined();
    expect(ExactId.parse("null")).toBeUndefined();
  });
});

describe("scanLine", () => {
  it("records id, params.requestId and params._meta.progressToken token texts", () => {
    const line = '{"jsonrpc":"2.0","params":{"x":"a\\"id\\":7","_meta":{"progressToken":1e2},"requestId":-0},"id":9007199254740993,"method":"m"}';
    expect(scanLine(line)).toEqual({ tooDeep: false, messages: [{ id: "9007199254740993", requestId: "-0", progressToken: "1e2" }] });
  });

  it("gives each line the same answer whatever lines were scanned before it (the scans share one array)", () => {
    const object = '{"id":3,"params":{"_meta":{"progressToken":"t"}}}';
    const batch = '[{"id":1}, {"id":2}]';
    const alone = [scanLine(object), scanLine(batch)];
    scanLine(`${"[".repeat(200)}${"]".repeat(200)}`); // deep arrays first
    scanLine(`[${'{"a":'.repeat(100)}1${"}".repeat(100)}]`); // deep objects in an array
    expect([scanLine(object), scanLine(batch)]).toEqual(alone);
    expect(alone[1]!.messages).toEqual([{ id: "1" }, { id: "2" }]);
    expect(scanLine("[".repeat(300), 300).tooDeep).toBe(false); // a larger depth than the default
    expect(scanLine(object)).toEqual(alone[0]);
  });

  it("records the ids of batch elements by index and ignores nested id members", () => {
    const line = '[{"id":"a","params":{"id":5}}, 7, {"method":"n"}, {"x":{"id":1},"id":1E0}]';
    const { messages } = scanLine(line);
    expect(messages[0]).toEqual({ id: '"a"' });
    expect(messages[1]).toBeUndefined();
    expect(messages[2]).toBeUndefined();
    expect(messages[3]).toEqual({ id: "1E0" });
  });

  it("decodes escaped keys", () => {
    expect(scanLine('{"\\u0069d":12}').messages[0]).toEqual({ id: "12" });
  });

  it(`stops at depth ${MAX_NESTING_DEPTH + 1} without recursion, 100,000 deep too`, () => {
    expect(scanLine(deep(MAX_NESTING_DEPTH)).tooDeep).toBe(false);
    expect(scanLine(deep(MAX_NESTING_DEPTH + 1)).tooDeep).toBe(true);
    expect(scanLine(`{"id":3,"a":${deep(100_000)}}`)).toEqual({ tooDeep: true, messages: [{ id: "3" }] });
  });

  it("never throws on text that is not JSON", () => {
    for (const text of ['"', '{"id', "}}}]]", '{"id":', "[[[,,,", '{"a":"\\', "\u0000\uffff"]) expect(() => scanLine(text)).not.toThrow();
  });

  it("exceedsDepth walks parsed values with a stack", () => {
    expect(exceedsDepth(JSON.parse(deep(256)))).toBe(false);
    expect(exceedsDepth(JSON.parse(deep(257)))).toBe(true);
    expect(exceedsDepth(JSON.parse(deep(50_000)))).toBe(true);
  });
});

describe("serialize", () => {
  it("splices exact id tokens wherever they occur and escapes U+2028/U+2029", () => {
    const id = ExactId.parse("9007199254740993")!;
    const text = serialize({ jsonrpc: "2.0", id, result: { s: "a\u2028b\u2029c", meta: { id }, n: [ExactId.parse("1e2")] } });
    expect(text).toBe('{"jsonrpc":"2.0","id":9007199254740993,"result":{"s":"a\\u2028b\\u2029c","meta":{"id":9007199254740993},"n":[1e2]}}');
    expect(JSON.stringify({ id })).toBe('{"id":9007199254740992}'); // outside serialize (logs): the value
  });
});

describe("LineSplitter BOM", () => {
  const split = (chunks: Buffer[], skipBom = true): string[] => {
    const lines: string[] = [];
    const s = stdioLineSplitter((e: LineEvent) => e.kind === "line" && lines.push(e.line.toString("utf8")), 1024, skipBom);
    for (const c of chunks) s.push(c);
    s.end();
    return lines;
  };
  const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

  it("skips a BOM at the very start of the stream only, even cut across chunks", () => {
    expect(split([Buffer.concat([BOM, Buffer.from("a\n"), BOM, Buffer.from("b\n")])])).toEqual(["a", "\ufeffb"]);
    expect(split([BOM.subarray(0, 1), BOM.subarray(1, 2), Buffer.concat([BOM.subarray(2), Buffer.from("a\n")])])).toEqual(["a"]);
    expect(split([Buffer.from("x"), BOM, Buffer.from("\n")])).toEqual(["x\ufeff"]);
    expect(split([Buffer.concat([BOM, Buffer.from("a\n")])], false)).toEqual(["\ufeffa"]);
  });

  it("keeps bytes that only looked like the start of a BOM", () => {
    expect(split([Buffer.from([0xef]), Buffer.from("z\n")])).toEqual(["\ufffdz"]);
    expect(split([Buffer.from([0xef, 0xbb])])).toEqual(["\ufffd"]);
  });
});

/** Runs a StdioBridge on `lines` (raw text, each followed by \n) and returns the raw output lines. */
async function bridgeLines(lines: string[], reply: Reply | FakeSender = scripted, prefix = ""): Promise<string[]> {
  const input = new PassThrough();
  const output = new PassThrough();
  const chunks: Buffer[] = [];
  output.on("data", (c: Buffer) => chunks.push(c));
  const sender = reply instanceof FakeSender ? reply : new FakeSender(reply);
  const bridge = new StdioBridge({ input, output, sender, serverInfo: { name: "t", version: "1" }, shutdownGraceMs: 10_000 });
  const done = bridge.run();
  input.end(prefix + lines.map((l) => l + "\n").join(""));
  await done;
  const text = Buffer.concat(chunks).toString("utf8");
  expect(text.endsWith("\n")).toBe(true);
  return text.slice(0, -1).split("\n");
}

/** A reply that holds tool calls until `release()`; each call is recorded. */
function gated(): { reply: Reply; calls: PluginRequest[]; release: () => void } {
  const calls: PluginRequest[] = [];
  let open: () => void = () => {};
  const gate = new Promise<void>((r) => (open = r));
  return {
    calls,
    release: () => open(),
    reply: async (request, options) => {
      if (request.request.case !== "toolCall") return scripted(request, options);
      calls.push(request);
      await gate;
      return scripted(request, options);
    },
  };
}

const call = (id: string, text: string, extra = "") => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"${text}"}${extra}}}`;

describe("StdioBridge: exact ids on the wire", () => {
  it("answers each request with its id token as written", async () => {
    const ids = ["9007199254740993", "1e2", "-0", '"x"', '"\\u0078y"', "12345678901234567890123"];
    const out = await bridgeLines([INIT, ...ids.map((id) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}`)]);
    expect(out.slice(1)).toEqual(ids.map((id) => `{"jsonrpc":"2.0","id":${id},"result":{}}`));
  });

  it("keeps two in-flight requests whose ids differ only beyond 2^53 apart", async () => {
    const g = gated();
    const input = [INIT, call("9007199254740993", "odd"), call("9007199254740992", "even")];
    const pending = bridgeLines(input, g.reply);
    await expect.poll(() => g.calls.length).toBe(2);
    g.release();
    const out = (await pending).slice(1).sort();
    expect(out).toEqual([
      '{"jsonrpc":"2.0","id":9007199254740992,"result":{"content":[{"type":"text","text":"even"}]}}',
      '{"jsonrpc":"2.0","id":9007199254740993,"result":{"content":[{"type":"text","text":"odd"}]}}',
    ]);
  });

  it("cancels by the exact requestId: only the request written with that token", async () => {
    const g = gated();
    const input = new PassThrough();
    const output = new PassThrough();
    const chunks: Buffer[] = [];
    output.on("data", (c: Buffer) => chunks.push(c));
    const bridge = new StdioBridge({ input, output, sender: new FakeSender(g.reply), serverInfo: { name: "t", version: "1" } });
    const done = bridge.run();
    input.write([INIT, '{"jsonrpc":"2.0","method":"notifications/initialized"}', call("9007199254740993", "odd"), call("9007199254740992", "even")].join("\n") + "\n");
    await expect.poll(() => g.calls.length).toBe(2);
    input.end('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740993}}\n');
    await expect.poll(() => bridge.handler.pending).toBe(1);
    g.release();
    await done;
    const out = Buffer.concat(chunks).toString("utf8").trim().split("\n").slice(1);
    expect(out).toEqual(['{"jsonrpc":"2.0","id":9007199254740992,"result":{"content":[{"type":"text","text":"even"}]}}']);
  });

  it("sends progress with the progress token as written", async () => {
    const sender = new FakeStreamingSender(scripted, async (request, emit) => {
      if (request.request.case !== "streamStart") throw new Error(`unexpected ${request.request.case}`);
      const streamId = request.request.value.streamId;
      emit({ case: "streamChunk", value: { streamId, data: new TextEncoder().encode("part") } });
      emit({ case: "streamEnd", value: { streamId, success: true, totalChunks: 1n } });
    });
    const out = await bridgeLines([INIT, call("8", "x", ',"_meta":{"progressToken":9007199254740993}')], sender);
    expect(out[1]).toMatch(/^\{"jsonrpc":"2.0","method":"notifications\/progress","params":\{"progressToken":9007199254740993,/);
    expect(out[2]).toMatch(/^\{"jsonrpc":"2.0","id":8,"result":/);
  });

  it("answers a duplicate of an in-flight exact id with a null id, and not one that differs beyond 2^53", async () => {
    const g = gated();
    const pending = bridgeLines([INIT, call("9007199254740993", "a"), call("9007199254740993", "b"), call("9007199254740992", "c")], g.reply);
    await expect.poll(() => g.calls.length).toBe(2);
    g.release();
    const out = (await pending).slice(1);
    expect(out.filter((l) => l.includes('"id":null')).map((l) => JSON.parse(l).error.message)).toEqual(["Invalid Request: request id 9007199254740993 is already in flight"]);
    expect(out.filter((l) => l.includes('"result"'))).toHaveLength(2);
  });
});

describe("StdioBridge: stdio edge cases", () => {
  it("serves initialize after a BOM at the start of stdin", async () => {
    const out = await bridgeLines([INIT], scripted, "\ufeff");
    expect(JSON.parse(out[0]!)).toMatchObject({ id: 0, result: { protocolVersion: "2025-06-18" } });
  });

  it("escapes U+2028 and U+2029 from results so line readers do not split the line", async () => {
    const out = await bridgeLines([INIT, call("1", "a\u2028b\u2029c")]);
    expect(out).toHaveLength(2);
    expect(out[1]).toBe('{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a\\u2028b\\u2029c"}]}}');
  });

  it("answers positional params with -32602 and its id", async () => {
    const out = await bridgeLines([INIT, '{"jsonrpc":"2.0","id":7,"method":"tools/list","params":[1]}']);
    expect(JSON.parse(out[1]!)).toMatchObject({ id: 7, error: { code: -32602 } });
  });

  it("answers an id MCP does not allow with -32600 and a null id", async () => {
    const bad = ["1.5", "true", "{}", "null", "[1]", "9007199254740993.5"];
    const out = await bridgeLines([INIT, ...bad.map((id) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}`)]);
    for (const l of out.slice(1)) {
      expect(JSON.parse(l)).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request: the id of a request must be a string or an integer" } });
    }
    expect(out).toHaveLength(1 + bad.length);
  });

  it("refuses a line nested deeper than the limit with its id, 5,000 deep too", async () => {
    const out = await bridgeLines([INIT, call("4", "x", `,"extra":${deep(300)}`), `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"a":${deep(5000)}}}`, deep(200_000)]);
    expect(out.slice(1).map((l) => JSON.parse(l))).toEqual(
      [4, 5, null].map((id) => ({
        jsonrpc: "2.0",
        id,
        error: { code: -32600, message: "Invalid Request: nesting depth exceeds the limit of 256", data: { maxDepth: 256 } },
      })),
    );
  });

  it("answers a result from the orchestrator nested deeper than the limit with -32603", async () => {
    const deepResult: Reply = (request, options) => {
      if (request.request.case !== "toolCall") return scripted(request, options);
      return answer(request, { case: "toolCall", value: { success: true, result: { v: JSON.parse(deep(400)) } } });
    };
    const out = await bridgeLines([INIT, call("6", "x")], deepResult);
    expect(JSON.parse(out[1]!)).toMatchObject({ id: 6, error: { code: -32603, message: "Internal error: the result nests deeper than the limit of 256" } });
  });
});

describe("StdioBridge backpressure", () => {
  it("stops reading stdin while stdout is backed up past the budget, then answers everything", async () => {
    const input = new PassThrough();
    const written: Buffer[] = [];
    // A stdout whose reader takes nothing until the callbacks held here are called.
    let held: Array<() => void> = [];
    const slow = new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _enc, cb) {
        written.push(chunk);
        held.push(cb);
      },
    });
    const sender = new FakeSender(scripted);
    const budget = 64 * 1024;
    const bridge = new StdioBridge({ input, output: slow, sender, serverInfo: { name: "t", version: "1" }, queueBudgetBytes: budget });
    const done = bridge.run();
    const text = "y".repeat(8 * 1024);
    const count = 100;
    input.write(INIT + "\n");
    for (let i = 1; i <= count; i++) input.write(call(String(i), text) + "\n");
    input.end();
    // With nothing taken from stdout, the bridge stops once the budget is used up.
    await expect.poll(() => input.isPaused()).toBe(true);
    const toolCalls = () => sender.requests.filter((r) => r.request.case === "toolCall").length;
    await new Promise((r) => setTimeout(r, 200));
    const callsWhilePaused = toolCalls();
    expect(callsWhilePaused).toBeLessThan(count);
    expect(bridge.queuedBytes).toBeLessThan(budget + 2 * (text.length + 200) + 64 * 1024);
    // The reader comes back: everything is answered, once.
    const drain = setInterval(() => {
      const cbs = held;
      held = [];
      for (const cb of cbs) cb();
    }, 1);
    await done;
    clearInterval(drain);
    const lines = Buffer.concat(written)
      .toString("utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: number });
    expect(lines.map((l) => l.id).sort((a, b) => a - b)).toEqual(Array.from({ length: count + 1 }, (_, i) => i));
  });
});
