/**
 * {@link QuicStream}: one bidirectional QUIC stream (RFC 9000 §2, §3) as a plain object with
 * callbacks. No web streams, no EventTarget, no timers or locks per stream.
 *
 * The engine carries bytes only: each chunk read is handed to {@link onData} as it comes out of
 * quiche, and the end of the read side (FIN, reset) to {@link onReadEnd}. Message boundaries are
 * the application's (for the Orchestra protocol: src/quic/framed-stream.ts).
 * Writing queues chunks into quiche; the last chunk and the FIN always go in the same
 * `stream_send` call, so they leave in the same packet (quic-notes.md, fault 1).
 */
import type { Connection } from "@matrixai/quic/native/index.js";
import type { QuicConnection } from "./connection.js";

/** What ended the read side of a stream early: the peer reset it (RESET_STREAM, RFC 9000 §19.4). */
export class PeerResetError extends Error {
  override readonly name = "PeerResetError";
  /** @param code the peer's application error code */
  constructor(readonly code: number) {
    super(`peer reset the stream (code ${code})`);
  }
}

/** What ended the write side of a stream early: the peer sent STOP_SENDING (RFC 9000 §19.5). */
export class PeerStopError extends Error {
  override readonly name = "PeerStopError";
  /** @param code the peer's application error code */
  constructor(readonly code: number) {
    super(`peer stopped the stream (code ${code})`);
  }
}

/** A write on a stream whose send side is already finished or reset. */
export class StreamClosedError extends Error {
  override readonly name = "StreamClosedError";
}

const EMPTY = new Uint8Array(0);

/**
 * Up to this many tracked streams are asked one by one (`stream_readable`, a flag read: ~0.08 µs)
 * when the peer cannot open streams: the binding's `readable()` and its iterator cost ~11 µs
 * before the first ID, as much as about 140 such calls.
 */
const READABLE_SCAN_MAX = 128;

/**
 * @internal The IDs of the streams quiche has something to read from (data, FIN or reset): its
 * readable set (`readable()`), or, when the peer cannot open streams (`peerOpens` false: no
 * bidirectional stream granted, unidirectional ones never) and few are tracked, the tracked
 * streams whose receive side quiche has not closed and that it calls readable: only those can
 * be (a stream leaves `streams` once quiche's receive side of it finished or was shut down).
 */
export function readableStreams(conn: Connection, streams: ReadonlyMap<number, QuicStream>, peerOpens: boolean): Iterable<number> {
  if (peerOpens || streams.size > READABLE_SCAN_MAX) return conn.readable();
  const ids: number[] = [];
  for (const s of streams.values()) if (!s.recvClosed && conn.streamReadable(s.id)) ids.push(s.id);
  return ids;
}

/**
 * One bidirectional stream. Created by {@link QuicConnection.openStream} (local) or handed to
 * the connection's `onStream` (peer-initiated).
 *
 * Callbacks (set them synchronously after getting the stream; each fires at most as described):
 * - {@link onData}(chunk): per chunk of stream data read, in order. `chunk` is a view into a
 *   receive buffer shared by all streams, valid only during the call: copy what you keep;
 * - {@link onReadEnd}(error?): once, when the read side ends: `undefined` for the peer's FIN;
 *   {@link PeerResetError}, or `ConnectionClosedError` when the connection closed first. Not
 *   called after {@link abandonRead} or {@link reset};
 * - {@link onWriteError}(error): once, when the peer stops our send side ({@link PeerStopError})
 *   before our FIN was handed to quiche (a {@link StreamClosedError} when quiche released the
 *   stream first: a STOP_SENDING in the packet acknowledging its data loses its code), or the
 *   connection closed with data still queued. Noticed after the turn's datagrams, written or not.
 */
export class QuicStream {
  onData: ((chunk: Uint8Array) => void) | undefined = undefined;
  onReadEnd: ((error?: Error) => void) | undefined = undefined;
  onWriteError: ((error: Error) => void) | undefined = undefined;
  /** Free slot for the user (e.g. the call this stream carries). */
  context: unknown = undefined;

  /** @internal */ readDone = false;
  /** @internal quiche's receive side ended (FIN or reset received, or shut down by us). */ recvClosed = false;
  /** @internal */ writeDone = false;
  /** @internal true once quiche knows the stream (first `stream_send` or peer-initiated). */ committed: boolean;
  /** @internal write queue not yet accepted by quiche (flow control). */ pending: Uint8Array[] | undefined = undefined;
  /** @internal */ finPending = false;
  private readEndReported = false;

  /** @internal */
  constructor(
    private readonly connection: QuicConnection,
    /** QUIC stream ID (RFC 9000 §2.1: client-initiated bidirectional IDs are 0, 4, 8, …). */
    readonly id: number,
    committed: boolean,
  ) {
    this.committed = committed;
  }

  /** True once both directions are finished (FIN/reset each way, as far as this side is concerned). */
  get done(): boolean {
    return this.readDone && this.writeDone;
  }

  /** True once the read side ended (FIN read, reset by the peer, or stopped by us). */
  get readFinished(): boolean {
    return this.readDone;
  }

  /** True once our FIN (or a reset) has been handed to quiche, or the peer stopped us. */
  get writeFinished(): boolean {
    return this.writeDone;
  }

  /**
   * Writes raw bytes (`fin`: and finishes the send side, in the same `stream_send` call as the
   * last of `bytes`). Data beyond the flow-control window is queued and sent as the peer grants
   * credit; sent at the connection's next flush (once per turn). The caller keeps ownership of
   * `bytes` but must not modify them until written (quiche copies what it accepts at once).
   * @throws StreamClosedError when the send side is already finished
   */
  write(bytes: Uint8Array, fin: boolean): void {
    if (this.writeDone || this.finPending) throw new StreamClosedError(`stream ${this.id}: send side already finished`);
    this.connection.streamWrite(this, bytes, fin);
  }

  /** Finishes the send side without data (FIN). No-op when already finished. */
  end(): void {
    if (this.writeDone || this.finPending) return;
    this.connection.streamWrite(this, EMPTY, true);
  }

  /**
   * Aborts both directions with `code` (RESET_STREAM + STOP_SENDING, RFC 9000 §3.1–3.2) unless
   * that direction is already finished. Fires no callback of this stream. Idempotent.
   */
  reset(code: number): void {
    this.connection.streamShutdown(this, code, true, true);
  }

  /** STOP_SENDING only: stops the read side with `code`, keeps the send side. */
  stopReading(code: number): void {
    this.connection.streamShutdown(this, code, true, false);
  }

  /**
   * Ends the read side locally without telling the peer (no STOP_SENDING): {@link onData} and
   * {@link onReadEnd} are not called any more and data still arriving is dropped. For a reader
   * that gave up on the bytes (e.g. an oversize frame) and will reset the stream itself.
   * No-op once the read side ended.
   */
  abandonRead(): void {
    if (this.readDone) return;
    this.readDone = true;
    this.readEndReported = true;
    this.connection.readSideEnded(this);
  }

  /** @internal a chunk read from quiche (a view into a shared buffer, valid during this call). */
  receive(chunk: Uint8Array, fin: boolean): void {
    if (this.readDone) return;
    if (chunk.byteLength > 0 && this.onData) {
      this.onData(chunk);
      if (this.readDone) return; // the callback reset the stream or gave up reading
    }
    if (fin) {
      this.recvClosed = true;
      this.readDone = true;
      this.connection.readSideEnded(this);
      this.reportReadEnd(undefined);
    }
  }

  /** @internal */
  reportReadEnd(error?: Error): void {
    if (this.readEndReported) return;
    this.readEndReported = true;
    if (this.onReadEnd) this.onReadEnd(error);
  }

  /** @internal */
  reportWriteError(error: Error): void {
    if (this.onWriteError) this.onWriteError(error);
  }
}
