/**
 * When the engine acts: the two timers of a connection, {@link QuicheDeadline} (quiche's
 * loss-detection / idle / draining deadline) and {@link AckDelay} (when the end-of-turn send
 * may wait for data to carry its ACK, RFC 9000 §13.2, instead of sending an ACK-only datagram
 * at once), and the endpoint's end-of-turn passes ({@link TurnQueue}).
 */
import { performance } from "node:perf_hooks";
import type { Connection } from "@matrixai/quic/native/index.js";
import type { QuicConnection } from "./connection.js";

/**
 * @internal One `setTimeout` for quiche's next deadline (`timeout()`), re-armed only when the
 * deadline moves earlier; a timer that fires early re-arms itself. When the deadline has come,
 * `onExpired` runs (it calls quiche's `on_timeout` and sends).
 */
export class QuicheDeadline {
  private timer: NodeJS.Timeout | undefined;
  private at = Infinity;

  constructor(
    private readonly conn: Connection,
    private readonly onExpired: () => void,
  ) {}

  /** Follows quiche's current deadline (none: the timer is cleared). */
  arm(): void {
    const t = this.conn.timeout();
    if (t === null) {
      this.cancel();
      return;
    }
    const at = performance.now() + t;
    // An armed timer that fires no later than needed is kept (it re-arms if early).
    if (this.timer && this.at <= at + 1) return;
    if (this.timer) clearTimeout(this.timer);
    this.at = at;
    this.timer = setTimeout(this.fire, t + 1);
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.at = Infinity;
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.at = Infinity;
    const t = this.conn.timeout();
    if (t !== null && t > 0) this.arm();
    else this.onExpired();
  };
}

/**
 * How long (ms) the ACK of a packet that carried stream data may wait for data of our own to
 * ride on (RFC 9000 §13.2.1: 1-RTT packets are acknowledged within the advertised
 * max_ack_delay, quiche's default 25 ms; this stays well below it).
 */
export const ACK_DELAY_MS = 5;

/**
 * Bytes of stream data one datagram is taken to carry at most, when a turn's datagrams are
 * attributed to the stream data read in it (the smallest datagram QUIC allows, RFC 9000 §14).
 */
const DATA_BYTES_PER_DATAGRAM = 1200;

/**
 * @internal Per-connection state of the decision. Only an ACK is due, and it may wait up to
 * {@link ACK_DELAY_MS}, when since the last send at most one datagram delivered stream data,
 * none was a handshake packet, nothing else was handed to quiche (stream data, a reset, a PING,
 * a close), the last packet sent was not a full one (bulk data in flight: quiche may hold more,
 * held back by congestion control, that an incoming ACK releases) and no packet of ours was
 * declared lost since (quiche retransmits at its next send). Datagrams that delivered no stream
 * data (ACKs, MAX_STREAMS, MAX_DATA, PING: quic-go sends a MAX_STREAMS in a packet of its own
 * whenever one of its peer's streams is done) do not count towards the two ack-eliciting
 * packets after which an ACK is sent at once (RFC 9000 §13.2.2); they are acknowledged with the
 * next data, within {@link ACK_DELAY_MS}. quiche reads the stream data of a turn's datagrams
 * only after all of them: a turn that read stream data counts as many data datagrams as it had
 * datagrams, at most one per chunk read and per 1200 bytes read.
 */
export class AckDelay {
  /** Something besides ACKs was handed to quiche since the last send. */
  sendWanted = false;
  /** The last packet sent filled its datagram. */
  lastPacketFull = false;
  /** Datagrams since the last send. */
  private received = 0;
  /** Datagrams since the last send that delivered stream data (by the per-turn estimate). */
  private dataDatagrams = 0;
  private turnDatagrams = 0;
  private turnChunks = 0;
  private turnBytes = 0;
  private lostSeen = 0;
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param conn the quiche connection (its `stats().lost`: packets declared lost so far)
   * @param onTimer sends (the delay ran out)
   */
  constructor(
    private readonly conn: Connection,
    private readonly onTimer: () => void,
  ) {}

  /** A datagram arrived; `immediate`: it is acknowledged at once (a handshake packet). */
  datagram(immediate: boolean): void {
    this.received++;
    this.turnDatagrams++;
    if (immediate) this.sendWanted = true;
  }

  /** `bytes` of stream data were read from quiche (one `stream_recv`) in this turn. */
  streamData(bytes: number): void {
    this.turnChunks++;
    this.turnBytes += bytes;
  }

  /** Arms the delay (once) and returns true when the send may wait; false: send now. */
  wait(): boolean {
    if (this.turnChunks > 0) {
      const perData = Math.max(this.turnChunks, Math.ceil(this.turnBytes / DATA_BYTES_PER_DATAGRAM));
      this.dataDatagrams += Math.min(this.turnDatagrams, perData);
    }
    this.turnDatagrams = 0;
    this.turnChunks = 0;
    this.turnBytes = 0;
    if (this.sendWanted || this.lastPacketFull || this.received === 0 || this.dataDatagrams > 1) return false;
    if (this.timer === undefined) {
      // When the delay starts and a datagram without stream data (e.g. an ACK) came: a loss it
      // made quiche detect wants its retransmission now.
      if (this.received > this.dataDatagrams) {
        const lost = this.conn.stats().lost;
        if (lost !== this.lostSeen) {
          this.lostSeen = lost;
          return false;
        }
      }
      this.timer = setTimeout(this.fire, ACK_DELAY_MS);
    }
    return true;
  }

  /**
   * Sends the ACKs due now, if any, before a STOP_SENDING is handed to quiche: when the peer's
   * quiche gets a STOP_SENDING in a packet that acknowledges the last data of that stream, it
   * releases the stream at once, and its writer learns neither of the stop nor of its code.
   */
  sendDue(): void {
    if (this.received > 0) this.onTimer();
  }

  /** A send is happening: everything due leaves with it. */
  sending(): void {
    this.sendWanted = false;
    this.received = 0;
    this.dataDatagrams = 0;
    this.turnDatagrams = 0;
    this.turnChunks = 0;
    this.turnBytes = 0;
    this.cancel();
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.onTimer();
  };
}

/**
 * @internal Connections queued, each at most once, for one pass at the end of the event-loop turn
 * (`setImmediate`). `before`: a queue whose pass must run first (it runs inline when still
 * pending).
 */
export class TurnQueue {
  private queued = new Set<QuicConnection>();
  private pending = false;

  constructor(
    private readonly pass: (conn: QuicConnection) => void,
    private readonly before?: TurnQueue,
  ) {}

  add(conn: QuicConnection): void {
    this.queued.add(conn);
    if (!this.pending) {
      this.pending = true;
      setImmediate(this.run);
    }
  }

  readonly run = (): void => {
    if (this.before && this.before.queued.size > 0) this.before.run();
    this.pending = false;
    const list = this.queued;
    if (list.size === 0) return;
    this.queued = new Set();
    for (const c of list) this.pass(c);
  };
}
