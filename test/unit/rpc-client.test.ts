/**
 * The transport client (src/transport/rpc-client.ts) over a scripted link: one call path for
 * unary and streaming calls, one deadline mechanism, cancel, reconnect with backoff, liveness,
 * refusal learning per link and the resync of a lost subscription.
 */
import { create } from "@bufbuild/protobuf";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { PluginRequestSchema, PluginResponseSchema, type PluginRequest, type PluginResponse } from "../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { senderError, SenderError, StreamUnsupportedError } from "../../src/transport/errors.js";
import { REQUEST_LIVENESS_MS, RESUBSCRIBED_EVENT_TYPE, RpcClient, type RpcClientOptions } from "../../src/transport/rpc-client.js";
import { FakeDialer, type FakeCall } from "../helpers/fake-link.js";
import { rejection } from "../helpers/sender-error.js";

const quiet = pino({ level: "silent" });
const options = (o: Partial<RpcClientOptions> = {}): RpcClientOptions => ({
  callTimeoutMs: 60_000,
  reconnectMinMs: 50,
  reconnectMaxMs: 1_000,
  maxConcurrentCalls: 100,
  livenessMs: 1_000,
  logger: quiet,
  ...o,
});
const health = (requestId = "h-1"): PluginRequest => create(PluginRequestSchema, { requestId, request: { case: "health", value: {} } });
const streamStart = (requestId = "s-1"): PluginRequest =>
  create(PluginRequestSchema, { requestId, request: { case: "streamStart", value: { toolName: "t", streamId: requestId } } });
const subscribe = (requestId = "sub-1"): PluginRequest =>
  create(PluginRequestSchema, { requestId, request: { case: "subscribe", value: { topic: "tools", subscriptionId: requestId } } });
const chunk = (requestId: string, sequence: number): PluginResponse =>
  create(PluginResponseSchema, { requestId, response: { case: "streamChunk", value: { streamId: requestId, sequence } } });
const healthy = (requestId: string): PluginResponse => create(PluginResponseSchema, { requestId, response: { case: "health", value: {} } });

async function until(pred: () => boolean, what: string): Promise<void> {
  for (let i = 0; !pred(); i++) {
    if (i > 2_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
/** The `n`th call (0-based) opened on the dialer's latest link, once it is there. */
async function opened(dialer: FakeDialer, n = 0): Promise<FakeCall> {
  await until(() => dialer.links.length > 0 && dialer.last.calls.length > n, `call ${n} to be opened`);
  return dialer.last.calls[n]!;
}

/** A client whose one link (5 packets received so far) answered a call and is idle now. */
async function idleLink(): Promise<{ dialer: FakeDialer; client: RpcClient }> {
  const dialer = new FakeDialer();
  dialer.prepare = (link) => {
    link.packetsReceived = 5;
  };
  const client = new RpcClient(dialer, options());
  const first = client.send(health("a"));
  (await opened(dialer)).events.frame(healthy("a"));
  await first;
  return { dialer, client };
}

describe("RpcClient", () => {
  it("a unary call resolves with its first frame and releases the stream", async () => {
    const dialer = new FakeDialer();
    const client = new RpcClient(dialer, options());
    const p = client.send(health("u-1"));
    const call = await opened(dialer);
    expect(call.multiFrame).toBe(false);
    expect(call.request?.requestId).toBe("u-1");
    call.events.frame(healthy("u-1"));
    expect((await p).requestId).toBe("u-1");
    expect(call.released).toBe(true);
    expect(call.cancelled).toBeUndefined();
    await client.close();
  });

  it("a streaming call is the same call: frames in order, complete when the link ends it", async () => {
    const dialer = new FakeDialer();
    const client = new RpcClient(dialer, options());
    const seen: number[] = [];
    const p = client.stream(streamStart("s-1"), (r) => {
      if (r.response.case === "streamChunk") seen.push(r.response.value.sequence);
    });
    const call = await opened(dialer);
    expect(call.multiFrame).toBe(true);
    call.events.frame(chunk("s-1", 1));
    call.events.frame(chunk("s-1", 2));
    call.events.end();
    await p;
    expect(seen).toEqual([1, 2]);
    expect(call.released).toBe(true);
    await client.close();
  });

  it("a call whose stream ends before any frame fails with 'frame'", async () => {
    const dialer = new FakeDialer();
    const client = new RpcClient(dialer, options());
    const p = client.send(health());
    (await opened(dialer)).events.end();
    const e = await rejection(p);
    expect(e.kind).toBe("frame");
    expect(e.message).toMatch(/^orchestrator fake:1: malformed response: stream ended before a frame arrived/);
    await client.close();
  });

  it("a deadline fails the call with 'timeout' and cancels it on the link; abort cancels with 'cancelled'", async () => {
    const dialer = new FakeDialer();
    const client = new RpcClient(dialer, options());
    const timed = client.send(health("t-1"), { timeoutMs: 30 });
    const controller = new AbortController();
    const aborted = client.send(health("a-1"), { signal: controller.signal });
    const [first, second] = [await opened(dialer, 0), await opened(dialer, 1)];
    expect((await rejection(timed)).kind).toBe("timeout");
    expect(first.cancelled).toBe("timeout");
    controller.abort();
    expect((await rejection(aborted)).kind).toBe("aborted");
    expect(second.cancelled).toBe("cancelled");
    await client.close();
  });

  it("calls wait for stream credit and start when the link grants more", async () => {
    const dialer = new FakeDialer();
    dialer.prepare = (link) => {
      link.credit = 1;
    };
    const client = new RpcClient(dialer, options());
    const a = client.send(health("c-1"));
    const b = client.send(health("c-2"));
    const first = await opened(dialer, 0);
    expect(client.stats).toEqual({ active: 1, queued: 1, connected: true });
    dialer.last.credit = 1;
    dialer.last.onCredit?.();
    const second = await opened(dialer, 1);
    first.events.frame(healthy("c-1"));
    second.events.frame(healthy("c-2"));
    expect((await a).requestId).toBe("c-1");
    expect((await b).requestId).toBe("c-2");
    await client.close();
  });

  it("a lost link fails its calls with the link's error; the next call redials after a backoff", async () => {
    const dialer = new FakeDialer();
    const client = new RpcClient(dialer, options());
    const p = client.send(health());
    await opened(dialer);
    dialer.last.die("connection lost: peer went away");
    const e = await rejection(p);
    expect(e.kind).toBe("closed");
    expect(e.message).toMatch(/peer went away/);
    expect(dialer.last.closed).toBe(false);
    expect(client.reconnectDelayMs).toBeGreaterThan(0);
    const next = client.send(health("again"));
    await until(() => dialer.links.length === 2, "a new link");
    const call = await opened(dialer);
    call.events.frame(healthy("again"));
    expect((await next).requestId).toBe("again");
    await client.close();
  });

  it("a failed dial fails the waiting calls with its error and backs off, doubling", async () => {
    const dialer = new FakeDialer();
    dialer.failures.push(senderError("fake:1", "connect", "refused"), senderError("fake:1", "connect", "refused"));
    const client = new RpcClient(dialer, options({ reconnectMinMs: 40, reconnectMaxMs: 10_000 }));
    expect((await rejection(client.send(health()))).kind).toBe("connect");
    const firstDelay = client.reconnectDelayMs;
    expect(firstDelay).toBeGreaterThan(0);
    expect((await rejection(client.send(health()))).kind).toBe("connect");
    expect(client.reconnectDelayMs).toBeGreaterThan(firstDelay);
    await client.close();
  });

  it("a deadline on a link that received no packet for longer than livenessMs drops the link", async () => {
    const dialer = new FakeDialer();
    dialer.prepare = (link) => {
      link.packetsReceived = 7;
    };
    const client = new RpcClient(dialer, options({ livenessMs: 20 }));
    const waiting = client.send(health("w-1"));
    await opened(dialer);
    expect((await rejection(client.send(health("x-1"), { timeoutMs: 10 }))).kind).toBe("timeout"); // first sample
    await new Promise((r) => setTimeout(r, 40));
    // The peer is gone: w-1 (never acknowledged) is retried once, and the redial fails.
    dialer.failures.push(senderError("fake:1", "connect", "no handshake"));
    expect((await rejection(client.send(health("x-2"), { timeoutMs: 10 }))).kind).toBe("timeout"); // still 7 packets
    const e = await rejection(waiting);
    expect(e.kind).toBe("closed");
    expect(e.message).toMatch(/no packet received for \d+ ms/);
    expect(client.stats.connected).toBe(false);
    await client.close();
  });

  it("a call whose link dies with no packet received since its request was written is retried once on a new link", async () => {
    const dialer = new FakeDialer();
    dialer.prepare = (link) => {
      link.packetsReceived = 3;
    };
    const client = new RpcClient(dialer, options());
    const p = client.send(health("r-1"));
    (await opened(dialer)).events.frame(healthy("r-1"));
    await p;
    const next = client.send(health("r-2"));
    await opened(dialer, 1);
    dialer.last.die("connection lost: peer closed the connection: transport error 0 (stateless reset)");
    await until(() => dialer.links.length === 2 && dialer.last.calls.length === 1, "the retry on a new link");
    const retry = dialer.last.calls[0]!;
    expect(retry.request?.requestId).toBe("r-2");
    // The retried call dies unseen too: it is not retried a second time.
    dialer.last.die("connection lost: again");
    const e = await rejection(next);
    expect(e.message).toMatch(/again/);
    expect(dialer.links).toHaveLength(2);
    await client.close();
  });

  it("a call the peer may have seen (a packet arrived after its request was written) is not retried", async () => {
    const dialer = new FakeDialer();
    dialer.prepare = (link) => {
      link.packetsReceived = 0;
    };
    const client = new RpcClient(dialer, options());
    const p = client.send(health("seen"));
    await opened(dialer);
    dialer.last.packetsReceived = 1; // e.g. the ACK of the request
    dialer.last.die("connection lost: peer went away");
    expect((await rejection(p)).message).toMatch(/peer went away/);
    expect(dialer.links).toHaveLength(1);
    await client.close();
  });

  it("a retried call whose reconnect fails reports the loss and the connect failure", async () => {
    const dialer = new FakeDialer();
    dialer.prepare = (link) => {
      link.packetsReceived = 0;
    };
    const client = new RpcClient(dialer, options());
    const p = client.send(health("lost"));
    await opened(dialer);
    dialer.failures.push(senderError("fake:1", "connect", "refused"));
    dialer.last.die("connection lost: stateless reset");
    const e = await rejection(p);
    expect(e.kind).toBe("closed");
    expect(e.message).toMatch(/^orchestrator fake:1: connection lost: stateless reset; reconnecting failed: .*refused/);
    await client.close();
  });

  it("a request on an idle link that draws no packet within the liveness window drops the link and is retried", async () => {
    const { dialer, client } = await idleLink();
    const silent = dialer.last;
    const p = client.send(health("b")); // the peer silently drops it: the counter stays at 5
    await opened(dialer, 1);
    await until(() => dialer.links.length === 2 && dialer.last.calls.length === 1, "the link dropped and the call retried");
    expect(silent.closed).toBe(false);
    dialer.last.calls[0]!.events.frame(healthy("b"));
    expect((await p).requestId).toBe("b");
    await client.close();
  });

  it("a second request on an idle link restarts the liveness window from its own write", async () => {
    const { dialer, client } = await idleLink();
    const b = client.send(health("b"));
    await opened(dialer, 1);
    dialer.last.packetsReceived = 6; // b's ACK
    dialer.last.calls[1]!.events.frame(healthy("b"));
    await b;
    const c = client.send(health("c")); // idle again, and silently dropped
    await until(() => dialer.links.length === 2 && dialer.last.calls.length === 1, "the link dropped and c retried");
    dialer.last.calls[0]!.events.frame(healthy("c"));
    expect((await c).requestId).toBe("c");
    await client.close();
  });

  it("a request on an idle link that gets its ACK keeps the link", async () => {
    const { dialer, client } = await idleLink();
    const p = client.send(health("b"));
    await opened(dialer, 1);
    dialer.last.packetsReceived = 6;
    await new Promise((r) => setTimeout(r, REQUEST_LIVENESS_MS + 200));
    expect(dialer.links).toHaveLength(1);
    dialer.last.calls[1]!.events.frame(healthy("b"));
    expect((await p).requestId).toBe("b");
    await client.close();
  });

  it("logs a failed connect at warn once per outage, then at debug until a link answers", async () => {
    const lines: { level: number; msg: string }[] = [];
    const logger = pino({ level: "debug" }, { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) });
    const dialer = new FakeDialer();
    const refused = () => senderError("fake:1", "connect", "refused");
    dialer.failures.push(refused(), refused(), refused());
    const client = new RpcClient(dialer, options({ reconnectMinMs: 1, reconnectMaxMs: 2, logger }));
    for (let i = 0; i < 3; i++) expect((await rejection(client.send(health(`f-${i}`)))).kind).toBe("connect");
    const failed = () => lines.filter((l) => l.msg.startsWith("FAKE connect failed"));
    expect(failed().map((l) => l.level)).toEqual([40, 20, 20]);
    const ok = client.send(health("ok"));
    (await opened(dialer)).events.frame(healthy("ok"));
    await ok;
    dialer.failures.push(refused());
    dialer.last.die("connection lost: outage 2");
    expect((await rejection(client.send(health("f-3")))).kind).toBe("connect");
    expect(failed().map((l) => l.level)).toEqual([40, 20, 20, 40]);
    await client.close();
  });

  it("learns a refused streaming kind per link: later calls fail at once, a new link asks again", async () => {
    const dialer = new FakeDialer();
    const client = new RpcClient(dialer, options());
    const p = client.stream(subscribe("r-1"), () => {});
    (await opened(dialer)).events.frame(create(PluginResponseSchema, { requestId: "r-1" }));
    expect(await rejection(p)).toBeInstanceOf(StreamUnsupportedError);
    const again = await rejection(client.stream(subscribe("r-2"), () => {}));
    expect(again).toBeInstanceOf(StreamUnsupportedError);
    expect(again.message).toMatch(/earlier on this connection/);
    expect(dialer.last.calls).toHaveLength(1); // no stream for the second one
    dialer.last.die();
    const fresh = client.stream(subscribe("r-3"), () => {});
    await until(() => dialer.links.length === 2 && dialer.last.calls.length === 1, "a stream on the new link");
    dialer.last.calls[0]!.events.end();
    await expect(fresh).rejects.toBeInstanceOf(SenderError); // no frame at all: 'frame'
    await client.close();
  });

  it("a subscription lost after it went out starts its next one with a resync event", async () => {
    const dialer = new FakeDialer();
    const client = new RpcClient(dialer, options());
    const lost = client.stream(subscribe("l-1"), () => {});
    await opened(dialer);
    dialer.last.die();
    expect((await rejection(lost)).kind).toBe("closed");
    const events: string[] = [];
    const next = client.stream(subscribe("l-2"), (r) => {
      if (r.response.case === "eventDelivery") events.push(r.response.value.eventType);
    });
    await until(() => events.length > 0, "the resync event");
    expect(events).toEqual([RESUBSCRIBED_EVENT_TYPE]);
    await client.close();
    expect((await rejection(next)).kind).toBe("closed");
  });

  it("a response for another request_id fails the call with 'protocol'", async () => {
    const dialer = new FakeDialer();
    const client = new RpcClient(dialer, options());
    const p = client.send(health("mine"));
    const call = await opened(dialer);
    call.events.frame(healthy("someone-else"));
    const e = await rejection(p);
    expect(e.kind).toBe("protocol");
    expect(call.cancelled).toBe("malformed");
    await client.close();
  });
});
