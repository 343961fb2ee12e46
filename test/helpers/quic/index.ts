/**
 * Helpers for QUIC tests: throw-away PKIs, request builders, and a raw QUIC client that can put
 * arbitrary bytes on a stream (to test the server's handling of bad frames).
 */
import { create } from "@bufbuild/protobuf";
import type { JsonObject } from "@bufbuild/protobuf";
import { QUICClient, QUICServer, events, type QUICConnection, type QUICStream } from "@matrixai/quic";
import { PluginRequestSchema, type PluginRequest } from "../../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { createEphemeralPki, type TlsMaterial } from "../../../src/pki/store.js";
import { ALPN } from "../../../src/quic/quic-common.js";
import { clientCrypto, codeToReason, createServerCrypto, quietQuicLogger, readOneFrame, reasonToCode, StreamResetByPeer } from "./library.js";

export const ORCH = "orchestrator";
export const CLIENT = "transport.stdio-client";

/** A CA with an orchestrator and a client leaf, as TLS material for each side. */
export interface TestPki {
  server: TlsMaterial;
  client: TlsMaterial;
}

/** Creates a fresh in-memory PKI (nothing on disk). */
export async function makePki(): Promise<TestPki> {
  const pki = await createEphemeralPki([ORCH, CLIENT]);
  return {
    server: { caPem: pki.caPem, ...pki.leaves[ORCH]! },
    client: { caPem: pki.caPem, ...pki.leaves[CLIENT]! },
  };
}

let n = 0;
/** A unique request id for tests. */
export function rid(prefix = "req"): string {
  return `${prefix}-${process.pid}-${++n}`;
}

export function healthRequest(requestId = rid("health")): PluginRequest {
  return create(PluginRequestSchema, { requestId, request: { case: "health", value: {} } });
}

export function listToolsRequest(requestId = rid("list")): PluginRequest {
  return create(PluginRequestSchema, { requestId, request: { case: "listTools", value: {} } });
}

export function toolCallRequest(toolName: string, args: JsonObject, requestId = rid("call")): PluginRequest {
  return create(PluginRequestSchema, {
    requestId,
    request: { case: "toolCall", value: { toolName, arguments: args, callerPlugin: "test" } },
  });
}

/** What a raw stream ended with. */
export type RawOutcome = { kind: "data"; bytes: Uint8Array } | { kind: "reset"; code: number } | { kind: "error"; error: unknown };

/** A bare QUIC client (same TLS/ALPN as QuicSender) writing arbitrary bytes. */
export class RawQuicClient {
  private constructor(private readonly client: QUICClient) {}

  static async connect(port: number, tls: TlsMaterial, host = "127.0.0.1"): Promise<RawQuicClient> {
    const client = await QUICClient.createQUICClient(
      {
        host,
        port,
        serverName: "localhost",
        localHost: "127.0.0.1",
        crypto: clientCrypto,
        config: {
          ca: tls.caPem,
          cert: tls.certPem,
          key: tls.keyPem,
          verifyPeer: true,
          applicationProtos: [ALPN],
          maxIdleTimeout: 10_000,
          keepAliveIntervalTime: 2_000,
        },
        reasonToCode,
        codeToReason,
        logger: quietQuicLogger("raw-client"),
      },
      { timer: 5_000 },
    );
    return new RawQuicClient(client);
  }

  /**
   * Opens a stream, writes `chunks` then FIN (unless `fin` is false), and collects the reply
   * until the server finishes or resets the stream.
   */
  async exchange(chunks: Uint8Array[], fin = true): Promise<RawOutcome> {
    const stream: QUICStream = this.client.connection.newStream("bidi");
    const writer = stream.writable.getWriter();
    const writes = chunks.map((c) => writer.write(c));
    if (fin) writes.push(writer.close());
    for (const w of writes) w.catch(() => {});
    const reader = stream.readable.getReader();
    const parts: Uint8Array[] = [];
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parts.push(value);
      }
    } catch (e) {
      try {
        stream.cancel();
      } catch {
        /* gone */
      }
      if (e instanceof StreamResetByPeer) return { kind: "reset", code: e.code };
      return { kind: "error", error: e };
    }
    return { kind: "data", bytes: Buffer.concat(parts) };
  }

  async close(): Promise<void> {
    await this.client.destroy({ isApp: true, errorCode: 0, force: true });
  }
}

/** How a {@link ScriptedQuicServer} answers one request stream. */
export type StreamScript = (stream: QUICStream, request: Uint8Array) => Promise<void>;

/**
 * A bare QUIC server (same TLS/ALPN as the orchestrator) whose answers are scripted per test,
 * to exercise the client against misbehaving servers.
 */
export class ScriptedQuicServer {
  script: StreamScript = async () => {};
  private constructor(private readonly server: QUICServer) {}

  get port(): number {
    return Number(this.server.port);
  }

  static async start(tls: TlsMaterial): Promise<ScriptedQuicServer> {
    const server = new QUICServer({
      crypto: await createServerCrypto(),
      config: {
        key: tls.keyPem,
        cert: tls.certPem,
        ca: tls.caPem,
        verifyPeer: true,
        applicationProtos: [ALPN],
        maxIdleTimeout: 10_000,
        keepAliveIntervalTime: 2_000,
      },
      reasonToCode,
      codeToReason,
      logger: quietQuicLogger("scripted-server"),
    });
    const self = new ScriptedQuicServer(server);
    server.addEventListener(events.EventQUICServerConnection.name, (evt: Event) => {
      const conn = (evt as unknown as { detail: QUICConnection }).detail;
      conn.addEventListener(events.EventQUICConnectionStream.name, (se: Event) => {
        const stream = (se as unknown as { detail: QUICStream }).detail;
        void (async () => {
          const reader = stream.readable.getReader();
          const { payload } = await readOneFrame(reader);
          reader.releaseLock();
          await self.script(stream, payload);
        })().catch(() => {});
      });
    });
    await server.start({ host: "127.0.0.1", port: 0 });
    return self;
  }

  async stop(): Promise<void> {
    await this.server.stop({ isApp: true, errorCode: 0, force: true });
  }
}
