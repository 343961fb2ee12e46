/**
 * The seam between the bridge and the orchestrator transport.
 *
 * A {@link Sender} performs one unary Orchestra RPC: it writes one `PluginRequest` and resolves
 * with the one `PluginResponse` the orchestrator answers with (orchestra-protocol.md, "Framing
 * and RPC shape"). Two RPCs answer with more than one frame: `stream_start` (N × `stream_chunk`,
 * then `stream_end`) and `subscribe` (`event_delivery` frames until either side ends the
 * stream); a Sender that can carry them implements {@link StreamingSender}. The bridge checks
 * with {@link canStream} and, for a sender that cannot, answers `tools/call` with a unary
 * `tool_call` (no progress) and advertises `tools.listChanged: false`.
 *
 * `RpcClient` (./rpc-client.ts) implements both over a QUIC or a TLS link; unit tests use fakes.
 *
 * An orchestrator may also lack a streaming kind (the upstream Go orchestrator has neither):
 * {@link refusalOf} reads that from its first answer and {@link RefusedKinds} remembers it for
 * the connection (docs/mcp-orchestra-mapping.md, "What the bridge learns from the orchestrator").
 */
import type { PluginRequest, PluginResponse } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { UNKNOWN_REQUEST_CODE } from "../translate/request-codes.js";
import type { CancelSignal } from "./cancel.js";

export type { CancelSignal } from "./cancel.js";

export { SenderError, StreamUnsupportedError, type SenderErrorKind } from "./errors.js";

/** Per-call options. */
export interface SendOptions {
  /** Aborting cancels the RPC (its stream is cancelled); the promise rejects with `SenderError('aborted')`. */
  signal?: CancelSignal;
  /** Deadline for the whole RPC in milliseconds; on expiry the promise rejects with `SenderError('timeout')`. */
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
  /** Closes the underlying connection; pending calls reject with `SenderError('closed')`. Idempotent. */
  close(): Promise<void>;
}

/**
 * Called for every response frame of a streaming RPC, in order. Return `true` for the frame
 * that completes the RPC (e.g. `stream_end`): the call then resolves and the stream is released.
 * A throw cancels the stream and rejects the call with what was thrown.
 */
export type FrameHandler = (response: PluginResponse) => boolean | void;

/** A {@link Sender} that can also carry multi-frame RPCs. */
export interface StreamingSender extends Sender {
  /**
   * False when this sender's link carries unary RPCs only (then {@link canStream} is false).
   * Absent means it streams.
   */
  readonly streams?: boolean;
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

/** Whether `sender` implements {@link StreamingSender} (and its link can carry streams). */
export function canStream(sender: Sender): sender is StreamingSender {
  const s = sender as Partial<StreamingSender>;
  return typeof s.stream === "function" && s.streams !== false;
}

/**
 * Whether `first`, the first response frame to the streaming `request`, says that the
 * orchestrator does not implement the request's kind, and why:
 * - `tool_call {success: false, error_code: "unknown_request"}` (its generic refusal, since the
 *   protocol has no error response), to any kind other than `tool_call`;
 * - an empty `PluginResponse` (no oneof case set) where the kind's answer was expected (the
 *   upstream orchestrator's answer to `subscribe`: acknowledged, nothing will ever be delivered).
 * @returns the reason, or undefined when the frame is an answer of the kind
 */
export function refusalOf(request: PluginRequest, first: PluginResponse): string | undefined {
  const r = first.response;
  if (r.case === undefined) return `answered ${request.request.case ?? "the request"} with an empty PluginResponse`;
  if (r.case === "toolCall" && request.request.case !== "toolCall" && !r.value.success && r.value.errorCode === UNKNOWN_REQUEST_CODE) {
    return `refused ${request.request.case ?? "the request"}: ${r.value.errorMessage || UNKNOWN_REQUEST_CODE}`;
  }
  return undefined;
}

/**
 * The streaming request kinds one connection's orchestrator refused ({@link refusalOf}, or a
 * stream reset with "unsupported"). A new connection starts with a new instance: the
 * orchestrator behind it may be another one.
 */
export class RefusedKinds {
  private readonly kinds = new Map<string, string>();

  /** Remembers that `kind` (a `PluginRequest` oneof case) was refused, with the reason. */
  add(kind: PluginRequest["request"]["case"], reason: string): void {
    if (kind !== undefined && !this.kinds.has(kind)) this.kinds.set(kind, reason);
  }

  /** Why `kind` was refused on this connection, or undefined when it was not. */
  reason(kind: PluginRequest["request"]["case"]): string | undefined {
    return kind === undefined ? undefined : this.kinds.get(kind);
  }
}
