/**
 * The TLS reference orchestrator's bounds on connections that never authenticate, with real
 * TCP sockets on loopback: a connection whose TLS handshake does not complete in time is
 * closed, and only `maxHandshakes` connections may be handshaking at once.
 */
import net from "node:net";
import { beforeAll, describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../helpers/cleanups.js";
import { startTlsOrchestrator } from "../../src/orchestrator/tls-server.js";
import { TlsSender } from "../../src/tls/tls-link.js";
import { healthRequest, makePki, type TestPki } from "../helpers/quic/index.js";
import { waitFor } from "../helpers/transport.js";

let pki: TestPki;
const cleanups = cleanupsAfterEach();
beforeAll(async () => {
  pki = await makePki();
});

/** A TCP connection that sends nothing; `closed` resolves when the server ends it. */
async function silentClient(port: number, localAddress = "127.0.0.1"): Promise<{ socket: net.Socket; closed: Promise<void> }> {
  const socket = net.connect({ port, host: "127.0.0.1", localAddress });
  cleanups.push(() => socket.destroy());
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.on("error", () => {}); // a reset by the server is the expected end
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  return { socket, closed };
}

describe("TLS orchestrator: unauthenticated connections", () => {
  it("closes a TCP connection whose TLS handshake times out", async () => {
    const server = await startTlsOrchestrator({ tls: pki.server, handshakeTimeoutMs: 300 });
    cleanups.push(() => server.stop());
    const client = await silentClient(server.port);
    // Generous bound for a loaded machine; without the fix the socket stays open for good.
    await waitFor(() => client.socket.closed, "the server closing the silent connection", 15_000);
  }, 30_000);

  it("keeps at most maxHandshakesPerAddress connections of one address handshaking; another address still gets in", async () => {
    const server = await startTlsOrchestrator({ tls: pki.server, handshakeTimeoutMs: 60_000, maxHandshakesPerAddress: 2 });
    cleanups.push(() => server.stop());
    const held = [await silentClient(server.port, "127.0.0.2"), await silentClient(server.port, "127.0.0.2")];
    const extra = await silentClient(server.port, "127.0.0.2");
    await waitFor(() => extra.socket.closed, "the connection past the address's cap being closed", 15_000);
    expect(server.stats.handshakesRefused).toBe(1);
    const other = await silentClient(server.port, "127.0.0.3");
    let closed = 0;
    for (const h of [...held, other]) void h.closed.then(() => closed++);
    await new Promise((r) => setTimeout(r, 200));
    expect(closed).toBe(0);
    expect(server.stats.handshakesRefused).toBe(1);
  }, 30_000);

  it("when the global cap is full of one address's silent connections, closes its oldest to let another address's bridge in", async () => {
    const server = await startTlsOrchestrator({ tls: pki.server, handshakeTimeoutMs: 60_000, maxHandshakes: 4 });
    cleanups.push(() => server.stop());
    const held = [];
    for (let i = 0; i < 4; i++) held.push(await silentClient(server.port, "127.0.0.2"));
    // The busiest address does not evict its own: a fifth from it is refused.
    const extra = await silentClient(server.port, "127.0.0.2");
    await waitFor(() => extra.socket.closed, "the attacker's connection past the cap being closed", 15_000);
    const sender = new TlsSender({ host: "127.0.0.1", port: server.port, tls: pki.client });
    cleanups.push(() => sender.close());
    const answer = await sender.send(healthRequest());
    expect(answer.response.case).toBe("health");
    await waitFor(() => held[0]!.socket.closed, "the oldest silent connection being closed", 15_000);
    expect(held.slice(1).every((h) => !h.socket.closed)).toBe(true);
  }, 60_000);

  it("keeps at most maxHandshakes connections handshaking; one past the cap is closed at once, the others are not", async () => {
    const server = await startTlsOrchestrator({ tls: pki.server, handshakeTimeoutMs: 60_000, maxHandshakes: 3 });
    cleanups.push(() => server.stop());
    const held = [];
    for (let i = 0; i < 3; i++) held.push(await silentClient(server.port));
    const extra = await silentClient(server.port);
    await waitFor(() => extra.socket.closed, "the connection past the cap being closed", 15_000);
    expect(server.stats.handshakesRefused).toBe(1);
    let heldClosed = 0;
    for (const h of held) void h.closed.then(() => heldClosed++);
    await new Promise((r) => setTimeout(r, 200));
    expect(heldClosed).toBe(0);

    // Once the silent ones are gone, an authenticated client gets in.
    for (const h of held) h.socket.destroy();
    await Promise.all(held.map((h) => h.closed));
    const sender = new TlsSender({ host: "127.0.0.1", port: server.port, tls: pki.client });
    cleanups.push(() => sender.close());
    // The server may not have seen the closes yet: retry until the cap has room.
    let answer;
    for (let attempt = 0; ; attempt++) {
      try {
        answer = await sender.send(healthRequest());
        break;
      } catch (e) {
        if (attempt > 20) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    expect(answer.response.case).toBe("health");
  }, 60_000);
});
