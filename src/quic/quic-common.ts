/**
 * Pieces shared by the QUIC client ({@link QuicSender}), the reference orchestrator's server and
 * the QUIC engine (./engine): ALPN, stream error codes, UDP payload settings.
 *
 * The @matrixai/quic helpers below (crypto callbacks, quiet logger, web-stream frame I/O,
 * `watchClientConnection`, `checkQuicPatched`) serve code that still drives the library's
 * JavaScript layer: today only the tests, which use it as an independent interop peer
 * (test/helpers/quic). They respect the library faults measured in /work/shared/quic-notes.md.
 */
import { webcrypto } from "node:crypto";
import net from "node:net";
import Logger, { Handler, LogLevel, type LogRecord } from "@matrixai/logger";
import { QUICConnection, events as quicEvents, type QUICClient, type QUICStream, type QUICClientCrypto, type QUICServerCrypto, type QUICConfig } from "@matrixai/quic";
import { childLogger, type Logger as PinoLogger } from "../log.js";
import { encodeFrameParts, FRAME_HEADER_BYTES, FrameDecoder, FrameError, MAX_FRAME_BYTES } from "./frame.js";

/** ALPN protocol id of the Orchestra plugin protocol (orchestra-protocol.md, "Transport"). */
export const ALPN = "orchestra-plugin";

/**
 * Application error codes carried by RESET_STREAM / STOP_SENDING on an RPC stream.
 * The protocol does not fix these; they are this implementation's choice and only inform the
 * peer's error message.
 */
export const StreamCode = {
  /** Graceful / no reason given. */
  NONE: 0,
  /** The client abandoned the RPC (abort signal). */
  CANCELLED: 1,
  /** The client's per-call deadline expired. */
  TIMEOUT: 2,
  /** A frame declared more than 16 MiB. */
  FRAME_TOO_LARGE: 3,
  /** The frame was truncated or its protobuf could not be decoded. */
  MALFORMED: 4,
  /** The server does not serve this `PluginRequest` kind. */
  UNSUPPORTED: 5,
  /** Any other local failure. */
  INTERNAL: 6,
  /** The endpoint is shutting down. */
  SHUTDOWN: 7,
} as const;
export type StreamCode = (typeof StreamCode)[keyof typeof StreamCode];

const CODE_NAMES: Record<number, string> = {
  0: "none",
  1: "cancelled",
  2: "timeout",
  3: "frame too large",
  4: "malformed frame",
  5: "unsupported request kind",
  6: "internal error",
  7: "shutting down",
};

/** Human name of a {@link StreamCode} (or `code N` for unknown values). */
export function streamCodeName(code: number): string {
  return CODE_NAMES[code] ?? `code ${code}`;
}

/** Reason passed to `stream.cancel()` locally; its {@link code} goes on the wire. */
export class StreamAbort extends Error {
  override readonly name = "StreamAbort";
  constructor(
    readonly code: StreamCode,
    message: string,
  ) {
    super(message);
  }
}

/** What a stream read/write rejects with when the *peer* reset or stopped the stream. */
export class StreamResetByPeer extends Error {
  override readonly name = "StreamResetByPeer";
  constructor(
    readonly direction: "read" | "write",
    readonly code: number,
  ) {
    super(`peer ${direction === "read" ? "reset" : "stopped"} the stream: ${streamCodeName(code)} (code ${code})`);
  }
}

/** `reasonToCode` for QUICClient/QUICServer: {@link StreamAbort} → its code, else INTERNAL/NONE. */
export function reasonToCode(_type: "read" | "write", reason?: unknown): number {
  if (reason instanceof StreamAbort) return reason.code;
  return reason === undefined ? StreamCode.NONE : StreamCode.INTERNAL;
}

/** `codeToReason` for QUICClient/QUICServer: a {@link StreamResetByPeer}. */
export function codeToReason(type: "read" | "write", code: number): StreamResetByPeer {
  return new StreamResetByPeer(type, code);
}

/** The library's (quiche's) default UDP payload size, safe on any path. */
export const DEFAULT_UDP_PAYLOAD_BYTES = 1350;

/**
 * UDP payload size used when both ends are on this host. Loopback has a 64 KiB MTU; 16 KiB
 * datagrams cut the per-packet CPU cost of the library several-fold for large frames (a 2 MiB
 * upload on loopback: ~5 s → ~0.7 s measured here).
 */
export const LOOPBACK_UDP_PAYLOAD_BYTES = 16 * 1024;

/** True for `localhost`, 127.0.0.0/8, `::1` and IPv4-mapped loopback addresses. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost") return true;
  if (net.isIPv4(h)) return h.startsWith("127.");
  if (net.isIPv6(h)) return h === "::1" || h === "0:0:0:0:0:0:0:1" || /^::ffff:127\./.test(h);
  return false;
}

/**
 * Datagram size settings: `bytes` if given, else {@link LOOPBACK_UDP_PAYLOAD_BYTES} on loopback
 * and the library default elsewhere. The receive limit (advertised to the peer as
 * `max_udp_payload_size`) is never below the loopback size, so a loopback peer may use it;
 * the sender side always also honours the peer's advertised limit.
 */
export function udpPayloadConfig(loopback: boolean, bytes?: number): Pick<QUICConfig, "maxSendUdpPayloadSize" | "maxRecvUdpPayloadSize"> {
  const send = bytes ?? (loopback ? LOOPBACK_UDP_PAYLOAD_BYTES : DEFAULT_UDP_PAYLOAD_BYTES);
  if (!Number.isInteger(send) || send < 1200 || send > 65527) {
    throw new RangeError(`UDP payload size must be an integer in 1200..65527, got ${String(bytes)}`);
  }
  return { maxSendUdpPayloadSize: send, maxRecvUdpPayloadSize: Math.max(send, LOOPBACK_UDP_PAYLOAD_BYTES) };
}

/** UDP socket buffer size {@link enlargeUdpBuffers} asks for (bytes; Linux caps it at net.core.rmem_max / wmem_max). */
export const UDP_SOCKET_BUFFER_BYTES = 4 * 1024 * 1024;

/**
 * Raises the receive and send buffers of the UDP socket inside a started `QUICClient` or
 * `QUICServer` to {@link UDP_SOCKET_BUFFER_BYTES}. The default (~208 KiB on Linux) overflows
 * when many streams burst on loopback; every dropped datagram then costs a loss-detection
 * round and retransmissions (quic-notes.md: "QUIC + 4 MiB UDP receive buffer"). Best effort:
 * reaches into library internals (`.socket.socket`, a `dgram.Socket`) and does nothing if they
 * are absent. Never throws.
 * @returns the receive buffer size now in effect, or `undefined` if it could not be set
 */
export function enlargeUdpBuffers(endpoint: object, bytes: number = UDP_SOCKET_BUFFER_BYTES): number | undefined {
  // Library boundary: `socket` (QUICSocket) and its `socket` (dgram.Socket) are protected.
  const dgram = (endpoint as { socket?: { socket?: Partial<import("node:dgram").Socket> } }).socket?.socket;
  if (!dgram || typeof dgram.setRecvBufferSize !== "function" || typeof dgram.getRecvBufferSize !== "function") return undefined;
  try {
    dgram.setRecvBufferSize(bytes);
    dgram.setSendBufferSize?.(bytes);
    return dgram.getRecvBufferSize();
  } catch {
    return undefined;
  }
}

/** Client crypto: the library only needs random bytes. */
export const clientCrypto: QUICClientCrypto = {
  ops: {
    async randomBytes(data: ArrayBuffer): Promise<void> {
      webcrypto.getRandomValues(new Uint8Array(data));
    },
  },
};

/**
 * Server crypto: a fresh HMAC-SHA256 key for retry tokens. `sign` resolves to a real
 * `ArrayBuffer` (a Node `Buffer` makes connecting hang: quic-notes fault 4).
 */
export async function createServerCrypto(): Promise<QUICServerCrypto> {
  const key = webcrypto.getRandomValues(new Uint8Array(32)).buffer;
  const hmac = await webcrypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
    "verify",
  ]);
  return {
    key,
    ops: {
      async sign(_key: ArrayBuffer, data: ArrayBuffer): Promise<ArrayBuffer> {
        return webcrypto.subtle.sign("HMAC", hmac, data);
      },
      async verify(_key: ArrayBuffer, data: ArrayBuffer, sig: ArrayBuffer): Promise<boolean> {
        return webcrypto.subtle.verify("HMAC", hmac, sig, data);
      },
    },
  };
}

/** Forwards @matrixai/logger records at or above its level to a pino logger (stderr). */
class PinoHandler extends Handler {
  constructor(private readonly pino: PinoLogger) {
    super();
  }
  override handle(record: LogRecord): void {
    const msg = `${record.keys}: ${record.msg ?? ""}`;
    if (record.level >= LogLevel.ERROR) this.pino.error(msg);
    else if (record.level >= LogLevel.WARN) this.pino.warn(msg);
    else if (record.level >= LogLevel.INFO) this.pino.info(msg);
    else this.pino.debug(msg);
  }
  emit(output: string): void {
    this.pino.warn(output);
  }
}

/**
 * A @matrixai/logger for the QUIC library that stays quiet (WARN by default; the library's
 * default logs INFO lines per stream) and writes through the project's pino logger.
 */
export function quietQuicLogger(name: string, level: LogLevel = LogLevel.WARN): Logger {
  return new Logger(name, level, [new PinoHandler(childLogger(name))]);
}

/**
 * Writes one frame carrying `payload` and closes the writable side, issuing every write and the
 * close in the same event-loop turn so the last data and the FIN can leave together
 * (quic-notes.md, root cause of fault 1). Resolves when the close completes.
 * @throws FrameTooLargeError synchronously-before-any-write when the payload exceeds 16 MiB
 */
export function writeFrameAndClose(stream: QUICStream, payload: Uint8Array): Promise<void> {
  const parts = encodeFrameParts(payload); // throws before touching the stream
  const writer = stream.writable.getWriter();
  // A WritableStream runs writes and the close in order, and close() rejects when any earlier
  // write failed (the stream is then errored), so the close promise alone reports the outcome.
  // The writer is never released: the stream is closed (or errored) for good.
  for (const part of parts) writer.write(part).catch(ignore);
  return writer.close();
}

function ignore(): void {}

/**
 * Reads exactly one frame from a readable stream.
 * Resolves with the payload as soon as the frame is complete, without waiting for the peer's
 * FIN. Rejects with FrameTooLargeError (as soon as the header declares > 16 MiB),
 * FrameTruncatedError (stream ended mid-frame), FrameEmptyStreamError (ended before any byte),
 * or the stream's own error. `extra` counts bytes that followed the frame in the same chunk
 * (0 for a well-behaved peer).
 */
export async function readOneFrame(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  maxFrameBytes: number = MAX_FRAME_BYTES,
): Promise<{ payload: Uint8Array; extra: number }> {
  // Fast path: the whole frame in the first chunk (any small response) needs no decoder.
  const first = await reader.read();
  if (!first.done) {
    const c = first.value;
    if (c.byteLength >= FRAME_HEADER_BYTES) {
      const length = ((c[0]! << 24) >>> 0) + (c[1]! << 16) + (c[2]! << 8) + c[3]!;
      if (length <= maxFrameBytes && c.byteLength >= FRAME_HEADER_BYTES + length) {
        return { payload: c.subarray(FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + length), extra: c.byteLength - FRAME_HEADER_BYTES - length };
      }
    }
  }
  const decoder = new FrameDecoder(maxFrameBytes);
  let pendingChunk: typeof first | undefined = first;
  for (;;) {
    const { value, done } = pendingChunk ?? (await reader.read());
    pendingChunk = undefined;
    if (done) {
      decoder.end(); // throws FrameTruncatedError when a partial frame is held
      throw new FrameEmptyStreamError();
    }
    const before = decoder.buffered;
    const frames = decoder.push(value);
    if (frames.length > 0) {
      const payload = frames[0]!;
      const used = FRAME_HEADER_BYTES + payload.byteLength - before;
      return { payload, extra: value.byteLength - used };
    }
  }
}

/** The stream ended cleanly before any frame byte arrived. */
export class FrameEmptyStreamError extends FrameError {
  override readonly name = "FrameEmptyStreamError";
  constructor() {
    super("stream ended before a frame arrived");
  }
}

let patchChecked = false;

/**
 * Whether @matrixai/quic carries our loss-recovery patch (patches/@matrixai+quic+2.0.9.patch,
 * applied by `postinstall: patch-package`; docs/quic-loss-recovery.md). Without it, a lost packet
 * carrying a stream's FIN can hang that call until its deadline. Logs one warning per process
 * when the patch is missing; returns the verdict.
 */
export function checkQuicPatched(log: PinoLogger): boolean {
  const patched = typeof (QUICConnection.prototype as unknown as { scheduleSend?: unknown }).scheduleSend === "function";
  if (!patched && !patchChecked) {
    log.warn("@matrixai/quic is not patched (run `npx patch-package` in the package folder): lost packets can stall calls until their deadline");
  }
  patchChecked = true;
  return patched;
}

/** Cancels both sides of `stream` with `code`; a stream that is already gone is ignored. */
export function cancelStream(stream: QUICStream, code: StreamCode, reason: string): void {
  try {
    stream.cancel(new StreamAbort(code, reason));
  } catch {
    /* the stream is already gone */
  }
}

/**
 * Wires a client connection the way every Orchestra client needs: `onLost(detail)` on the
 * client's error, close and destroyed events, and any server-initiated stream refused
 * (the protocol has none) so that it does not linger.
 */
export function watchClientConnection(client: QUICClient, onLost: (detail: unknown) => void): void {
  const lost = (evt: Event): void => onLost((evt as { detail?: unknown }).detail);
  client.addEventListener(quicEvents.EventQUICClientError.name, lost);
  client.addEventListener(quicEvents.EventQUICClientClose.name, lost);
  client.addEventListener(quicEvents.EventQUICClientDestroyed.name, lost);
  client.connection.addEventListener(quicEvents.EventQUICConnectionStream.name, (evt: Event) => {
    const stream = (evt as unknown as { detail: QUICStream }).detail;
    cancelStream(stream, StreamCode.UNSUPPORTED, "server-initiated streams are not supported");
  });
}
