/** The debug records of `notifications/cancelled` (docs/cli.md "Logs": a notification without effect is logged at debug). */
import { describe, expect, it } from "vitest";
import type { Logger } from "../../src/log.js";
import { FakeSender, harness } from "../helpers/bridge-fakes.js";

/** A Logger that keeps its debug records. */
function recordingLogger(): { logger: Logger; debug: Array<{ obj: Record<string, unknown>; msg: string }> } {
  const debug: Array<{ obj: Record<string, unknown>; msg: string }> = [];
  const none = () => {};
  const logger = {
    trace: none,
    info: none,
    warn: none,
    error: none,
    fatal: none,
    debug: (obj: Record<string, unknown>, msg: string) => debug.push({ obj, msg }),
  } as unknown as Logger;
  return { logger, debug };
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
});
