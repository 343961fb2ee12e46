/**
 * The seam between the bridge and the orchestrator transport.
 *
 * A {@link Sender} performs one unary Orchestra RPC: it writes one `PluginRequest` and resolves
 * with the one `PluginResponse` the orchestrator answers with (orchestra-protocol.md, "Framing
 * and RPC shape"). The bridge depends only on this interface; `QuicSender` implements it over
 * QUIC and unit tests use a fake.
 */
import type { PluginRequest, PluginResponse } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";

/** Per-call options. */
export interface SendOptions {
  /** Aborting cancels the RPC (the QUIC stream is cancelled); the promise rejects with {@link SenderError}. */
  signal?: AbortSignal;
  /** Deadline for the whole RPC in milliseconds; on expiry the promise rejects with {@link SenderError}. */
  timeoutMs?: number;
}

export interface Sender {
  /** Human-readable address of the peer (e.g. `127.0.0.1:50100`), used in error messages. */
  readonly address: string;
  /**
   * Sends one request and resolves with its response.
   * @throws SenderError on connection failure, TLS failure, framing error, timeout or abort.
   */
  send(request: PluginRequest, options?: SendOptions): Promise<PluginResponse>;
  /** Closes the underlying connection; pending calls reject with {@link SenderError}. Idempotent. */
  close(): Promise<void>;
}

/** Why a send failed; the bridge maps every kind to JSON-RPC `-32603` naming {@link Sender.address}. */
export type SenderErrorKind =
  | "connect" // could not reach / handshake with the orchestrator
  | "closed" // connection lost or sender closed while the call was pending
  | "timeout" // per-call deadline expired
  | "aborted" // caller aborted (e.g. notifications/cancelled)
  | "frame" // oversized or malformed frame / undecodable protobuf
  | "protocol"; // anything else the transport reports

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
