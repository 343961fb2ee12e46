/**
 * Multiplexed framing for the TLS-over-TCP transport (docs/tls-transport.md).
 *
 * One TCP connection carries every RPC. Each direction is a sequence of frames
 * `[4-byte big-endian length N][N bytes of protobuf]` with `N <= 16 MiB`, exactly as on a QUIC
 * stream (orchestra-protocol.md, "Framing and RPC shape"; the codec is src/framing/frame.ts). The
 * client writes `PluginRequest`s, the server `PluginResponse`s; a response is matched to its
 * request by `request_id` alone, so every request in flight on a connection needs a distinct,
 * non-empty id.
 *
 * Our extensions, needed because there is no per-RPC stream to reset:
 * - cancellation: the client writes `PluginRequest{request_id: X, stream_cancel: {stream_id: X}}`
 *   for a call it abandons; the server aborts that handler and answers nothing;
 * - per-request errors: where the QUIC server would reset the stream, the TLS server answers
 *   `PluginResponse{request_id: X, stream_end: {stream_id: X, success: false, error_code,
 *   error_message}}` with an error code from {@link RequestErrorCode}.
 */
import type { Writable } from "node:stream";
import type { PluginRequest, PluginResponse } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { createPluginRequest, createPluginResponse, decodePluginResponse } from "../gen/proto/orchestra/plugin/v1/plugin_codec.js";
import { encodeFrameParts, MAX_FRAME_BYTES, PAYLOAD_CODEC_OPTIONS } from "../framing/frame.js";

/**
 * ALPN protocol id, the same as over QUIC (orchestra-protocol.md, "Transport"). Kept here rather
 * than imported from quic-common so the TLS transport does not load the QUIC library.
 */
export const TLS_ALPN = "orchestra-plugin";

/** `StreamEnd.error_code` values the TLS server uses for per-request errors (our extension). */
export const RequestErrorCode = {
  /** The server does not serve this `PluginRequest` kind (QUIC: stream reset, code 5). */
  UNSUPPORTED: "unsupported_request",
  /** The response would exceed 16 MiB (QUIC: stream reset, code 3). */
  FRAME_TOO_LARGE: "frame_too_large",
  /** The server is stopping; the request was abandoned (QUIC: stream reset, code 7). */
  SHUTDOWN: "shutting_down",
  /** The handler failed unexpectedly (QUIC: stream reset, code 6). */
  INTERNAL: "internal_error",
} as const;
export type RequestErrorCode = (typeof RequestErrorCode)[keyof typeof RequestErrorCode];

/**
 * The cancellation message for request `requestId`:
 * `PluginRequest{request_id: requestId, stream_cancel: {stream_id: requestId}}`.
 */
export function cancelRequest(requestId: string): PluginRequest {
  return createPluginRequest({
    requestId,
    request: { case: "streamCancel", value: { streamId: requestId } },
  });
}

/**
 * The request id a cancellation message targets (`stream_cancel.stream_id`, else its own
 * `request_id`), or `undefined` when `request` is not a `stream_cancel`.
 */
export function cancelTarget(request: PluginRequest): string | undefined {
  if (request.request.case !== "streamCancel") return undefined;
  return request.request.value.streamId || request.requestId;
}

/**
 * A per-request error answer: `PluginResponse{request_id, stream_end: {stream_id: request_id,
 * success: false, error_code: code, error_message: message}}`.
 */
export function requestErrorResponse(requestId: string, code: RequestErrorCode | string, message: string): PluginResponse {
  return createPluginResponse({
    requestId,
    response: {
      case: "streamEnd",
      value: { streamId: requestId, success: false, errorCode: code, errorMessage: message },
    },
  });
}

/**
 * The error carried by a per-request error answer (see {@link requestErrorResponse}), or
 * `undefined` for any other response. Only meaningful for unary requests: a client that never
 * sends `stream_start` never expects a `stream_end`.
 */
export function requestErrorOf(response: PluginResponse): { code: string; message: string } | undefined {
  if (response.response.case !== "streamEnd" || response.response.value.success) return undefined;
  const { errorCode, errorMessage } = response.response.value;
  return { code: errorCode, message: errorMessage || errorCode || "request failed" };
}

// ---------------------------------------------------------------------------------------------

/** A frame handed to a {@link FrameWriter}. */
export interface QueuedFrame {
  /** True once the frame's bytes were handed to the socket (they will be sent in full). */
  readonly written: boolean;
  /**
   * Removes the frame if it is still waiting; returns true when it was removed (nothing of it
   * will be sent), false when it was already written or the writer was closed.
   */
  withdraw(): boolean;
}

interface FrameEntry extends QueuedFrame {
  parts: Uint8Array[];
  bytes: number;
  onWritten: (() => void) | undefined;
}

/**
 * Writes whole frames to a byte stream (a TLS socket) in order, honouring backpressure: frames
 * are handed to the stream only while `writableNeedDrain` is false; the rest wait, in FIFO order
 * (urgent frames first), until `'drain'`. A frame is never split between waits, so frames never
 * interleave on the wire.
 */
export class FrameWriter {
  private readonly queue: FrameEntry[] = [];
  private waitingDrain = false;
  private closed = false;
  private queuedBytesTotal = 0;

  /** @param out the stream frames are written to (e.g. a `tls.TLSSocket`) */
  constructor(private readonly out: Writable) {}

  /** Frames waiting for the stream to drain. */
  get queued(): number {
    return this.queue.length;
  }

  /** Bytes of the frames waiting for the stream to drain (headers included). */
  get queuedBytes(): number {
    return this.queuedBytesTotal;
  }

  /**
   * Queues one frame carrying `payload` and writes it at once unless the stream is applying
   * backpressure.
   * @param payload protobuf bytes (the caller must not mutate them afterwards)
   * @param options `urgent` puts the frame ahead of other waiting frames (for small control
   *   frames such as cancellations); `onWritten` runs when its bytes are handed to the stream
   * @throws FrameTooLargeError when `payload` exceeds 16 MiB (nothing is queued)
   */
  enqueue(payload: Uint8Array, options: { urgent?: boolean; onWritten?: () => void } = {}): QueuedFrame {
    const parts = encodeFrameParts(payload, MAX_FRAME_BYTES);
    const bytes = parts.reduce((n, p) => n + p.byteLength, 0);
    const writer = this;
    const entry: FrameEntry = {
      parts,
      bytes,
      onWritten: options.onWritten,
      written: false,
      withdraw(): boolean {
        return writer.remove(entry);
      },
    };
    if (this.closed) return entry;
    if (options.urgent) this.queue.unshift(entry);
    else this.queue.push(entry);
    this.queuedBytesTotal += bytes;
    this.flush();
    return entry;
  }

  /** Drops every waiting frame and stops writing. Idempotent. */
  close(): void {
    this.closed = true;
    this.queue.length = 0;
    this.queuedBytesTotal = 0;
  }

  private remove(entry: FrameEntry): boolean {
    if (entry.written) return false;
    const i = this.queue.indexOf(entry);
    if (i < 0) return false;
    this.queue.splice(i, 1);
    this.queuedBytesTotal -= entry.bytes;
    return true;
  }

  private flush(): void {
    while (this.queue.length > 0 && !this.closed) {
      if (this.out.destroyed || this.out.writableEnded) {
        this.close();
        return;
      }
      if (this.out.writableNeedDrain) {
        if (!this.waitingDrain) {
          this.waitingDrain = true;
          this.out.once("drain", () => {
            this.waitingDrain = false;
            this.flush();
          });
        }
        return;
      }
      const entry = this.queue.shift()!;
      this.queuedBytesTotal -= entry.bytes;
      (entry as { written: boolean }).written = true;
      for (const part of entry.parts) this.out.write(part);
      entry.onWritten?.();
    }
  }
}

// ---------------------------------------------------------------------------------------------

/** What {@link ResponseRouter.route} made of one response frame. */
export type RouteResult<T> = { kind: "matched"; entry: T; response: PluginResponse } | { kind: "unknown"; response: PluginResponse } | { kind: "undecodable"; error: Error };

/**
 * The client's table of requests in flight on one connection, keyed by `request_id`, and the
 * matching of response frames to them. Entries leave the table when matched or
 * {@link ResponseRouter.delete}d; a response for an id not in the table (a late answer to a
 * call that timed out or was cancelled) is reported as `unknown`.
 */
export class ResponseRouter<T> {
  private readonly pending = new Map<string, T>();

  /** Requests in flight. */
  get size(): number {
    return this.pending.size;
  }

  /** True when `requestId` is in flight. */
  has(requestId: string): boolean {
    return this.pending.has(requestId);
  }

  /** The entry in flight for `requestId`, or undefined. */
  get(requestId: string): T | undefined {
    return this.pending.get(requestId);
  }

  /**
   * Registers a request in flight.
   * @returns false (and changes nothing) when `requestId` is empty or already in flight
   */
  add(requestId: string, entry: T): boolean {
    if (requestId === "" || this.pending.has(requestId)) return false;
    this.pending.set(requestId, entry);
    return true;
  }

  /** Removes `requestId` (only if it maps to `entry`, when given); returns whether it was removed. */
  delete(requestId: string, entry?: T): boolean {
    if (entry !== undefined && this.pending.get(requestId) !== entry) return false;
    return this.pending.delete(requestId);
  }

  /** Removes and returns every entry. */
  drain(): T[] {
    const all = [...this.pending.values()];
    this.pending.clear();
    return all;
  }

  /**
   * Decodes one response payload and takes its request out of the table.
   * @param payload one frame's protobuf bytes
   */
  route(payload: Uint8Array): RouteResult<T> {
    let response: PluginResponse;
    try {
      response = decodePluginResponse(payload, PAYLOAD_CODEC_OPTIONS);
    } catch (e) {
      return { kind: "undecodable", error: e instanceof Error ? e : new Error(String(e)) };
    }
    const entry = this.pending.get(response.requestId);
    if (entry === undefined) return { kind: "unknown", response };
    this.pending.delete(response.requestId);
    return { kind: "matched", entry, response };
  }
}
