/**
 * The liveness checks of the transport client (./rpc-client.ts): how long a link's
 * received-packet counter has stood still ({@link ReceiveWatch}), and the check of a request
 * written on an idle link ({@link watchRequest}, {@link REQUEST_LIVENESS_MS}).
 */

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
 * Calls `onSilent(REQUEST_LIVENESS_MS)` once the request liveness window has passed while
 * `silent()` still holds (no packet since the request was written). The decision is taken after
 * the event loop's poll phase: packets that arrived while it was busy are read first, so a
 * stalled process does not mistake its own delay for silence.
 * @returns the timer (unref'd), to clear when the link ends or a later request restarts the check
 */
export function watchRequest(silent: () => boolean, onSilent: (windowMs: number) => void): NodeJS.Timeout {
  const timer = setTimeout(() => {
    setImmediate(() => {
      if (silent()) onSilent(REQUEST_LIVENESS_MS);
    });
  }, REQUEST_LIVENESS_MS);
  timer.unref();
  return timer;
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
