/**
 * QUIC calls through a lossy link: every call must complete with the right answer.
 *
 * Guards the install-time patch of @matrixai/quic (patches/@matrixai+quic+2.0.9.patch, see
 * docs/quic-loss-recovery.md). Without it, quiche 0.18 forgets a stream whose data was acked
 * while its FIN, sent alone in a later packet, was lost; the client's read never finishes, and
 * at 2 % server→client loss a call hangs every 10–200 calls.
 *
 * Self-contained on purpose: a tiny echo server and client written against @matrixai/quic with
 * the project's framing ([u32 big-endian length][payload], one bidirectional stream per call),
 * so this tests the library + patch, not the project's QuicSender. Certificates are Ed25519,
 * made with the `openssl` CLI in a temporary directory (the suite is skipped without openssl).
 *
 * Size: LOSS_CALLS calls sequentially and LOSS_CALLS with 64 in flight (default 500 each, which
 * runs in well under 30 s on 2 busy cores). The target is 5,000 each:
 * `LOSS_CALLS=5000 npx vitest run test/e2e/quic-loss.test.ts`.
 */
import { execFileSync } from "node:child_process";
import { randomBytes, webcrypto } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Logger, { LogLevel, StreamHandler } from "@matrixai/logger";
import { QUICClient, QUICServer, events, type QUICConnection, type QUICStream } from "@matrixai/quic";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServerCrypto } from "../helpers/quic/library.js";
import { UdpLossProxy } from "../helpers/udp-loss-proxy.js";
import { requireCommand, skipTitle } from "../helpers/requires.js";

const opensslMissing = requireCommand("openssl", ["version"]);

/** Calls per scenario; the target is 5,000 (set LOSS_CALLS=5000). */
const CALLS = Number(process.env.LOSS_CALLS ?? 500);
/** Fraction of datagrams dropped in each direction once connected. */
const LOSS = 0.02;
const IN_FLIGHT = 64;
/**
 * A call not finished after this long counts as hung. Generous: with loss, quiche's probe
 * timeouts back off exponentially, and the machine may be busy.
 */
const CALL_DEADLINE_MS = 10_000;
/** Stop a scenario after this many hung calls, so a regression fails in ~30 s, not hours. */
const MAX_HUNG = 3;
const ALPN = "orchestra-plugin";

interface Pem {
  ca: string;
  serverKey: string;
  serverCert: string;
  clientKey: string;
  clientCert: string;
}

/** A throw-away Ed25519 CA with a server leaf (SAN localhost, 127.0.0.1) and a client leaf. */
function makeCerts(dir: string): Pem {
  const run = (args: string[]): void => {
    execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  };
  writeFileSync(
    path.join(dir, "leaf.ext"),
    [
      "basicConstraints=critical,CA:FALSE",
      "keyUsage=critical,digitalSignature",
      "extendedKeyUsage=serverAuth,clientAuth",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
      "subjectKeyIdentifier=hash",
      "authorityKeyIdentifier=keyid",
      "",
    ].join("\n"),
  );
  run(["genpkey", "-algorithm", "ed25519", "-out", "ca.key"]);
  run([
    "req",
    "-x509",
    "-new",
    "-key",
    "ca.key",
    "-days",
    "2",
    "-subj",
    "/CN=quic-loss-test-ca",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
    "-out",
    "ca.crt",
  ]);
  for (const role of ["server", "client"]) {
    run(["genpkey", "-algorithm", "ed25519", "-out", `${role}.key`]);
    run(["req", "-new", "-key", `${role}.key`, "-subj", `/CN=quic-loss-${role}`, "-out", `${role}.csr`]);
    run(["x509", "-req", "-in", `${role}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2", "-extfile", "leaf.ext", "-out", `${role}.crt`]);
  }
  const r = (f: string): string => readFileSync(path.join(dir, f), "utf8");
  return {
    ca: r("ca.crt"),
    serverKey: r("server.key"),
    serverCert: r("server.crt"),
    clientKey: r("client.key"),
    clientCert: r("client.crt"),
  };
}

const clientCrypto = {
  ops: {
    async randomBytes(data: ArrayBuffer): Promise<void> {
      webcrypto.getRandomValues(new Uint8Array(data));
    },
  },
};

function frame(payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + payload.byteLength);
  new DataView(out.buffer).setUint32(0, payload.byteLength, false);
  out.set(payload, 4);
  return out;
}

/**
 * Reads the stream to its end (the peer's FIN) and returns the one frame's payload.
 * Deliberately waits for the FIN rather than stopping after a complete frame: the lost-FIN hang
 * is exactly what this test must see.
 * @throws {Error} if the bytes are not exactly one frame.
 */
async function readToEnd(stream: QUICStream): Promise<Uint8Array> {
  const reader = stream.readable.getReader();
  const chunks: Uint8Array[] = [];
  let n = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
      n += value.byteLength;
    }
  } finally {
    reader.releaseLock();
  }
  const buf = Buffer.concat(chunks, n);
  if (buf.length < 4 || buf.readUInt32BE(0) !== buf.length - 4) {
    throw new Error(`not exactly one frame: ${buf.length} bytes`);
  }
  return buf.subarray(4);
}

/** Writes one frame and closes, in the same event-loop turn (so the FIN leaves with the data). */
async function writeAndClose(stream: QUICStream, payload: Uint8Array): Promise<void> {
  const writer = stream.writable.getWriter();
  await Promise.all([writer.write(frame(payload)), writer.close()]);
}

/** The server's answer: the request reversed (so a misrouted or stale answer is caught). */
function answerOf(request: Uint8Array): Uint8Array {
  return Uint8Array.from(request).reverse();
}

type Outcome = { kind: "ok" } | { kind: "wrong"; detail: string } | { kind: "hung" } | { kind: "error"; detail: string };

/** One call: new stream, request frame, wait (bounded) for the answer frame and the FIN. */
async function call(conn: QUICConnection, i: number): Promise<Outcome> {
  const request = Buffer.concat([Buffer.from(`call-${i}-`), randomBytes(80)]);
  let stream: QUICStream;
  try {
    stream = conn.newStream("bidi");
  } catch (e) {
    return { kind: "error", detail: `call ${i}: newStream: ${String(e)}` };
  }
  const answerP = readToEnd(stream);
  answerP.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<"hung">((resolve) => {
    timer = setTimeout(() => resolve("hung"), CALL_DEADLINE_MS);
  });
  try {
    await writeAndClose(stream, request);
    const answer = await Promise.race([answerP, deadline]);
    if (answer === "hung") {
      stream.cancel(new Error("call deadline"));
      return { kind: "hung" };
    }
    return Buffer.from(answer).equals(answerOf(request)) ? { kind: "ok" } : { kind: "wrong", detail: `call ${i}: got ${answer.byteLength} bytes` };
  } catch (e) {
    return { kind: "error", detail: `call ${i}: ${String(e)}` };
  } finally {
    clearTimeout(timer);
  }
}

interface Tally {
  ok: number;
  hung: number;
  problems: string[];
}

/** Runs `total` calls with `inFlight` workers; stops early after MAX_HUNG hung calls. */
async function runCalls(conn: QUICConnection, total: number, inFlight: number): Promise<Tally> {
  const t: Tally = { ok: 0, hung: 0, problems: [] };
  let issued = 0;
  const worker = async (): Promise<void> => {
    while (issued < total && t.hung < MAX_HUNG) {
      const i = issued++;
      const r = await call(conn, i);
      if (r.kind === "ok") t.ok++;
      else if (r.kind === "hung") {
        t.hung++;
        t.problems.push(`call ${i}: no answer/FIN within ${CALL_DEADLINE_MS} ms`);
      } else t.problems.push(r.detail);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return t;
}

describe.skipIf(opensslMissing !== undefined)(skipTitle(`@matrixai/quic over a link losing ${LOSS * 100} % of datagrams each way`, opensslMissing), () => {
  let dir: string | undefined;
  let server: QUICServer | undefined;
  let client: QUICClient | undefined;
  let proxy: UdpLossProxy | undefined;
  const logger = new Logger("quic-loss", LogLevel.ERROR, [new StreamHandler()]);

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "quic-loss-"));
    const pem = makeCerts(dir);
    server = new QUICServer({
      crypto: await createServerCrypto(),
      config: {
        key: pem.serverKey,
        cert: pem.serverCert,
        ca: pem.ca,
        verifyPeer: true,
        applicationProtos: [ALPN],
        maxIdleTimeout: 30_000,
        keepAliveIntervalTime: 1_000,
        // Enough stream credit for every call: MAX_STREAMS updates are not what this tests.
        initialMaxStreamsBidi: 2 * CALLS + 1_000,
      },
      logger: logger.getChild("server"),
    });
    // The library's typings give listeners a plain `Event`; `detail` is the new connection/stream.
    server.addEventListener(events.EventQUICServerConnection.name, (evt: Event) => {
      const conn = (evt as unknown as { detail: QUICConnection }).detail;
      conn.addEventListener(events.EventQUICConnectionStream.name, (se: Event) => {
        const stream = (se as unknown as { detail: QUICStream }).detail;
        void (async () => {
          try {
            await writeAndClose(stream, answerOf(await readToEnd(stream)));
          } catch (e) {
            try {
              stream.cancel(e);
            } catch {
              // already closed: nothing to release
            }
          }
        })();
      });
    });
    await server.start({ host: "127.0.0.1", port: 0 });
    proxy = await UdpLossProxy.start({ targetPort: server.port, seed: 20240601 });
    client = await QUICClient.createQUICClient(
      {
        host: "127.0.0.1",
        port: proxy.port,
        localHost: "127.0.0.1",
        serverName: "localhost",
        crypto: clientCrypto,
        config: {
          ca: pem.ca,
          key: pem.clientKey,
          cert: pem.clientCert,
          verifyPeer: true,
          applicationProtos: [ALPN],
          maxIdleTimeout: 30_000,
          keepAliveIntervalTime: 1_000,
        },
        logger: logger.getChild("client"),
      },
      { timer: 10_000 },
    );
    // Loss starts once connected: handshake loss recovery is not the subject here.
    proxy.setLoss({ clientToServer: LOSS, serverToClient: LOSS });
  });

  afterAll(async () => {
    proxy?.setLoss({ clientToServer: 0, serverToClient: 0 });
    await client?.destroy({ force: true });
    await server?.stop({ force: true });
    await proxy?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`${CALLS} sequential calls all complete with the right answer`, async () => {
    const before = proxy!.stats();
    const t = await runCalls(client!.connection, CALLS, 1);
    expect(t.problems).toEqual([]);
    expect(t.ok).toBe(CALLS);
    const after = proxy!.stats();
    // The link really was lossy in both directions during the run.
    expect(after.serverToClient.dropped).toBeGreaterThan(before.serverToClient.dropped);
    expect(after.clientToServer.dropped).toBeGreaterThan(before.clientToServer.dropped);
  }, 300_000);

  it(`${CALLS} calls with ${IN_FLIGHT} in flight all complete with the right answer`, async () => {
    const before = proxy!.stats();
    const t = await runCalls(client!.connection, CALLS, IN_FLIGHT);
    expect(t.problems).toEqual([]);
    expect(t.ok).toBe(CALLS);
    const after = proxy!.stats();
    expect(after.serverToClient.dropped).toBeGreaterThan(before.serverToClient.dropped);
    expect(after.clientToServer.dropped).toBeGreaterThan(before.clientToServer.dropped);
  }, 300_000);
});
