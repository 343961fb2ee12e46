/** The log records of the bridge session that carry a request id: `notifications/cancelled` at debug (docs/cli.md "Logs": a notification without effect is logged at debug), a stray response at warn; each logs the id as written. */
import { describe, expect, it } from "vitest";
import type { Logger } from "../../src/log.js";
import { FakeSender, harness, scripted } from "../helpers/bridge-fakes.js";

type LogRecord = { obj: Record<string, unknown>; msg: string };

/** A Logger that keeps its debug and warn records. */
function recordingLogger(): { logger: Logger; debug: LogRecord[]; warn: LogRecord[] } {
  const debug: LogRecord[] = [];
  const warn: LogRecord[] = [];
  const none = () => {};
  const logger = {
    trace: none,
    info: none,
    error: none,
    fatal: none,
    debug: (obj: Record<string, unknown>, msg: string) => debug.push({ obj, msg }),
    warn: (obj: Record<string, unknown>, msg: string) => warn.push({ obj, msg }),
  } as unknown as Logger;
  return { logger, debug, warn };
}

/**
 * A session whose `tools/call` written as `line` is in flight: the sender never answers
 * tool_call, so the call stays in flight until cancelled (the abort rejects it). Its debug
 * records are those from the call on.
 */
async function toolCallInFlight(line: string): Promise<{ debug: LogRecord[]; send: ReturnType<typeof harness>["send"]; handleLine: (line: string) => void }> {
  const { logger, debug } = recordingLogger();
  const sender = new FakeSender((request, options) =>
    request.request.case === "toolCall" ? new Promise((_, reject) => options?.signal?.addEventListener("abort", () => reject(new Error("aborted")))) : scripted(request),
  );
  const { init, send, handler } = harness(sender, { logger });
  await init("2025-06-18");
  await send({ jsonrpc: "2.0", id: "warm", method: "tools/list" });
  debug.length = 0;
  handler.handleLine(line);
  for (let i = 0; i < 100 && !sender.requests.some((r) => r.request.case === "toolCall"); i++) await new Promise((r) => setTimeout(r, 10));
  return { debug, send, handleLine: (l) => handler.handleLine(l) };
}

describe("notifications/cancelled at debug", () => {
  it("a cancellation of an unknown or already answered request is logged with the id as written", async () => {
    const { logger, debug } = recordingLogger();
    const { init, send } = harness(new FakeSender(() => undefined), { logger });
    await init("2025-06-18");
    await send({ jsonrpc: "2.0", id: 7, method: "ping" });
    debug.length = 0;
    await send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 99 } });
    await send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7 } });
    await send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "abc" } });
    expect(debug.map((r) => [r.obj["id"], r.msg])).toEqual([
      [99, expect.stringContaining("not in flight")],
      [7, expect.stringContaining("not in flight")],
      ["abc", expect.stringContaining("not in flight")],
    ]);
  });

  it("a cancellation of a request in flight is logged with the id as written", async () => {
    const { debug, send } = await toolCallInFlight(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "echo", arguments: { text: "x" } } }));
    await send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7 } });
    expect(debug.map((r) => [r.obj["id"], r.msg])).toEqual([[7, "request cancelled by client"]]);
  });

  it("an id beyond 2^53 is logged as its exact text, and a second cancellation of the same request as ignored", async () => {
    const { debug, handleLine } = await toolCallInFlight('{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}');
    const cancel = '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740993}}';
    handleLine(cancel);
    handleLine(cancel);
    await new Promise((r) => setTimeout(r, 10));
    expect(debug.map((r) => [r.obj["id"], r.msg])).toEqual([
      ["9007199254740993", "request cancelled by client"],
      ["9007199254740993", expect.stringContaining("already cancelled")],
    ]);
  });

  it("a response to a request the bridge never sent is a warn record with the id as written", async () => {
    const { logger, warn } = recordingLogger();
    const { init, send } = harness(new FakeSender(scripted), { logger });
    await init("2025-06-18");
    await send({ jsonrpc: "2.0", id: 5, result: {} });
    await send({ jsonrpc: "2.0", id: "s5", result: {} });
    expect(warn.filter((r) => r.msg.includes("never sent")).map((r) => r.obj["id"])).toEqual([5, "s5"]);
  });
});
