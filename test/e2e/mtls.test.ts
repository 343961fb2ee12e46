/**
 * Mutual TLS between QuicSender and the reference orchestrator: one private CA, both directions
 * verified (orchestra-protocol.md, "Transport").
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { PluginRequestSchema } from "../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { BRIDGE_CERT_NAME, ensureCertStore } from "../../src/pki/store.js";
import { QuicSender } from "../../src/quic/quic-link.js";
import { SenderError } from "../../src/transport/sender.js";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/quic-server.js";
import { healthRequest, makePki, type TestPki } from "../helpers/quic/index.js";

async function rejection(p: Promise<unknown>): Promise<SenderError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(SenderError);
    return e as SenderError;
  }
  throw new Error("expected the call to be refused");
}

let good: TestPki;
let evil: TestPki;
let server: RunningOrchestrator;

beforeAll(async () => {
  [good, evil] = await Promise.all([makePki(), makePki()]);
  server = await startOrchestrator({ tls: good.server });
});
afterAll(async () => {
  await server?.stop();
});

describe("mutual TLS", () => {
  it("a client with a certificate from the same CA is served (control)", async () => {
    const s = new QuicSender({ host: "127.0.0.1", port: server.port, tls: good.client });
    try {
      expect((await s.send(healthRequest())).response.case).toBe("health");
    } finally {
      await s.close();
    }
  });

  it("the server refuses a client whose certificate another CA signed", async () => {
    const completed = server.stats.streamsCompleted;
    // Trusts the right CA (so the server itself is accepted) but presents a foreign certificate.
    const s = new QuicSender({
      host: "127.0.0.1",
      port: server.port,
      tls: { caPem: good.client.caPem, certPem: evil.client.certPem, keyPem: evil.client.keyPem },
      connectTimeoutMs: 3_000,
    });
    try {
      const e = await rejection(s.send(healthRequest(), { timeoutMs: 10_000 }));
      expect(e.kind).toBe("connect");
      expect(e.message).toContain(`127.0.0.1:${server.port}`);
      expect(e.message).toMatch(/TLS/);
      expect(e.message).toMatch(/the orchestrator does not trust our client certificate: another CA signed it \(unknown_ca, TLS alert 48\)/);
      expect(server.stats.streamsCompleted).toBe(completed);
    } finally {
      await s.close();
    }
  });

  it("QuicSender refuses a server whose certificate another CA signed", async () => {
    const rogue = await startOrchestrator({ tls: evil.server });
    const s = new QuicSender({ host: "127.0.0.1", port: rogue.port, tls: good.client, connectTimeoutMs: 3_000 });
    try {
      const e = await rejection(s.send(healthRequest(), { timeoutMs: 10_000 }));
      expect(e.kind).toBe("connect");
      expect(e.message).toBe(
        `orchestrator 127.0.0.1:${rogue.port}: TLS handshake failed: the orchestrator's certificate is not signed by our CA (unknown_ca, TLS alert 48): check --certs-dir`,
      );
      expect(e.message).not.toMatch(/unreachable/);
      expect(rogue.stats.streamsOpened).toBe(0);
    } finally {
      await s.close();
      await rogue.stop();
    }
  });

  it("QuicSender refuses a server certificate that does not carry the expected server name", async () => {
    const s = new QuicSender({
      host: "127.0.0.1",
      port: server.port,
      tls: good.client,
      serverName: "not-the-orchestrator.example",
      connectTimeoutMs: 3_000,
    });
    try {
      const e = await rejection(s.send(healthRequest(), { timeoutMs: 10_000 }));
      expect(e.kind).toBe("connect");
      expect(e.message).toMatch(/: TLS handshake failed: the orchestrator's certificate was rejected \(bad_certificate, TLS alert 42\)/);
      expect(e.message).toContain('"not-the-orchestrator.example"');
      expect(e.message).toContain("--server-name");
      expect(e.message).not.toMatch(/unreachable/);
    } finally {
      await s.close();
    }
  });

  it("a streaming call names the TLS alert too (regression: the streams client reported only 'unreachable')", async () => {
    const rogue = await startOrchestrator({ tls: evil.server });
    const s = new QuicSender({ host: "127.0.0.1", port: rogue.port, tls: good.client, connectTimeoutMs: 3_000 });
    try {
      const subscribe = create(PluginRequestSchema, { requestId: "sub-1", request: { case: "subscribe", value: { topic: "tools", subscriptionId: "sub-1" } } });
      const e = await rejection(s.stream(subscribe, () => {}, { timeoutMs: 10_000 }));
      expect(e.kind).toBe("connect");
      expect(e.message).toMatch(/: TLS handshake failed: the orchestrator's certificate is not signed by our CA \(unknown_ca, TLS alert 48\)/);
      expect(e.message).not.toMatch(/unreachable/);
    } finally {
      await s.close();
      await rogue.stop();
    }
  });

  describe("with a shared cert store on disk", () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "orchestra-mtls-"));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it("orchestrator and bridge issue their certs from one CA and talk", async () => {
      const orch = await startOrchestrator({ certsDir: dir });
      const s = new QuicSender({ host: "localhost", port: orch.port, certsDir: dir });
      try {
        expect((await s.send(healthRequest())).response.case).toBe("health");
        const store = await ensureCertStore(dir, BRIDGE_CERT_NAME);
        expect(store.created).toEqual({ ca: false, cert: false }); // the sender created it
        expect(store.caPem).toBe(orch.caPem);
      } finally {
        await s.close();
        await orch.stop();
      }
    });
  });
});
