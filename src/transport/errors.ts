/**
 * The transport's whole error vocabulary: every failure of a {@link Sender} call is a
 * {@link SenderError} of one {@link SenderErrorKind}, whose message names the orchestrator's
 * address. The bridge maps every kind to JSON-RPC `-32603` (docs/reliability.md).
 */

/** Why a call failed. */
export type SenderErrorKind =
  | "connect" // could not reach / handshake with the orchestrator
  | "closed" // connection lost or sender closed while the call was pending
  | "timeout" // per-call deadline expired
  | "aborted" // caller aborted (e.g. notifications/cancelled)
  | "frame" // oversized, malformed or unencodable frame / undecodable protobuf
  | "protocol"; // anything else the transport or the orchestrator reports

export class SenderError extends Error {
  override readonly name = "SenderError";
  constructor(
    readonly kind: SenderErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The orchestrator refused a streaming request kind (QUIC: stream reset "unsupported"; or {@link refusalOf}). */
export class StreamUnsupportedError extends SenderError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("protocol", message, options);
  }
}

/**
 * A {@link SenderError} for the orchestrator at `address`: `orchestrator ADDRESS unreachable:
 * DETAIL` for kind `connect`, `orchestrator ADDRESS: DETAIL` for every other kind.
 */
export function senderError(address: string, kind: SenderErrorKind, detail: string, cause?: unknown): SenderError {
  const text = kind === "connect" ? `orchestrator ${address} unreachable: ${detail}` : `orchestrator ${address}: ${detail}`;
  return new SenderError(kind, text, cause === undefined ? undefined : { cause });
}

/** The detail of a {@link SenderError} of kind `connect` when the bridge's TLS material (its cert store) cannot be had: `cannot load TLS material: <e's message>`. */
export function tlsMaterialDetail(e: unknown): string {
  return `cannot load TLS material: ${messageOf(e)}`;
}

/** The message of `e` (an Error's message, else its string form). */
export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
