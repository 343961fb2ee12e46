/** withSignal (src/bridge/methods/orchestrator.ts): a cancelled wait on shared work never leaves that work's failure unhandled. */
import { describe, expect, it } from "vitest";
import { withSignal } from "../../src/bridge/methods/orchestrator.js";

describe("withSignal", () => {
  it("with the signal already aborted, rejects at once and observes the shared work's later failure", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const controller = new AbortController();
      controller.abort();
      let fail!: (err: Error) => void;
      const work = new Promise<never>((_, reject) => (fail = reject));
      await expect(withSignal(work, controller.signal)).rejects.toMatchObject({ kind: "aborted" });
      fail(new Error("the shared fetch failed"));
      // Unhandled rejections are reported after the microtask queue drains: give it a macrotask.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("aborted while waiting, rejects with aborted; unaborted, settles as the work does", async () => {
    const controller = new AbortController();
    const pending = withSignal(new Promise<never>(() => {}), controller.signal);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ kind: "aborted" });
    await expect(withSignal(Promise.resolve(7), new AbortController().signal)).resolves.toBe(7);
    await expect(withSignal(Promise.reject(new Error("x")), new AbortController().signal)).rejects.toThrow("x");
  });
});
