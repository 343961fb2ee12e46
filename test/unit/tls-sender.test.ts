/**
 * TlsSender ↔ the TLS reference orchestrator (startTlsOrchestrator) over real TLS 1.3 on
 * loopback, in-process: matching, deadlines and cancellation, size limits, per-request errors,
 * connection loss and reconnection, mutual TLS and ALPN.
 */
import tls from "node:tls";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HealthResult_Status, PluginRequestSchema, type PluginRequest, type PluginResponse } from "../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { createEphemeralPki, type TlsMaterial } from "../../src/pki/store.js";
import { encodeFrameHeader, MAX_FRAME_BYTES } from "../../src/framing/frame.js";
import { builtinTools } from "../../src/orchestrator/builtin-tools.js";
import { ToolRegistry, type Tool } from "../../src/orchestrator/registry.js";
import type { RunningOrchestrator } from "../../src/orchestrator/quic-server.js";
import { startTlsOrchestrator } from "../../src/orchestrator/tls-server.js";
import { TLS_ALPN } from "../../src/tls/mux.js";
import { TlsSender } from "../../src/tls/tls-link.js";
import { rejection } from "../helpers/sender-error.js";

interface Pki {
  server: TlsMaterial;
  client: TlsMaterial;
}
async function makePki(): Promise<Pki> {
  const p = await createEphemeralPki(["orchestrator", "transport.stdio-client"]);
  return {
    server: { caPem: p.caPem, ...p.leaves["orchestrator"]! },
    client: { caPem: p.caPem, ...p.leaves["transport.stdio-client"]! },
  };
}

let seq = 0;
const rid = (p = "r"): string => `${p}-${process.pid}-${++seq}`;
const call = (toolName: string, args: JsonObject, requestId = rid("call")): PluginRequest =>
  create(PluginRequestSchema, { requestId, request: { case: "toolCall", value: { toolName, arguments: args } } });
const health = (requestId = rid("health")): PluginRequest => create(PluginRequestSchema, { requestId, request: { case: "health", value: {} } });

function toolValue(r: PluginResponse) {
  if (r.response.case !== "toolCall") throw new Error(`expected tool_call, got ${String(r.response.case)}`);
  return r.response.value;
}

async function until(pred: () => boolean, what: string, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** `hold {key}` runs until cancelled and records the cancellation; `big {bytes}` returns that much text. */
const aborted = new Set<string>();
const started = new Set<string>();
const probeTools: Tool[] = [
  {
    name: "hold",
    description: "waits until cancelled",
    inputSchema: { type: "object" },
    handler(args, { signal }) {
      const key = String(args.key);
      started.add(key);
      return new Promise((_resolve, reject) => {
        signal.addEventListener("abort", () => {
          aborted.add(key);
          reject(new Error("cancelled"));
        });
      });
    },
  },
  {
    name: "big",
    description: "returns {data} of the given length",
    inputSchema: { type: "object" },
    async handler(args) {
      return { data: "x".repeat(Number(args.bytes)) };
    },
  },
];

let pki: Pki;
let server: RunningOrchestrator;
let sender: TlsSender;

beforeAll(async () => {
  pki = await makePki();
  server = await startTlsOrchestrator({ tls: pki.server, tools: new ToolRegistry([...builtinTools(), ...probeTools]) });
  sender = new TlsSender({ host: "127.0.0.1", port: server.port, tls: pki.client });
});
afterAll(async () => {
  await sender?.close();
  await server?.stop();
});

describe("TlsSender against the TLS reference orchestrator", () => {
  it("answers health, list_tools and echo, echoing request_id", async () => {
    const id = rid("h");
    const h = await sender.send(health(id));
    expect(h.requestId).toBe(id);
    expect(h.response.case === "health" && h.response.value.status).toBe(HealthResult_Status.HEALTHY);
    const list = await sender.send(create(PluginRequestSchema, { requestId: rid(), request: { case: "listTools", value: {} } }));
    expect(list.response.case === "listTools" && list.response.value.tools.map((t) => t.name)).toEqual(expect.arrayContaining(["echo", "slow", "hold"]));
    expect(toolValue(await sender.send(call("echo", { text: "över TLS 🙂" }))).result).toEqual({ text: "över TLS 🙂" });
  });

  it("matches 100 concurrent calls on one connection, answered out of order", async () => {
    const before = server.stats.connections;
    const calls = Array.from({ length: 100 }, (_, i) => ({ id: rid("c"), ms: (i * 37) % 23, text: `t${i}` }));
    const responses = await Promise.all(calls.map((c) => (c.ms % 2 === 0 ? sender.send(call("echo", { text: c.text }, c.id)) : sender.send(call("slow", { ms: c.ms }, c.id)))));
    responses.forEach((r, i) => {
      const c = calls[i]!;
      expect(r.requestId).toBe(c.id);
      expect(toolValue(r).result).toEqual(c.ms % 2 === 0 ? { text: c.text } : { slept: c.ms });
    });
    expect(server.stats.connections).toBe(before); // multiplexed: no new connection
  });

  it("gives an empty request_id a fresh one and refuses an id already in flight", async () => {
    const r = await sender.send(create(PluginRequestSchema, { request: { case: "health", value: {} } }));
    expect(r.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    const id = rid("dup");
    const first = sender.send(call("slow", { ms: 200 }, id));
    const e = await rejection(sender.send(call("echo", { text: "x" }, id)));
    expect(e.kind).toBe("protocol");
    expect(e.message).toMatch(/already in flight/);
    expect(toolValue(await first).result).toEqual({ slept: 200 });
  });

  it("an unknown tool is success:false tool_not_found", async () => {
    const v = toolValue(await sender.send(call("nope", {})));
    expect(v).toMatchObject({ success: false, errorCode: "tool_not_found" });
  });

  it("a deadline rejects with timeout and cancels the handler on the server; the connection stays usable", async () => {
    const key = rid("deadline");
    const cancelled = server.stats.streamsCancelled;
    const e = await rejection(sender.send(call("hold", { key }), { timeoutMs: 300 }));
    expect(e.kind).toBe("timeout");
    expect(e.message).toContain(`127.0.0.1:${server.port}`);
    await until(() => aborted.has(key), "the server to abort the handler");
    expect(server.stats.streamsCancelled).toBe(cancelled + 1);
    expect(toolValue(await sender.send(call("echo", { text: "after" }))).result).toEqual({ text: "after" });
  });

  it("an abort signal rejects with aborted and cancels the handler on the server", async () => {
    const key = rid("abort");
    const ac = new AbortController();
    const p = sender.send(call("hold", { key }), { signal: ac.signal });
    await until(() => started.has(key), "the handler to start");
    ac.abort();
    const e = await rejection(p);
    expect(e.kind).toBe("aborted");
    await until(() => aborted.has(key), "the server to abort the handler");
    expect(toolValue(await sender.send(call("echo", { text: "next" }))).result).toEqual({ text: "next" });
  });

  it("refuses a request over 16 MiB locally with a frame error", async () => {
    const opened = server.stats.streamsOpened;
    const e = await rejection(sender.send(call("echo", { text: "y".repeat(MAX_FRAME_BYTES) })));
    expect(e.kind).toBe("frame");
    expect(e.message).toMatch(/exceeds the 16777216-byte limit/);
    expect(server.stats.streamsOpened).toBe(opened);
  });

  it("a result over 16 MiB becomes result_too_large and the next call works", async () => {
    const v = toolValue(await sender.send(call("big", { bytes: MAX_FRAME_BYTES + 1 }), { timeoutMs: 30_000 }));
    expect(v).toMatchObject({ success: false, errorCode: "result_too_large" });
    const ok = toolValue(await sender.send(call("big", { bytes: 1024 * 1024 }), { timeoutMs: 30_000 }));
    expect((ok.result as { data: string }).data.length).toBe(1024 * 1024);
  });

  it("an unencodable request is refused with 'frame', as over QUIC (regression: it was 'protocol' over TLS)", async () => {
    const bad = create(PluginRequestSchema, { requestId: rid(), request: { case: "storageWrite", value: { path: "p" } } });
    (bad.request.value as { expectedVersion: unknown }).expectedVersion = "not a number";
    const e = await rejection(sender.send(bad));
    expect(e.kind).toBe("frame");
    expect(e.message).toMatch(/cannot encode PluginRequest/);
    expect(e.message).toContain(`127.0.0.1:${server.port}`);
    expect((await sender.send(health())).response.case).toBe("health");
  });

  it("an unsupported request kind is refused as upstream does (tool_call unknown_request) for that call only", async () => {
    const r = await sender.send(create(PluginRequestSchema, { requestId: rid(), request: { case: "boot", value: {} } }));
    expect(toolValue(r)).toMatchObject({ success: false, errorCode: "unknown_request", errorMessage: "unrecognized request type: boot" });
    expect((await sender.send(health())).response.case).toBe("health");
  });
});

describe("connection loss and recovery", () => {
  it("fails pending calls promptly when the orchestrator stops, then reconnects to a restarted one", async () => {
    const own = await startTlsOrchestrator({ tls: pki.server, tools: new ToolRegistry(probeTools) });
    const port = own.port;
    const s = new TlsSender({ host: "127.0.0.1", port, tls: pki.client, reconnectMinMs: 50 });
    try {
      const keys = Array.from({ length: 20 }, () => rid("pending"));
      const pending = keys.map((key) => rejection(s.send(call("hold", { key }))));
      await until(() => keys.every((k) => started.has(k)), "all calls to reach the server");
      await own.stop();
      const errors = await Promise.all(pending);
      for (const e of errors) {
        expect(e.kind).toBe("closed");
        expect(e.message).toContain(`127.0.0.1:${port}`);
      }
      // Down: the next call fails to connect (and the sender backs off).
      const down = await rejection(s.send(health()));
      expect(down.kind).toBe("connect");
      expect(s.reconnectDelayMs).toBeGreaterThan(0);
      const again = await startTlsOrchestrator({ tls: pki.server, port, tools: new ToolRegistry(probeTools) });
      try {
        expect((await s.send(health(), { timeoutMs: 10_000 })).response.case).toBe("health");
      } finally {
        await s.close();
        await again.stop();
      }
    } finally {
      await s.close();
      await own.stop();
    }
  });

  it("close() rejects calls in flight with closed", async () => {
    const s = new TlsSender({ host: "127.0.0.1", port: server.port, tls: pki.client });
    const p = rejection(s.send(call("hold", { key: rid("closing") })));
    await until(() => s.inFlight === 1, "the call to be sent");
    await s.close();
    expect((await p).kind).toBe("closed");
    expect((await rejection(s.send(health()))).kind).toBe("closed");
  });

  it("an unreachable port is a connect error naming the address", async () => {
    const probe = tls.createServer({});
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const s = new TlsSender({ host: "127.0.0.1", port, tls: pki.client });
    try {
      const e = await rejection(s.send(health()));
      expect(e.kind).toBe("connect");
      expect(e.message).toMatch(new RegExp(`^orchestrator 127\\.0\\.0\\.1:${port} unreachable: .*ECONNREFUSED`));
    } finally {
      await s.close();
    }
  });
});

/** A TLS server under test control: mutual TLS with `material`, custom ALPN, scripted behaviour. */
async function scriptedServer(material: TlsMaterial, alpn: string[], onSocket: (s: tls.TLSSocket) => void): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<tls.TLSSocket>();
  const srv = tls.createServer({ key: material.keyPem, cert: material.certPem, ca: material.caPem, requestCert: true, rejectUnauthorized: true, ALPNProtocols: alpn }, (s) => {
    sockets.add(s);
    s.on("error", () => {});
    onSocket(s);
  });
  srv.on("tlsClientError", () => {});
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  return {
    port: (srv.address() as AddressInfo).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => srv.close(r));
    },
  };
}

describe("transport faults", () => {
  it("a response frame declaring more than 16 MiB fails the calls with a frame error; the next call reconnects", async () => {
    let connections = 0;
    const srv = await scriptedServer(pki.server, [TLS_ALPN], (s) => {
      connections++;
      if (connections === 1) s.once("data", () => s.write(encodeFrameHeader(MAX_FRAME_BYTES + 1, Number.MAX_SAFE_INTEGER)));
      else s.once("data", () => s.end());
    });
    const s = new TlsSender({ host: "127.0.0.1", port: srv.port, tls: pki.client, reconnectMinMs: 10 });
    try {
      const e = await rejection(s.send(health()));
      expect(e.kind).toBe("frame");
      expect(e.message).toMatch(/16777217 bytes exceeds/);
      // The second connection is closed before it answers anything: reported as a connect failure.
      const e2 = await rejection(s.send(health()));
      expect(e2.kind).toBe("connect");
      expect(e2.message).toMatch(/before any answer/);
      expect(connections).toBe(2);
    } finally {
      await s.close();
      await srv.close();
    }
  });

  it("refuses a server that does not negotiate ALPN orchestra-plugin", async () => {
    const srv = await scriptedServer(pki.server, ["something-else"], () => {});
    const s = new TlsSender({ host: "127.0.0.1", port: srv.port, tls: pki.client });
    try {
      const e = await rejection(s.send(health()));
      expect(e.kind).toBe("connect");
      expect(e.message).toMatch(/ALPN|application protocol/i);
    } finally {
      await s.close();
      await srv.close();
    }
  });
});

describe("mutual TLS", () => {
  let evil: Pki;
  beforeAll(async () => {
    evil = await makePki();
  });

  it("the server refuses a client whose certificate another CA signed", async () => {
    const opened = server.stats.streamsOpened;
    const s = new TlsSender({
      host: "127.0.0.1",
      port: server.port,
      tls: { caPem: pki.client.caPem, certPem: evil.client.certPem, keyPem: evil.client.keyPem },
    });
    try {
      const e = await rejection(s.send(health()));
      expect(e.kind).toBe("connect");
      expect(e.message).toContain(`127.0.0.1:${server.port}`);
      expect(e.message).toMatch(/TLS/);
      expect(server.stats.streamsOpened).toBe(opened);
    } finally {
      await s.close();
    }
  });

  it("the sender refuses a server whose certificate another CA signed", async () => {
    const rogue = await startTlsOrchestrator({ tls: evil.server });
    const s = new TlsSender({ host: "127.0.0.1", port: rogue.port, tls: pki.client });
    try {
      const e = await rejection(s.send(health()));
      expect(e.kind).toBe("connect");
      expect(e.message).toMatch(/TLS verification of the server failed/);
      expect(rogue.stats.streamsOpened).toBe(0);
    } finally {
      await s.close();
      await rogue.stop();
    }
  });

  it("the sender refuses a server certificate without the expected server name", async () => {
    const s = new TlsSender({ host: "127.0.0.1", port: server.port, tls: pki.client, serverName: "elsewhere.example" });
    try {
      const e = await rejection(s.send(health()));
      expect(e.kind).toBe("connect");
      expect(e.message).toMatch(/elsewhere\.example/);
    } finally {
      await s.close();
    }
  });
});

describe("the TLS orchestrator's per-connection limits and faults", () => {
  it("runs at most maxStreams requests per connection; the rest wait and start as slots free", async () => {
    const own = await startTlsOrchestrator({ tls: pki.server, tools: new ToolRegistry(probeTools), maxStreams: 2 });
    const s = new TlsSender({ host: "127.0.0.1", port: own.port, tls: pki.client });
    try {
      const keys = Array.from({ length: 5 }, () => rid("cap"));
      const acs = keys.map(() => new AbortController());
      const calls = keys.map((key, i) => rejection(s.send(call("hold", { key }), { signal: acs[i]!.signal })));
      await until(() => started.has(keys[0]!) && started.has(keys[1]!), "the first two calls to start");
      await new Promise((r) => setTimeout(r, 100));
      expect(keys.filter((k) => started.has(k))).toHaveLength(2);
      expect(own.stats.activeStreams).toBe(2);
      acs[0]!.abort(); // frees one slot
      await until(() => started.has(keys[2]!), "the third call to start");
      expect(keys.filter((k) => started.has(k))).toHaveLength(3);
      // Cancelling a call that is still waiting drops it without ever running it.
      acs[4]!.abort();
      acs[1]!.abort();
      await until(() => started.has(keys[3]!), "the fourth call to start");
      await new Promise((r) => setTimeout(r, 100));
      expect(started.has(keys[4]!)).toBe(false);
      acs[2]!.abort();
      acs[3]!.abort();
      for (const e of await Promise.all(calls)) expect(e.kind).toBe("aborted");
      expect(own.stats.peakActiveStreams).toBe(2);
    } finally {
      await s.close();
      await own.stop();
    }
  });

  for (const [name, bytes, counter] of [
    ["a frame declaring more than 16 MiB", encodeFrameHeader(MAX_FRAME_BYTES + 1, Number.MAX_SAFE_INTEGER), "framesTooLarge"],
    ["an undecodable frame", Uint8Array.of(0, 0, 0, 3, 0xff, 0xff, 0xff), "malformedRequests"],
  ] as const) {
    it(`${name} closes that connection only`, async () => {
      const before = server.stats[counter];
      const raw = tls.connect({
        host: "127.0.0.1",
        port: server.port,
        servername: "localhost",
        ca: pki.client.caPem,
        cert: pki.client.certPem,
        key: pki.client.keyPem,
        ALPNProtocols: [TLS_ALPN],
      });
      raw.on("error", () => {});
      await new Promise<void>((r) => raw.once("secureConnect", () => r()));
      const closed = new Promise<void>((r) => raw.once("close", () => r()));
      raw.write(bytes);
      await closed;
      expect(server.stats[counter]).toBe(before + 1);
      expect((await sender.send(health())).response.case).toBe("health");
    });
  }
});

describe("TLS reference orchestrator serves what the QUIC one serves", () => {
  it("answers list_prompts and storage_list through the shared dispatch", async () => {
    const own = await startTlsOrchestrator({ tls: pki.server });
    const client = new TlsSender({ host: "127.0.0.1", port: own.port, tls: pki.client });
    try {
      const prompts = await client.send(create(PluginRequestSchema, { requestId: rid(), request: { case: "listPrompts", value: {} } }));
      expect(prompts.response.case).toBe("listPrompts");
      if (prompts.response.case === "listPrompts") expect(prompts.response.value.prompts.map((p) => p.name)).toContain("greet");
      const storage = await client.send(create(PluginRequestSchema, { requestId: rid(), request: { case: "storageList", value: {} } }));
      expect(storage.response.case).toBe("storageList");
      if (storage.response.case === "storageList") expect(storage.response.value.entries.length).toBeGreaterThan(0);
    } finally {
      await client.close();
      await own.stop();
    }
  });
});
