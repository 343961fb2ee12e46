/**
 * Addresses (RFC 8305 "happy eyeballs"): every address a name resolves to is tried, families
 * interleaved, for QUIC and TLS; IPv6 literals (`[::1]:port`) reach an orchestrator on `::1`.
 * Real sockets on loopback; the resolver is replaced where the test needs a name that resolves
 * to `::1` first (this machine's `localhost` may resolve to 127.0.0.1 only).
 */
import dgram from "node:dgram";
import { beforeAll, describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../helpers/cleanups.js";
import { startOrchestrator } from "../../src/orchestrator/quic-server.js";
import { startTlsOrchestrator } from "../../src/orchestrator/tls-server.js";
import { resolveAddresses, type ResolvedAddress } from "../../src/quic/address.js";
import { QuicSender } from "../../src/quic/quic-link.js";
import { TlsSender } from "../../src/tls/tls-link.js";
import { healthRequest, makePki, type TestPki } from "../helpers/quic/index.js";
import { requireBuiltCli, startOrchestratorProcess, tempDir } from "../helpers/cli.js";
import { connectBridge } from "../helpers/transport.js";

let pki: TestPki;
const cleanups = cleanupsAfterEach();
beforeAll(async () => {
  pki = await makePki();
});

const V6: ResolvedAddress = { address: "::1", family: 6 };
const V4: ResolvedAddress = { address: "127.0.0.1", family: 4 };
/** A resolver for which every name has exactly `list`, in that order. */
const resolvesTo =
  (...list: ResolvedAddress[]) =>
  async () =>
    list;

describe("resolveAddresses", () => {
  it("keeps an IP literal, removes duplicates, and interleaves families starting with the resolver's first", async () => {
    expect(await resolveAddresses("::1")).toEqual([V6]);
    expect(await resolveAddresses("127.0.0.1")).toEqual([V4]);
    const a6 = { address: "fd00::2", family: 6 } as const;
    const b4 = { address: "127.0.0.2", family: 4 } as const;
    expect(await resolveAddresses("x", resolvesTo(V6, a6, V4, b4, V6))).toEqual([V6, V4, a6, b4]);
    expect(await resolveAddresses("x", resolvesTo(V4, b4, V6))).toEqual([V4, V6, b4]);
    await expect(resolveAddresses("x", resolvesTo())).rejects.toThrow(/cannot resolve x: no address/);
  });
});

async function quicHealth(host: string, port: number, resolver?: () => Promise<ResolvedAddress[]>): Promise<string | undefined> {
  const sender = new QuicSender({ host, port, tls: pki.client, connectTimeoutMs: 20_000, ...(resolver ? { resolver } : {}) });
  cleanups.push(() => sender.close());
  return (await sender.send(healthRequest())).response.case;
}

async function tlsHealth(host: string, port: number, resolver?: () => Promise<ResolvedAddress[]>): Promise<string | undefined> {
  const sender = new TlsSender({ host, port, tls: pki.client, connectTimeoutMs: 20_000, ...(resolver ? { resolver } : {}) });
  cleanups.push(() => sender.close());
  return (await sender.send(healthRequest())).response.case;
}

describe("QUIC: every address of a name", () => {
  it("a name resolving to ::1 first reaches an orchestrator on 127.0.0.1", async () => {
    const orch = await startOrchestrator({ host: "127.0.0.1", port: 0, tls: pki.server });
    cleanups.push(() => orch.stop());
    expect(await quicHealth("orchestra.test", orch.port, resolvesTo(V6, V4))).toBe("health");
  }, 60_000);

  it("a name resolving to 127.0.0.1 first reaches an orchestrator on ::1", async () => {
    const orch = await startOrchestrator({ host: "::1", port: 0, tls: pki.server });
    cleanups.push(() => orch.stop());
    expect(await quicHealth("orchestra.test", orch.port, resolvesTo(V4, V6))).toBe("health");
  }, 60_000);

  it("starts the next address while the first is still pending (an address that never answers does not hold the connection)", async () => {
    const orch = await startOrchestrator({ host: "::1", port: 0, tls: pki.server });
    cleanups.push(() => orch.stop());
    // Something on 127.0.0.1 at the same port that takes the Initials and never answers (no ICMP).
    const silent = dgram.createSocket("udp4");
    let initials = 0;
    silent.on("message", () => initials++);
    await new Promise<void>((resolve) => silent.bind(orch.port, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => silent.close(() => resolve())));
    // The connect deadline is far beyond the test's: only the stagger can make this pass.
    const sender = new QuicSender({ host: "orchestra.test", port: orch.port, tls: pki.client, connectTimeoutMs: 600_000, resolver: resolvesTo(V4, V6) });
    cleanups.push(() => sender.close());
    expect((await sender.send(healthRequest())).response.case).toBe("health");
    expect(initials).toBeGreaterThan(0);
  }, 60_000);

  it("the IPv6 literal ::1 reaches an orchestrator listening on ::1", async () => {
    const orch = await startOrchestrator({ host: "::1", port: 0, tls: pki.server });
    cleanups.push(() => orch.stop());
    expect(orch.address).toBe(`[::1]:${orch.port}`);
    expect(await quicHealth("::1", orch.port)).toBe("health");
  }, 60_000);

  it("localhost reaches an orchestrator on 127.0.0.1 with the system resolver", async () => {
    const orch = await startOrchestrator({ host: "127.0.0.1", port: 0, tls: pki.server });
    cleanups.push(() => orch.stop());
    expect(await quicHealth("localhost", orch.port)).toBe("health");
  }, 60_000);
});

describe("TLS: every address of a name", () => {
  it("a name resolving to ::1 first reaches an orchestrator on 127.0.0.1", async () => {
    const orch = await startTlsOrchestrator({ host: "127.0.0.1", port: 0, tls: pki.server });
    cleanups.push(() => orch.stop());
    expect(await tlsHealth("orchestra.test", orch.port, resolvesTo(V6, V4))).toBe("health");
  }, 60_000);

  it("a name resolving to 127.0.0.1 first reaches an orchestrator on ::1", async () => {
    const orch = await startTlsOrchestrator({ host: "::1", port: 0, tls: pki.server });
    cleanups.push(() => orch.stop());
    expect(await tlsHealth("orchestra.test", orch.port, resolvesTo(V4, V6))).toBe("health");
  }, 60_000);
});

describe("serve --orchestrator-addr [::1]:port", () => {
  beforeAll(() => requireBuiltCli());

  it("answers tools/list through an orchestrator process listening on [::1]", async () => {
    const certs = await tempDir();
    cleanups.push(certs.remove);
    const orch = await startOrchestratorProcess(certs.path, ["--listen", "[::1]:0"]);
    cleanups.push(orch.stop);
    expect(orch.address).toMatch(/^\[::1\]:\d+$/);
    const bridge = await connectBridge(["--orchestrator-addr", orch.address, "--certs-dir", certs.path]);
    cleanups.push(bridge.close);
    const tools = (await bridge.client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain("echo");
  }, 90_000);
});
