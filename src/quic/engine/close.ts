/**
 * Why a QUIC connection ended ({@link CloseInfo}, read from quiche's state), and the error
 * streams get when it does.
 */
import type { Connection } from "@matrixai/quic/native/index.js";
import { quiche } from "./config.js";
import { tlsAlertName } from "./tls-alert.js";

/** Why a connection ended. */
export interface CloseInfo {
  /**
   * - `idle-timeout`: nothing received for the idle timeout (RFC 9000 §10.1), including a
   *   handshake that never completed;
   * - `peer`: the peer sent CONNECTION_CLOSE (RFC 9000 §10.2), e.g. it rejected our certificate;
   * - `local`: this side closed it: {@link QuicConnection.close}, or quiche detected a protocol
   *   or TLS error (e.g. the peer's certificate failed verification);
   * - `unreachable`: the UDP socket reported ICMP port unreachable (`ECONNREFUSED`) and nothing
   *   arrived from the peer within {@link UNREACHABLE_CONFIRM_MS} after it (see
   *   {@link QuicConnection.peerUnreachable}); `reason` names the socket error.
   */
  kind: "idle-timeout" | "peer" | "local" | "unreachable";
  /** Application close (CONNECTION_CLOSE 0x1d) rather than transport close (0x1c). */
  app: boolean;
  /** The error code (transport, TLS alert + 0x100, or application code). */
  code: number;
  /** The reason phrase (UTF-8), possibly empty. */
  reason: string;
  /** `code` is a TLS alert (transport codes 0x100–0x1ff, RFC 9001 §4.8). */
  tls: boolean;
  /** Whether the handshake had completed before the close. */
  established: boolean;
}

/** Human-readable summary of a {@link CloseInfo}. */
export function describeClose(info: CloseInfo): string {
  if (info.kind === "idle-timeout") return info.established ? "idle timeout" : "handshake timed out";
  if (info.kind === "unreachable") {
    return `peer unreachable: ICMP port unreachable (${info.reason}) and no packet from it within ${UNREACHABLE_CONFIRM_MS} ms`;
  }
  const who = info.kind === "peer" ? "peer" : "local";
  const what = info.tls
    ? `TLS alert ${info.code - quiche.CRYPTO_ERROR_START} (${tlsAlertName(info.code - quiche.CRYPTO_ERROR_START)})`
    : `${info.app ? "application" : "transport"} error ${info.code}`;
  return `${who} closed the connection: ${what}${info.reason ? ` (${info.reason})` : ""}`;
}

/** Thrown to stream callbacks when their connection ends. */
export class ConnectionClosedError extends Error {
  override readonly name = "ConnectionClosedError";
  constructor(readonly info: CloseInfo) {
    super(`connection closed: ${describeClose(info)}`);
  }
}

/**
 * How long (ms) an established connection waits, after its socket reported ICMP port
 * unreachable, for any packet from the peer before it ends with kind `unreachable`. ICMP is
 * unauthenticated and may be stale (RFC 8085 §5.2; RFC 9000 §14.2.1 asks the same caution for
 * ICMP about path MTU), so one message alone never ends a connection: a PING is sent at once, and
 * a live peer acknowledges it within a round trip plus its ack delay (25 ms by default).
 */
export const UNREACHABLE_CONFIRM_MS = 1_000;

const decoder = new TextDecoder();

/**
 * @internal Reads why quiche ended (or is ending) `c`: idle timeout, the peer's or our
 * CONNECTION_CLOSE (transport, TLS alert or application), or a stateless reset.
 * `established`: whether the handshake had completed.
 */
export function readCloseInfo(c: Connection, established: boolean): CloseInfo {
  if (c.isTimedOut()) return { kind: "idle-timeout", app: false, code: 0, reason: "", tls: false, established };
  const peer = c.peerError();
  const err = peer ?? c.localError();
  // quiche ends a connection without any error only when a datagram was a stateless reset
  // from the peer (RFC 9000 §10.3: it lost the connection's state, e.g. it restarted).
  if (!err) return { kind: "peer", app: false, code: 0, reason: "stateless reset", tls: false, established };
  const tls = !err.isApp && err.errorCode >= quiche.CRYPTO_ERROR_START && err.errorCode <= quiche.CRYPTO_ERROR_STOP;
  return {
    kind: peer ? "peer" : "local",
    app: err.isApp,
    code: err.errorCode,
    reason: err.reason && err.reason.byteLength > 0 ? decoder.decode(err.reason) : "",
    tls,
    established,
  };
}
