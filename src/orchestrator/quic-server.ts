/**
 * The reference orchestrator over QUIC (orchestra-protocol.md, "Transport", "Framing and RPC
 * shape"): the transport adapter of ./rpc-server.ts on the project's QUIC engine (src/quic/engine:
 * quiche driven directly, no web streams; docs/quic-performance.md), with mutual TLS against the
 * cert store's CA.
 *
 * One RPC per client-opened bidirectional stream: its first frame is the `PluginRequest`, answered
 * by one `PluginResponse` frame (echoing `request_id`) and the FIN; a streaming kind
 * (`stream_start`, `subscribe`) writes its frames as they come, the last one (if any) with the
 * FIN. What is served is in ./dispatch.ts; decoding, the size policy and the counters are the core's.
 * During a streaming RPC a second frame `stream_cancel`, or a reset of the stream, cancels it; any
 * other second frame is malformed. Tool-set changes are published on the `tools` topic.
 *
 * Where the core fails a call ({@link CallFault}), the stream is reset (RESET_STREAM +
 * STOP_SENDING) with a {@link StreamCode}, the server staying up:
 * - a frame declaring more than 16 MiB → `FRAME_TOO_LARGE` (3), raised once the 4-byte header
 *   is read, nothing buffered; a response that would exceed 16 MiB and is no `tool_call` likewise;
 * - a truncated frame, undecodable protobuf or stray frame → `MALFORMED` (4);
 * - a failing handler → `INTERNAL` (6); `stop()` → `SHUTDOWN` (7), sent before the CONNECTION_CLOSE;
 * - a `subscribe` ending without a last frame → `NONE` (0).
 * An answered stream whose request FIN has not arrived gets {@link FIN_GRACE_MS}, then STOP_SENDING.
 */
import { createHmac } from "node:crypto";
import { performance } from "node:perf_hooks";
import { FrameError, FrameTooLargeError } from "../framing/frame.js";
import { ALPN, isLoopbackHost, StreamCode, udpPayloadConfig } from "../quic/quic-common.js";
import { QuicServerEndpoint, type QuicStream } from "../quic/engine/index.js";
import { FramedStream } from "../quic/framed-stream.js";
import type { PluginRequest } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { decodeRequest, DEFAULT_MAX_STREAMS, positiveInteger, startServer } from "./rpc-server.js";
import type { CallFault, CallLink, OrchestratorBaseOptions, RpcCall, RpcServer, RunningOrchestrator } from "./rpc-server.js";

export { DEFAULT_MAX_STREAMS };
export type { OrchestratorStats, RunningOrchestrator } from "./rpc-server.js";

/** Options of {@link startOrchestrator}. */
export interface OrchestratorOptions extends OrchestratorBaseOptions {
  /** Concurrent bidirectional streams granted to each client (`initialMaxStreamsBidi`, default 1000). */
  maxStreams?: number;
  /** QUIC max idle timeout in ms (default 300 000, like existing parties). */
  idleTimeoutMs?: number;
  /** Keep-alive interval in ms (default 15 000; must be below the idle timeout). */
  keepAliveMs?: number;
  /**
   * Largest UDP datagram payload to send, in bytes (1200..65527). Default: 16 KiB when listening
   * on loopback (every client is then local), else 1350 (quiche's default).
   */
  udpPayloadBytes?: number;
}

/** How long an answered stream waits for the client's FIN before reading stops (ms). */
const FIN_GRACE_MS = 5_000;

/** The stream code each {@link CallFault} resets the stream with. */
const FAULT_CODES: Record<CallFault, StreamCode> = {
  malformed: StreamCode.MALFORMED,
  frame_too_large: StreamCode.FRAME_TOO_LARGE,
  internal: StreamCode.INTERNAL,
  shutdown: StreamCode.SHUTDOWN,
  end: StreamCode.NONE,
};

/**
 * Starts the reference orchestrator on QUIC.
 * @throws CertStoreError when the cert store cannot be used; RangeError for bad options;
 *   the socket error when the UDP port cannot be bound; Error when quiche cannot load the TLS material
 */
export async function startOrchestrator(options: OrchestratorOptions = {}): Promise<RunningOrchestrator> {
  const idleTimeoutMs = options.idleTimeoutMs ?? 300_000;
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  const maxStreams = positiveInteger("maxStreams", options.maxStreams ?? DEFAULT_MAX_STREAMS);
  if (!(idleTimeoutMs > 0) || !(keepAliveMs > 0) || keepAliveMs >= idleTimeoutMs) {
    throw new RangeError(`keepAliveMs (${keepAliveMs}) must be positive and below idleTimeoutMs (${idleTimeoutMs})`);
  }
  return startServer(options, "orchestrator", { streaming: true }, async ({ rpc, log, material: tls, listenHost }) => {
    const udp = udpPayloadConfig(isLoopbackHost(listenHost), options.udpPayloadBytes);
    // Mutual TLS: the client must present a certificate signed by our CA. 4 MiB UDP socket buffers.
    const server = await QuicServerEndpoint.listen({
      host: listenHost,
      port: options.port ?? 0,
      tls,
      alpn: [ALPN],
      idleTimeoutMs,
      keepAliveMs,
      maxStreamsBidi: maxStreams,
      refusedStreamCode: StreamCode.UNSUPPORTED,
      maxSendUdpPayload: udp.maxSendUdpPayloadSize,
      maxRecvUdpPayload: udp.maxRecvUdpPayloadSize,
      // Stable across restarts with the same key: a restarted orchestrator answers its clients'
      // old connections with a stateless reset, so they reconnect at once (RFC 9000 §10.3).
      statelessResetSecret: createHmac("sha256", tls.keyPem).update("orchestra-stdio stateless reset v1").digest(),
    });
    Object.defineProperty(rpc.stats, "handshakesRefused", { enumerable: true, get: () => server.initialsRefused });
    const fins = new FinWaits();
    server.onConnection = (conn) => {
      rpc.stats.connections++;
      conn.onStream = (stream) => serveStream(rpc, new FramedStream(stream), fins);
      conn.onClose = (info) => {
        if (info.kind !== "local") log.debug({ reason: info }, "client connection closed");
      };
    };
    // Connection failures before the handshake completed (e.g. a refused client certificate).
    server.onHandshakeFailure = (info) => {
      log.debug({ reason: info }, "client handshake failed");
    };
    return {
      ...server.address,
      close: async () => {
        // The core reset every unanswered stream with SHUTDOWN: send those before the CONNECTION_CLOSE.
        for (const conn of server.connections()) conn.sendNow();
        await server.close(0, "orchestrator stopping");
      },
    };
  });
}

/** One RPC's stream as the core's {@link CallLink}. */
class StreamLink implements CallLink {
  constructor(
    private readonly stream: FramedStream,
    private readonly fins: FinWaits,
  ) {}

  write(frame: Uint8Array, last: boolean): boolean {
    if (this.stream.writeFinished) return false;
    try {
      this.stream.writeFrame(frame, last);
      return true;
    } catch {
      return false; // reset by the client or the connection closed
    }
  }

  fail(fault: CallFault): void {
    this.stream.reset(FAULT_CODES[fault]);
  }

  done(responded: boolean): void {
    if (responded && !this.stream.readFinished) this.fins.add(this.stream.stream);
  }
}

/**
 * Maps one client-opened stream's events onto a call: the first frame is the request; a second
 * frame is only allowed during a streaming RPC (`stream_cancel`); the FIN is expected right after
 * the request.
 */
function serveStream(rpc: RpcServer, stream: FramedStream, fins: FinWaits): void {
  const call = rpc.open(new StreamLink(stream, fins));
  stream.onFrame = (payload) => {
    if (stream.framesRead === 1) {
      const request = decodeRequest(payload);
      if (request instanceof Error) call.refuse("malformed");
      else call.serve(request);
    } else onExtraFrame(call, stream, payload);
  };
  stream.onReadEnd = (error) => {
    if (!error) {
      if (stream.framesRead === 0) call.refuse("malformed");
      return; // FIN after the request: nothing to do
    }
    if (error instanceof FrameTooLargeError) call.refuse("frame_too_large");
    else if (error instanceof FrameError)
      call.refuse("malformed"); // truncated: before the request, or trailing bytes after it
    else call.cancel("client cancelled the stream");
  };
  stream.onWriteError = () => call.cancel("client cancelled the stream");
}

function onExtraFrame(call: RpcCall, stream: FramedStream, payload: Uint8Array): void {
  if (call.streaming && stream.framesRead === 2 && isStreamCancel(decodeRequest(payload))) {
    call.cancel("client sent stream_cancel");
    return;
  }
  call.refuse("malformed");
}

function isStreamCancel(request: PluginRequest | Error): boolean {
  return !(request instanceof Error) && request.request.case === "streamCancel";
}

/**
 * Answered streams still waiting for the client's FIN, in deadline order, under one shared
 * timer: after {@link FIN_GRACE_MS} reading stops (STOP_SENDING) so the stream's state is
 * released even if the FIN never comes.
 */
class FinWaits {
  private waits: Array<{ stream: QuicStream; deadline: number }> = [];
  private timer: NodeJS.Timeout | undefined;

  add(stream: QuicStream): void {
    this.waits.push({ stream, deadline: performance.now() + FIN_GRACE_MS });
    if (!this.timer) this.arm(FIN_GRACE_MS);
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const now = performance.now();
      let i = 0;
      while (i < this.waits.length && this.waits[i]!.deadline <= now + 1) {
        const { stream } = this.waits[i]!;
        if (!stream.readFinished) stream.stopReading(StreamCode.NONE);
        i++;
      }
      this.waits = this.waits.slice(i);
      const head = this.waits[0];
      if (head) this.arm(Math.max(10, head.deadline - now));
    }, ms);
    this.timer.unref();
  }
}
