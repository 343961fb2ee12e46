/**
 * DeferredSender (src/transport/deferred-sender.ts): calls wait for the real sender, bounded in
 * number, by their deadline and by their signal; a start-up failure or a close fails them.
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { PluginRequestSchema, PluginResponseSchema, type PluginRequest, type PluginResponse } from "../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { DeferredSender } from "../../src/transport/deferred-sender.js";
import type { SendOptions, Sender } from "../../src/transport/sender.js";

/** A sender answering every request with an empty response, recording what it was given. */
function fakeSender(): Sender & { calls: Array<{ request: PluginRequest; options?: SendOptions }>; closed: boolean } {
  const fake = {
    address: "127.0.0.1:9",
    calls: [] as Array<{ request: PluginRequest; options?: SendOptions }>,
    closed: false,
    send(request: PluginRequest, options?: SendOptions): Promise<PluginResponse> {
      fake.calls.push({ request, options });
      return Promise.resolve(create(PluginResponseSchema, { requestId: request.requestId }));
    },
    close(): Promise<void> {
      fake.closed = true;
      return Promise.resolve();
    },
  };
  return fake;
}

const request = (id: string) => create(PluginRequestSchema, { requestId: id, request: { case: "listTools", value: {} } });

describe("DeferredSender", () => {
  it("holds calls until ready, then sends them, in order, with what is left of their deadline", async () => {
    const deferred = new DeferredSender({ address: "embedded", streams: true });
    const a = deferred.send(request("a"), { timeoutMs: 60_000 });
    const b = deferred.send(request("b"));
    expect(deferred.waiting).toBe(2);
    expect(deferred.address).toBe("embedded");
    const real = fakeSender();
    deferred.ready(real);
    expect((await a).requestId).toBe("a");
    expect((await b).requestId).toBe("b");
    expect(real.calls.map((c) => c.request.requestId)).toEqual(["a", "b"]);
    expect(real.calls[0]!.options!.timeoutMs).toBeGreaterThan(0);
    expect(real.calls[0]!.options!.timeoutMs).toBeLessThanOrEqual(60_000);
    expect(deferred.address).toBe("127.0.0.1:9");
    expect(deferred.waiting).toBe(0);
  });

  it("bounds the waiting calls: one more fails at once with connect", async () => {
    const deferred = new DeferredSender({ address: "embedded", streams: true, maxWaiting: 2 });
    const waiting = [deferred.send(request("1")), deferred.send(request("2"))];
    await expect(deferred.send(request("3"))).rejects.toMatchObject({ name: "SenderError", kind: "connect", message: expect.stringContaining("2 calls are already waiting") });
    deferred.ready(fakeSender());
    await expect(Promise.all(waiting)).resolves.toHaveLength(2);
  });

  it("fails a waiting call on its deadline and on its signal, and leaves the queue", async () => {
    const deferred = new DeferredSender({ address: "embedded", streams: true });
    await expect(deferred.send(request("t"), { timeoutMs: 5 })).rejects.toMatchObject({ kind: "timeout" });
    const controller = new AbortController();
    const aborted = deferred.send(request("x"), { signal: controller.signal });
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ kind: "aborted" });
    expect(deferred.waiting).toBe(0);
  });

  it("a start-up failure fails the waiting and the later calls with connect and its message", async () => {
    const deferred = new DeferredSender({ address: "embedded", streams: true });
    const waiting = deferred.send(request("w"));
    deferred.fail("cannot load tool module /x.mjs: boom");
    await expect(waiting).rejects.toMatchObject({ kind: "connect", message: "orchestrator embedded unreachable: cannot load tool module /x.mjs: boom" });
    await expect(deferred.send(request("l"))).rejects.toMatchObject({ kind: "connect" });
  });

  it("close fails the waiting calls with closed and closes the real sender once it comes", async () => {
    const deferred = new DeferredSender({ address: "embedded", streams: false });
    const waiting = deferred.send(request("w"));
    await deferred.close();
    await expect(waiting).rejects.toMatchObject({ kind: "closed" });
    const real = fakeSender();
    deferred.ready(real);
    expect(real.closed).toBe(true);
    expect(deferred.streams).toBe(false);
  });
});
