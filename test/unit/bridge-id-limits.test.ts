/**
 * Request ids the bridge cannot keep exactly are refused with a reason: an integer id beyond a
 * double's range (JSON.parse makes it Infinity) names the limit, and a `notifications/cancelled`
 * whose `requestId` token JSON.parse rounds to an integer (`9007199254740993.5`) is dropped with
 * the same log line as one whose `requestId` fails the schema (`1.5`).
 */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { McpHandler } from "../../src/bridge/handler.js";
import { serialize } from "../../src/jsonrpc/serialize.js";
import type { OutboundLine } from "../../src/jsonrpc/message.js";
import { FakeSender } from "../helpers/fake-sender.js";

const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } };

function setup() {
  const out: OutboundLine[] = [];
  const logs: Array<{ msg: string; method?: string }> = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => void logs.push(JSON.parse(line) as { msg: string }) });
  const handler = new McpHandler({
    sender: new FakeSender(() => new Promise(() => {})),
    sink: (m) => out.push(JSON.parse(serialize(m)) as OutboundLine),
    serverInfo: { name: "orchestra-stdio", version: "0.0.0-test" },
    sessionId: "session-1",
    logger,
  });
  handler.handleLine(JSON.stringify(initialize));
  out.length = 0;
  return { out, logs, handler };
}

describe("request ids past what the bridge can keep", () => {
  it("answers an integer id of 100,000 digits with -32600 naming the limit", async () => {
    const { out, handler } = setup();
    handler.handleLine(`{"jsonrpc":"2.0","id":${"9".repeat(100_000)},"method":"ping"}`);
    await handler.idle();
    expect(out).toEqual([expect.objectContaining({ id: null, error: expect.objectContaining({ code: -32600, message: expect.stringContaining("about 309 digits") }) })]);
  });

  it("logs a notifications/cancelled whose requestId is 9007199254740993.5 as dropped, like 1.5", async () => {
    for (const token of ["1.5", "9007199254740993.5"]) {
      const { out, logs, handler } = setup();
      handler.handleLine(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${token}}}`);
      await handler.idle();
      expect(out).toEqual([]);
      expect(
        logs.filter((l) => l.msg === "dropping a notification with invalid params" && l.method === "notifications/cancelled"),
        token,
      ).toHaveLength(1);
    }
  });
});
