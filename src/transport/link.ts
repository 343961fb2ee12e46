/**
 * The small interface a transport implements for {@link RpcClient} (./rpc-client.ts): a
 * connection that opens calls, carries one request frame per call and hands back response
 * frames, and says when a call or the whole connection ends. QUIC (src/quic/quic-link.ts: one
 * bidirectional stream per call) and TLS over TCP (src/tls/tls-link.ts: calls multiplexed by
 * `request_id`) each implement it; the client holds everything else (call table, deadlines,
 * cancel, reconnect, liveness, error kinds).
 */
import type { PluginResponse } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import type { SenderError } from "./errors.js";

/**
 * Why the client abandons a call, which the link tells the peer: QUIC resets the stream with
 * the matching stream code; TLS sends `stream_cancel` for `cancelled` and `timeout` when the
 * request already went out.
 */
export type CancelReason =
  | "cancelled" // the caller aborted, or the frame handler threw
  | "timeout" // the call's deadline expired
  | "malformed" // the peer's frames broke the protocol
  | "internal" // a local failure (e.g. writing the request)
  | "shutdown" // the connection or the client is closing
  | "refused"; // the peer refused the request kind: nothing to tell it

/** What a link reports about one call (set when the call is opened). */
export interface CallEvents {
  /** One response frame of the call, decoded, in order. */
  frame(response: PluginResponse): void;
  /**
   * The peer ended the call's stream: cleanly (`error` undefined: QUIC FIN, TLS end marker), or
   * with `error` (reset by the peer, bad frame...). `reason` is how the link wants the call
   * cancelled in turn (default `malformed`).
   */
  end(error?: SenderError, reason?: CancelReason): void;
}

/** One call on a {@link Link}. */
export interface LinkCall {
  /**
   * Writes the call's one request frame and ends the client's side of the call.
   * @throws SenderError when the frame cannot be written
   */
  write(payload: Uint8Array): void;
  /** Abandons the call and tells the peer (see {@link CancelReason}). No event follows. */
  cancel(reason: CancelReason): void;
  /** The call is complete: release its stream (QUIC: the peer's FIN gets a short grace). No event follows. */
  release(): void;
}

/** One established connection to the orchestrator. */
export interface Link {
  /**
   * Opens one call. `multiFrame` is true for streaming RPCs (several response frames).
   * @returns undefined when the peer grants no new stream now: {@link onCredit} fires when it does
   * @throws SenderError when the call cannot be opened (e.g. TLS: its `request_id` is in flight)
   */
  open(requestId: string, multiFrame: boolean, events: CallEvents): LinkCall | undefined;
  /** Set by the client: calls that {@link open} refused may be opened now. */
  onCredit: (() => void) | undefined;
  /** Set by the client: the connection died (fires once), with the error its calls fail with. */
  onDown: ((error: SenderError) => void) | undefined;
  /** Packets received so far, for the client's liveness check; undefined for links without one. */
  readonly packetsReceived: number | undefined;
  /** Closes the connection; `graceful` lets frames already written go out. Resolves once closed. */
  close(graceful: boolean): Promise<void>;
}

/** Opens {@link Link}s to one orchestrator. */
export interface LinkDialer {
  /** `host:port` of the orchestrator, for messages. */
  readonly address: string;
  /** `QUIC` or `TLS`, for log messages. */
  readonly name: string;
  /** Whether this kind of link carries streaming RPCs. */
  readonly streams: boolean;
  /**
   * Connects (name resolution, handshake, ALPN).
   * @param signal aborted when the client closes during the attempt
   * @throws SenderError kind `connect` (or `closed` when aborted)
   */
  dial(signal: AbortSignal): Promise<Link>;
}
