/**
 * The optional streaming side of the {@link Sender} seam.
 *
 * Two Orchestra RPCs answer with more than one frame on their stream (orchestra-protocol.md,
 * "Framing and RPC shape"): `stream_start` (N × `stream_chunk`, then `stream_end`) and
 * `subscribe` (`event_delivery` frames until either side ends the stream). A Sender that can
 * carry them implements {@link StreamingSender}; the bridge checks with {@link canStream} and,
 * for a sender that cannot, answers `tools/call` with a unary `tool_call` (no progress) and
 * advertises `tools.listChanged: false`.
 */
import type { PluginRequest, PluginResponse } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { SenderError, type SendOptions, type Sender } from "../quic/sender.js";

/**
 * Called for every response frame of a streaming RPC, in order. Return `true` for the frame
 * that completes the RPC (e.g. `stream_end`): the call then resolves and the stream is released.
 * A throw cancels the stream and rejects the call with what was thrown.
 */
export type FrameHandler = (response: PluginResponse) => boolean | void;

/** A {@link Sender} that can also carry multi-frame RPCs. */
export interface StreamingSender extends Sender {
  /**
   * Opens one streaming RPC: writes `request` (its own stream), then hands each response frame
   * to `onFrame`.
   *
   * Resolves when `onFrame` returned `true`, or when the server ended the stream cleanly.
   * Aborting `options.signal` cancels the stream (the orchestrator treats this as
   * `stream_cancel` / unsubscribe) and rejects with `SenderError('aborted')`.
   * `options.timeoutMs` bounds the whole RPC when given; absent means no deadline (a
   * subscription lives as long as the session).
   * @throws StreamUnsupportedError when the orchestrator does not serve this request kind
   * @throws SenderError for every other transport failure (connect, closed, timeout, frame)
   */
  stream(request: PluginRequest, onFrame: FrameHandler, options?: SendOptions): Promise<void>;
}

/** The orchestrator refused a streaming request kind (QUIC: stream reset with "unsupported"). */
export class StreamUnsupportedError extends SenderError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("protocol", message, options);
  }
}

/** Whether `sender` implements {@link StreamingSender}. */
export function canStream(sender: Sender): sender is StreamingSender {
  return typeof (sender as Partial<StreamingSender>).stream === "function";
}
