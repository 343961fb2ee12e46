/**
 * Cancellation (src/transport/cancel.ts), the session's per-request signal: it behaves as an
 * AbortController's signal does for what senders and handlers use (aborted, reason, listeners
 * added and removed), and a cancelled request still cancels its RPC through the client.
 */
import { describe, expect, it } from "vitest";
import { Cancellation } from "../../src/transport/cancel.js";
import { withSignal } from "../../src/bridge/methods/orchestrator.js";

/** What happens to each kind of signal under the same steps, for a side-by-side comparison. */
function script(
  make: () => {
    signal: { aborted: boolean; reason: unknown; addEventListener: Cancellation["addEventListener"]; removeEventListener: Cancellation["removeEventListener"] };
    abort: (r?: unknown) => void;
  },
) {
  const log: string[] = [];
  const c = make();
  const a = () => log.push("a");
  const b = () => log.push("b");
  const removed = () => log.push("removed");
  c.signal.addEventListener("abort", a, { once: true });
  c.signal.addEventListener("abort", a, { once: true }); // the same listener twice: runs once
  c.signal.addEventListener("abort", removed, { once: true });
  c.signal.addEventListener("abort", b, { once: true });
  c.signal.removeEventListener("abort", removed);
  log.push(`before: ${c.signal.aborted}`);
  c.abort("why");
  c.abort("again"); // a second abort changes nothing
  c.signal.addEventListener("abort", () => log.push("late"), { once: true }); // never runs
  log.push(`after: ${c.signal.aborted} ${String(c.signal.reason)}`);
  return log;
}

describe("Cancellation", () => {
  it("runs its listeners once, in order, as an AbortController's signal does", () => {
    const ours = script(() => {
      const c = new Cancellation();
      return { signal: c, abort: (r) => c.abort(r) };
    });
    const dom = script(() => {
      const c = new AbortController();
      return { signal: c.signal, abort: (r) => c.abort(r) };
    });
    expect(ours).toEqual(["before: false", "a", "b", "after: true why"]);
    expect(ours).toEqual(dom);
  });

  it("has an AbortError as its reason when aborted without one", () => {
    const c = new Cancellation();
    expect(c.reason).toBeUndefined();
    c.abort();
    expect(c.reason).toBeInstanceOf(DOMException);
    expect((c.reason as DOMException).name).toBe("AbortError");
  });

  it("runs the other listeners when one throws, and reports the error on a later tick", async () => {
    const c = new Cancellation();
    const ran: string[] = [];
    c.addEventListener("abort", () => {
      throw new Error("listener failed");
    });
    c.addEventListener("abort", () => ran.push("second"));
    const reported = new Promise<unknown>((resolve) => {
      const listeners = process.listeners("uncaughtException");
      process.removeAllListeners("uncaughtException");
      process.once("uncaughtException", (err) => {
        for (const l of listeners) process.on("uncaughtException", l);
        resolve(err);
      });
    });
    expect(() => c.abort()).not.toThrow();
    expect(ran).toEqual(["second"]);
    expect(((await reported) as Error).message).toBe("listener failed");
  });

  it("ends a wait on shared work (withSignal) when aborted", async () => {
    const c = new Cancellation();
    const pending = withSignal(new Promise<never>(() => {}), c);
    c.abort();
    await expect(pending).rejects.toMatchObject({ kind: "aborted" });
  });
});
