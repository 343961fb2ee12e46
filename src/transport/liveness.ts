/**
 * The liveness checks of the transport client (./rpc-client.ts): how long a link's
 * received-packet counter has stood still ({@link ReceiveWatch}), and the check of a request
 * written on an idle link ({@link RequestWatch}, {@link REQUEST_LIVENESS_MS}).
 */
import { performance } from "node:perf_hooks";

/**
 * How long a request written on an idle link may go without any packet from the peer (not even
 * its ACK) before the link is dropped, ms. RFC 9002 §6.2.1: PTO = smoothed_rtt +
 * max(4·rttvar, kGranularity) + max_ack_delay, and a live peer acknowledges an ack-eliciting
 * packet within one PTO. Before any RTT sample (kInitialRtt 333 ms, rttvar 166.5 ms, §6.2.2;
 * max_ack_delay 25 ms) one PTO is about 1 s; on loopback or a LAN (RTT under 10 ms, PTO under
 * 70 ms) 1 s is more than a dozen PTOs. The engine's binding does not expose the RTT estimate,
 * so the window is this floor.
 */
export const REQUEST_LIVENESS_MS = 1_000;

/**
 * The request liveness check of one link: `onSilent(REQUEST_LIVENESS_MS)` once the window after
 * the latest {@link RequestWatch.start} has passed while `packetsNow()` still equals the count
 * given there (no packet since that request was written). The decision is taken after the event
 * loop's poll phase: packets that arrived while it was busy are read first, so a stalled process
 * does not mistake its own delay for silence. One timer, started by the first request and moved
 * on when it fires early (a later request restarted the window), not re-armed per request.
 */
export class RequestWatch {
  private timer: NodeJS.Timeout | undefined;
  /** `performance.now()` when the current window started. */
  private since = 0;
  private packets = 0;

  constructor(
    private readonly packetsNow: () => number | undefined,
    private readonly onSilent: (windowMs: number) => void,
  ) {}

  /** A request was written on the idle link with the received-packet count at `packets`: the window (re)starts now. */
  start(packets: number): void {
    this.packets = packets;
    this.since = performance.now();
    if (this.timer === undefined) this.arm(REQUEST_LIVENESS_MS);
  }

  /** Stops the check (the link ended). */
  cancel(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(this.fire, ms);
    this.timer.unref();
  }

  private readonly fire = (): void => {
    const left = this.since + REQUEST_LIVENESS_MS - performance.now();
    if (left > 1) {
      this.arm(left);
      return;
    }
    this.timer = undefined;
    const packets = this.packets;
    setImmediate(() => {
      if (this.packetsNow() === packets) this.onSilent(REQUEST_LIVENESS_MS);
    });
  };
}

/**
 * The liveness check's memory of one link: how long its received-packet counter has stood
 * still, judged at the moments it is sampled (call deadlines).
 */
export class ReceiveWatch {
  private packets = -1;
  private changedAt = 0;

  /** Samples `packetsReceived` at `now` (ms); returns how long it has not moved (0 when it just did). */
  silentFor(packetsReceived: number, now: number): number {
    if (packetsReceived !== this.packets) {
      this.packets = packetsReceived;
      this.changedAt = now;
      return 0;
    }
    return now - this.changedAt;
  }
}
