/**
 * QUIC wire facts shared by the QUIC link (./quic-link.ts) and the reference orchestrator's
 * server: ALPN, stream error codes, UDP payload settings. The QUIC engine (./engine) does not
 * import this module: it takes such numbers through its config.
 *
 * Nothing here loads @matrixai/quic's JavaScript layer (the engine drives quiche's native binding
 * directly); the helpers for driving that layer as an independent test peer are in
 * test/helpers/quic/library.ts.
 */
import net from "node:net";

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

/** Datagram sizes in bytes: largest sent, and the `max_udp_payload_size` advertised (RFC 9000 §18.2). */
export interface UdpPayloadConfig {
  maxSendUdpPayloadSize: number;
  maxRecvUdpPayloadSize: number;
}

/**
 * Datagram size settings: `bytes` if given, else {@link LOOPBACK_UDP_PAYLOAD_BYTES} on loopback
 * and the library default elsewhere. The receive limit (advertised to the peer as
 * `max_udp_payload_size`) is never below the loopback size, so a loopback peer may use it;
 * the sender side always also honours the peer's advertised limit.
 */
export function udpPayloadConfig(loopback: boolean, bytes?: number): UdpPayloadConfig {
  const send = bytes ?? (loopback ? LOOPBACK_UDP_PAYLOAD_BYTES : DEFAULT_UDP_PAYLOAD_BYTES);
  if (!Number.isInteger(send) || send < 1200 || send > 65527) {
    throw new RangeError(`UDP payload size must be an integer in 1200..65527, got ${String(bytes)}`);
  }
  return { maxSendUdpPayloadSize: send, maxRecvUdpPayloadSize: Math.max(send, LOOPBACK_UDP_PAYLOAD_BYTES) };
}
