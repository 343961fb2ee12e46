/**
 * {@link QuicConnection}: one QUIC connection (RFC 9000) driven over a quiche `Connection`.
 *
 * Per connection there is at most one `setTimeout` for quiche's deadline (loss detection, idle,
 * draining: {@link QuicheDeadline}), one for a delayed ACK ({@link AckDelay}) and one
 * keep-alive interval. Packets produced by quiche are flushed once per event-loop turn by the
 * owning {@link UdpEndpoint} (`setImmediate`): everything written during a turn (a frame's data
 * and its FIN, many streams' frames, the ACKs due) is handed to quiche before it is asked for
 * packets. quiche (0.18, as shipped in @matrixai/quic) puts at most one STREAM frame into a
 * packet, so each stream written in a turn still takes a datagram of its own; ACKs and other
 * control frames ride along with them.
 */
import type { Connection, RecvInfo } from "@matrixai/quic/native/index.js";
import { quiche, type ResolvedLimits } from "./config.js";
import { PeerResetError, PeerStopError, QuicStream, readableStreams, StreamClosedError } from "./stream.js";
import { AckDelay, QuicheDeadline } from "./timers.js";
import { ConnectionClosedError, readCloseInfo, UNREACHABLE_CONFIRM_MS, type CloseInfo } from "./close.js";
import type { UdpEndpoint } from "./endpoint.js";

export { ConnectionClosedError, describeClose, UNREACHABLE_CONFIRM_MS, type CloseInfo } from "./close.js";

/** Shared receive buffer for `stream_recv` (data is copied out before it is reused). */
const RECV_BUF = Buffer.allocUnsafe(64 * 1024);
const EMPTY = new Uint8Array(0);
const RESET_RE = /StreamReset\((\d+)\)/;
const STOPPED_RE = /StreamStopped\((\d+)\)/;
/** RFC 9000 §8.1: before address validation, at most this many bytes sent per byte received. */
export const AMPLIFICATION_FACTOR = 3;
/**
 * Below this much credit no packet is attempted: a datagram carrying an ack-eliciting Initial
 * must be at least 1200 bytes (RFC 9000 §14.1), and quiche may put one into any packet.
 */
const MIN_PACKET_BYTES = 1200;

type OpenCallback = (stream: QuicStream | undefined, error?: Error) => void;

/**
 * A QUIC connection. Obtain one from `connectQuic` (client) or a `QuicServerEndpoint`'s
 * `onConnection` (server).
 *
 * Callbacks: {@link onStream} (a peer-initiated bidirectional stream; without a handler such
 * streams are reset with the configured `refusedStreamCode`), {@link onClose} (once, when the connection ends or
 * starts draining), {@link onStreamCredit} (after {@link tryOpenStream} returned `undefined`,
 * once the peer granted more streams).
 */
export class QuicConnection {
  onStream: ((stream: QuicStream) => void) | undefined = undefined;
  onClose: ((info: CloseInfo) => void) | undefined = undefined;
  onStreamCredit: (() => void) | undefined = undefined;
  /** Free slot for the user. */
  context: unknown = undefined;

  /** Open streams by ID (removed once both directions finished). */
  readonly streams = new Map<number, QuicStream>();
  /** @internal endpoint keys under which this connection is routed (server). */
  routeKeys: string[] = [];
  /** @internal */ recvInfo: RecvInfo;
  /**
   * @internal bytes this side may still send before the peer's address is validated
   * (RFC 9000 §8.1: three times what was received from it); `undefined`: no limit (a client,
   * or a server connection whose handshake completed).
   */
  amplificationCredit: number | undefined;

  private established = false;
  private closeInfo: CloseInfo | undefined;
  private finalised = false;
  private readonly deadline: QuicheDeadline;
  private keepAlive: NodeJS.Timeout | undefined;
  private unreachableCheck: NodeJS.Timeout | undefined;
  private readonly ack: AckDelay;
  private nextLocalBidi: number;
  private uncommitted = 0;
  private blocked = 0;
  private writeOpen = 0;
  private writeOpenAtRead = 0;
  private readPending = false;
  private creditWanted = false;
  private readonly openQueue: OpenCallback[] = [];
  private readonly isServer: boolean;
  /** Peer bidi stream indexes (id >> 2) seen: all below `peerNext`, plus those in `peerAhead`. */
  private peerNext = 0;
  private readonly peerAhead = new Set<number>();
  private onEstablishedCb: (() => void) | undefined;
  private packetsSeen = -1; // quiche's received-packet count as last read; -1: a datagram was fed to quiche since

  /** @internal use `connectQuic` / `QuicServerEndpoint`. */
  constructor(
    private readonly endpoint: UdpEndpoint,
    /** @internal the quiche connection handle. */
    readonly conn: Connection,
    role: "client" | "server",
    recvInfo: RecvInfo,
    private readonly limits: Pick<ResolvedLimits, "keepAliveMs" | "maxStreamsBidi" | "refusedStreamCode">,
    onEstablished?: () => void,
  ) {
    this.isServer = role === "server";
    this.deadline = new QuicheDeadline(conn, () => {
      if (this.finalised) return;
      conn.onTimeout();
      this.flushPackets();
    });
    this.ack = new AckDelay(conn, () => {
      if (!this.finalised) this.flushPackets();
    });
    this.amplificationCredit = this.isServer ? 0 : undefined;
    this.nextLocalBidi = this.isServer ? 1 : 0;
    this.recvInfo = recvInfo;
    this.onEstablishedCb = onEstablished;
  }

  /** True once the TLS handshake completed (and, on the server, the client certificate was verified). */
  get isEstablished(): boolean {
    return this.established;
  }

  /** True once the connection ended or started closing; {@link closeReason} then says why. */
  get isClosed(): boolean {
    return this.closeInfo !== undefined;
  }

  /** Why the connection ended (`undefined` while open). */
  get closeReason(): CloseInfo | undefined {
    return this.closeInfo;
  }

  /** Packets received so far (quiche's counter, read again only after a datagram arrived; a liveness signal). */
  get packetsReceived(): number {
    if (this.packetsSeen < 0) this.packetsSeen = this.conn.stats().recv;
    return this.packetsSeen;
  }

  /** Peer address as `{ host, port }`. */
  get remote(): { host: string; port: number } {
    return this.recvInfo.from;
  }

  /**
   * New bidirectional streams the peer's MAX_STREAMS currently allows (RFC 9000 §4.6), minus
   * streams opened here but not yet written. 0 when closed.
   */
  get streamCredit(): number {
    if (this.closeInfo || !this.established) return 0;
    return this.conn.peerStreamsLeftBidi() - this.uncommitted;
  }

  /**
   * Opens a bidirectional stream if the peer's stream limit allows it, else returns
   * `undefined` and calls {@link onStreamCredit} once more credit arrives. Write to the stream
   * in the same turn (quiche learns of it with its first `stream_send`).
   */
  tryOpenStream(): QuicStream | undefined {
    if (this.streamCredit <= 0 || this.openQueue.length > 0) {
      if (!this.closeInfo) this.creditWanted = true;
      return undefined;
    }
    return this.newLocalStream();
  }

  /**
   * Opens a bidirectional stream, waiting (FIFO) while the peer's stream limit is reached.
   * `callback(stream)` runs synchronously when credit is available, else once it arrives;
   * `callback(undefined, error)` when the connection closes first.
   */
  openStream(callback: OpenCallback): void {
    if (this.closeInfo) {
      callback(undefined, new ConnectionClosedError(this.closeInfo));
      return;
    }
    if (this.openQueue.length === 0 && this.streamCredit > 0) {
      callback(this.newLocalStream());
      return;
    }
    this.openQueue.push(callback);
  }

  /** Streams waiting in {@link openStream}'s queue. */
  get queuedOpens(): number {
    return this.openQueue.length;
  }

  /**
   * Closes the connection (CONNECTION_CLOSE, RFC 9000 §10.2) with an application `code` and
   * `reason`, sends it at once, and releases all state without waiting for the draining period.
   * Streams still open get their `onReadEnd`/`onWriteError` with a {@link ConnectionClosedError};
   * {@link onClose} fires with kind `local`. Idempotent.
   */
  close(code = 0, reason = ""): void {
    if (this.finalised) return;
    if (!this.closeInfo) {
      try {
        this.conn.close(true, code, Buffer.from(reason));
      } catch {
        /* already closing */
      }
      this.sendNow();
      this.reportClose({ kind: "local", app: true, code, reason, tls: false, established: this.established });
    }
    this.finalise();
  }

  /**
   * @internal The socket reported ICMP port unreachable (`error`, e.g. `ECONNREFUSED` on a
   * connected UDP socket): the peer's port may be closed (its process died). Sends a PING now
   * and, when no packet at all arrives from the peer within {@link UNREACHABLE_CONFIRM_MS},
   * ends the connection (CloseInfo kind `unreachable`; streams and {@link onClose} as for any
   * close). A packet in that window (the ICMP was stale or forged) cancels it. Further reports
   * during the window are folded into the first; ignored before the handshake completed (the
   * connect attempt handles those) and after the close.
   */
  peerUnreachable(error: Error): void {
    if (this.finalised || this.closeInfo || !this.established || this.unreachableCheck) return;
    const received = this.packetsReceived;
    this.ping();
    this.unreachableCheck = setTimeout(() => {
      // Decide after this turn's poll phase: datagrams that arrived while the event loop was
      // busy are read first, so a stalled process does not mistake its own delay for silence.
      setImmediate(() => this.confirmUnreachable(error, received));
    }, UNREACHABLE_CONFIRM_MS);
    this.unreachableCheck.unref();
  }

  private confirmUnreachable(error: Error, received: number): void {
    this.unreachableCheck = undefined;
    if (this.finalised || this.closeInfo || this.packetsReceived !== received) return;
    const reason = (error as NodeJS.ErrnoException).code ?? error.message;
    this.reportClose({ kind: "unreachable", app: false, code: 0, reason, tls: false, established: true });
    try {
      this.conn.close(false, 0, Buffer.from("peer unreachable"));
    } catch {
      /* already closing */
    }
    this.sendNow();
    this.finalise();
  }

  /** Sends whatever quiche has queued right now instead of at the end of the turn. */
  sendNow(): void {
    if (this.finalised) return;
    this.flushPackets();
  }

  // ---------------------------------------------------------------- endpoint side

  /** @internal one datagram from the peer. */
  receive(data: Buffer): void {
    if (this.finalised) return;
    // Initial and Handshake packets (long header) are acknowledged at once (RFC 9000 §13.2.1).
    this.ack.datagram(!this.established || (data[0]! & 0x80) !== 0);
    if (this.amplificationCredit !== undefined) this.amplificationCredit += AMPLIFICATION_FACTOR * data.byteLength;
    this.packetsSeen = -1;
    try {
      this.conn.recv(data, this.recvInfo);
    } catch {
      // A fatal error makes quiche close the connection itself (local error set); anything
      // else concerns only this datagram (e.g. undecryptable). The state check below decides.
    }
    if (!this.established && this.conn.isEstablished() && !this.closeInfo) {
      this.established = true;
      // The handshake completed: the peer proved it receives at its address (RFC 9000 §8.1).
      this.amplificationCredit = undefined;
      if (this.limits.keepAliveMs > 0) {
        this.keepAlive = setInterval(() => this.ping(), this.limits.keepAliveMs);
        this.keepAlive.unref();
      }
      const cb = this.onEstablishedCb;
      this.onEstablishedCb = undefined;
      if (cb) cb();
    }
    if (this.established && !this.finalised) {
      // Streams whose send side was open before this turn's datagrams: only they can have been
      // stopped by the peer (streams it opens now are answered later, after the check).
      if (!this.readPending) this.writeOpenAtRead = this.writeOpen;
      this.readPending = true;
      this.endpoint.scheduleRead(this);
    }
    this.endpoint.scheduleFlush(this);
  }

  /** @internal once per turn, after this turn's datagrams were fed to quiche, before the flush. */
  processStreams(): void {
    this.readPending = false;
    if (!this.established || this.finalised) return;
    this.processReadable();
    if (this.blocked > 0 || this.writeOpenAtRead > 0) this.processWritable();
    if (this.openQueue.length > 0) this.drainOpenQueue();
    if (this.creditWanted && this.streamCredit > 0) {
      this.creditWanted = false;
      if (this.onStreamCredit) this.onStreamCredit();
    }
  }

  /**
   * @internal the end-of-turn send, called by the endpoint. When quiche has only an ACK to
   * send, it may wait up to ACK_DELAY_MS for data to ride on ({@link AckDelay}).
   */
  flush(): void {
    if (this.finalised) return;
    if (this.ack.wait()) {
      this.checkState(); // quiche's state after this turn's datagrams (e.g. a peer's close)
      if (!this.finalised) this.deadline.arm();
      return;
    }
    this.flushPackets();
  }

  private flushPackets(): void {
    const ep = this.endpoint;
    this.ack.sending();
    for (;;) {
      let slot = ep.sendSlot();
      const credit = this.amplificationCredit;
      if (credit !== undefined) {
        // quiche's own limit misses probes and retransmissions (measured: 4.8x for one
        // Initial), so every packet is cut to what the address's credit allows. Nothing is
        // lost by stopping: quiche retransmits what it could not send at its next timeout.
        if (credit < MIN_PACKET_BYTES) break;
        if (credit < slot.byteLength) slot = slot.subarray(0, credit);
      }
      let r: [number, unknown] | null;
      try {
        r = this.conn.send(slot);
      } catch {
        break;
      }
      if (r === null) break;
      if (this.amplificationCredit !== undefined) this.amplificationCredit -= r[0];
      this.ack.lastPacketFull = r[0] === slot.byteLength;
      ep.transmit(slot, r[0], this);
    }
    this.checkState();
    if (!this.finalised) this.deadline.arm();
  }

  private ping(): void {
    if (this.finalised || this.closeInfo) return;
    try {
      this.conn.sendAckEliciting();
    } catch {
      /* closing */
    }
    this.flushPackets();
  }

  private checkState(): void {
    const c = this.conn;
    if (!this.closeInfo && (c.isClosed() || c.isDraining())) {
      this.reportClose(readCloseInfo(this.conn, this.established));
    }
    if (c.isClosed()) this.finalise();
  }

  private reportClose(info: CloseInfo): void {
    if (this.closeInfo) return;
    this.closeInfo = info;
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.keepAlive = undefined;
    if (this.unreachableCheck) clearTimeout(this.unreachableCheck);
    this.unreachableCheck = undefined;
    const error = new ConnectionClosedError(info);
    for (const cb of this.openQueue.splice(0)) cb(undefined, error);
    const streams = [...this.streams.values()];
    this.streams.clear();
    for (const s of streams) {
      const readOpen = !s.readDone;
      const writeOpen = !s.writeDone;
      s.readDone = true;
      s.writeDone = true;
      if (readOpen) s.reportReadEnd(error);
      else if (writeOpen) s.reportWriteError(error);
    }
    if (this.onClose) this.onClose(info);
  }

  private finalise(): void {
    if (this.finalised) return;
    this.finalised = true;
    if (!this.closeInfo) this.reportClose(readCloseInfo(this.conn, this.established));
    this.deadline.cancel();
    this.ack.cancel();
    this.endpoint.connectionGone(this);
  }

  // ---------------------------------------------------------------- streams

  private newLocalStream(): QuicStream {
    const s = new QuicStream(this, this.nextLocalBidi, false);
    this.nextLocalBidi += 4;
    this.uncommitted++;
    this.writeOpen++;
    this.streams.set(s.id, s);
    return s;
  }

  private drainOpenQueue(): void {
    while (this.openQueue.length > 0 && this.conn.peerStreamsLeftBidi() - this.uncommitted > 0 && !this.closeInfo) {
      const cb = this.openQueue.shift()!;
      cb(this.newLocalStream());
    }
  }

  private processReadable(): void {
    for (const id of readableStreams(this.conn, this.streams, this.limits.maxStreamsBidi > 0)) {
      let s = this.streams.get(id);
      if (s === undefined) {
        s = this.acceptPeerStream(id);
        if (s === undefined) {
          this.discard(id);
          continue;
        }
      }
      if (s.readDone) {
        // Reading stopped here (e.g. an oversize frame) but quiche's side is still open:
        // drop what arrives until the user resets the stream.
        if (!s.recvClosed) this.discard(id);
        continue;
      }
      this.readStream(s);
      if (this.closeInfo) return;
    }
  }

  private readStream(s: QuicStream): void {
    while (!s.readDone) {
      let r: [number, boolean] | null;
      try {
        r = this.conn.streamRecv(s.id, RECV_BUF);
      } catch (e) {
        const m = RESET_RE.exec((e as Error).message);
        s.recvClosed = true;
        s.readDone = true;
        this.readSideEnded(s);
        s.reportReadEnd(m ? new PeerResetError(Number(m[1])) : new StreamClosedError(`stream ${s.id}: ${(e as Error).message}`));
        return;
      }
      if (r === null) return;
      this.ack.streamData(r[0]);
      s.receive(RECV_BUF.subarray(0, r[0]), r[1]);
      if (r[1]) return;
    }
  }

  /** Drains (and drops) data of a stream this side no longer tracks. */
  private discard(id: number): void {
    for (let i = 0; i < 1024; i++) {
      try {
        if (this.conn.streamRecv(id, RECV_BUF) === null) return;
      } catch {
        return;
      }
    }
  }

  /** A readable stream ID not in the map: a new peer-initiated stream, or a stale one of ours. */
  private acceptPeerStream(id: number): QuicStream | undefined {
    const peerInitiated = ((id & 1) === 1) !== this.isServer;
    if (!peerInitiated || (id & 2) !== 0) return undefined;
    const index = id >>> 2;
    if (index < this.peerNext || this.peerAhead.has(index)) return undefined;
    if (index === this.peerNext) {
      this.peerNext++;
      while (this.peerAhead.delete(this.peerNext)) this.peerNext++;
    } else this.peerAhead.add(index);
    const s = new QuicStream(this, id, true);
    this.writeOpen++;
    this.streams.set(id, s);
    if (this.onStream) this.onStream(s);
    else s.reset(this.limits.refusedStreamCode);
    return s;
  }

  /** Every open send side is asked, not only quiche's `writable()`: that does not list a stream with capacity left the peer stopped (quiche 0.18). */
  private processWritable(): void {
    for (const s of this.streams.values()) if (s.committed && !s.writeDone && this.capacity(s) > 0 && s.pending) this.resumeWrite(s);
  }

  /** Bytes quiche accepts on `s` now; -1 (reported to `s`) when the peer stopped it or quiche released it. */
  private capacity(s: QuicStream): number {
    try {
      return this.conn.streamCapacity(s.id);
    } catch (e) {
      this.writeFailed(s, e);
      return -1;
    }
  }

  /** @internal */
  streamWrite(s: QuicStream, bytes: Uint8Array, fin: boolean): void {
    if (this.closeInfo) throw new ConnectionClosedError(this.closeInfo);
    if (!s.committed) {
      s.committed = true;
      this.uncommitted--;
    }
    if (fin) s.finPending = true;
    this.ack.sendWanted = true;
    if (s.pending) {
      s.pending.push(bytes);
      return;
    }
    let n: number | null;
    try {
      n = this.conn.streamSend(s.id, bytes, fin);
    } catch (e) {
      this.writeFailed(s, e);
      return;
    }
    if (n !== null && n === bytes.byteLength) {
      if (fin) this.writeSideEnded(s);
    } else {
      s.pending = [n === null ? bytes : bytes.subarray(n)];
      this.blocked++;
    }
    this.endpoint.scheduleFlush(this);
  }

  private resumeWrite(s: QuicStream): void {
    const pending = s.pending!;
    this.ack.sendWanted = true;
    while (pending.length > 0) {
      const chunk = pending[0]!;
      const fin = pending.length === 1 && s.finPending;
      let n: number | null;
      try {
        n = this.conn.streamSend(s.id, chunk, fin);
      } catch (e) {
        this.writeFailed(s, e);
        return;
      }
      if (n === null) return;
      if (n < chunk.byteLength) {
        pending[0] = chunk.subarray(n);
        return;
      }
      pending.shift();
    }
    s.pending = undefined;
    this.blocked--;
    if (s.finPending) this.writeSideEnded(s);
  }

  private writeFailed(s: QuicStream, e: unknown): void {
    const m = STOPPED_RE.exec((e as Error).message);
    this.writeSideEnded(s);
    s.reportWriteError(m ? new PeerStopError(Number(m[1])) : new StreamClosedError(`stream ${s.id}: ${(e as Error).message}`));
  }

  /** @internal */
  streamShutdown(s: QuicStream, code: number, read: boolean, write: boolean): void {
    if (this.closeInfo) return;
    this.ack.sendWanted = true;
    if (!s.committed) {
      // quiche does not know the stream yet: create it (empty FIN) so the ID is not skipped.
      s.committed = true;
      this.uncommitted--;
      try {
        this.conn.streamSend(s.id, EMPTY, true);
      } catch {
        /* ignore */
      }
    }
    if (write && !s.writeDone) {
      try {
        this.conn.streamShutdown(s.id, quiche.Shutdown.Write, code);
      } catch {
        /* already finished */
      }
      this.writeSideEnded(s);
    }
    if (read && !s.recvClosed) {
      this.ack.sendDue(); // the STOP_SENDING leaves after the ACKs due, not with them (AckDelay.sendDue)
      s.recvClosed = true;
      try {
        this.conn.streamShutdown(s.id, quiche.Shutdown.Read, code);
      } catch {
        /* already finished */
      }
      if (!s.readDone) {
        s.readDone = true;
        this.readSideEnded(s);
      }
    }
    this.endpoint.scheduleFlush(this);
  }

  private writeSideEnded(s: QuicStream): void {
    if (s.writeDone) return;
    s.writeDone = true;
    this.writeOpen--;
    if (s.pending) {
      s.pending = undefined;
      this.blocked--;
    }
    if (s.readDone) this.streams.delete(s.id);
  }

  /** @internal (readDone already set) */
  readSideEnded(s: QuicStream): void {
    if (s.writeDone) this.streams.delete(s.id);
  }
}
