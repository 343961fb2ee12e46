/**
 * {@link RpcClient}: the one transport client. It implements {@link Sender} and
 * {@link StreamingSender} over any {@link Link} (src/quic/quic-link.ts, src/tls/tls-link.ts)
 * and holds everything that is not the wire:
 * - the call table: calls wait in a FIFO until a link exists and grants a stream (at most
 *   `maxConcurrentCalls` at once; QUIC: the peer's stream credit, quic-notes fault 2);
 * - one deadline mechanism: every pending call's deadline in one sweep with one timer;
 * - cancel: an aborted or expired call is cancelled on its link (QUIC: stream reset; TLS:
 *   `stream_cancel`);
 * - connect, backoff and reconnect: one link at a time, opened on demand; a failed attempt or
 *   a lost link delays the next attempt by `reconnectMinMs`, doubling to `reconnectMaxMs`, reset
 *   by the first response on a new link;
 * - liveness: when a call's deadline expires on a link that counts packets and none arrived
 *   for longer than `livenessMs`, or a request on an idle link draws no packet within
 *   `REQUEST_LIVENESS_MS`, the link is dropped at once (quic-notes fault 3; ./liveness.ts);
 * - retry: a call whose link died with no packet received since its request was written is sent
 *   once more on a new link (docs/reliability.md, "Retry");
 * - the error kinds ({@link SenderError}); the refusals learnt per link ({@link RefusedKinds});
 *   the resync of a lost subscription ({@link RESUBSCRIBED_EVENT_TYPE}).
 *
 * A unary call completes with its first response frame; a streaming call is the same call,
 * completing when its frame handler says so or when the link ends the call cleanly.
 */
import { performance } from "node:perf_hooks";
import { newRequestId } from "../translate/request-id.js";
import type { PluginRequest, PluginResponse } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { createPluginResponse, encodePluginRequest } from "../gen/proto/orchestra/plugin/v1/plugin_codec.js";
import { MAX_FRAME_BYTES, PAYLOAD_CODEC_OPTIONS } from "../framing/frame.js";
import type { Logger } from "../log.js";
import { messageOf, senderError, SenderError, StreamUnsupportedError, type SenderErrorKind } from "./errors.js";
import type { CallEvents, CancelReason, Link, LinkCall, LinkDialer } from "./link.js";
import { ReceiveWatch, RequestWatch } from "./liveness.js";
import { RefusedKinds, refusalOf, type CancelSignal, type FrameHandler, type SendOptions, type StreamingSender } from "./sender.js";

export { REQUEST_LIVENESS_MS, ReceiveWatch } from "./liveness.js";

/**
 * Event type of the synthetic `event_delivery` that starts a subscription re-established after
 * the previous one to the same topic was lost (events during the gap may have been missed).
 */
export const RESUBSCRIBED_EVENT_TYPE = "orchestra-stdio.resubscribed";

/** Options of {@link RpcClient} (validated by the link's sender class). */
export interface RpcClientOptions {
  /** Per-call deadline of a unary call when `SendOptions.timeoutMs` is not given, ms. */
  callTimeoutMs: number;
  /** First delay before reconnecting after a failure, ms (doubles per failure). */
  reconnectMinMs: number;
  /** Largest delay between connection attempts, ms. */
  reconnectMaxMs: number;
  /** Most calls open on the link at once; further calls queue. */
  maxConcurrentCalls: number;
  /** Silence (no packet received) after which a call deadline drops the link, ms. */
  livenessMs: number;
  logger: Logger;
}

/** Longest delay `setTimeout` honours (ms). */
const MAX_TIMER_MS = 2_147_483_647;

/** Deadline checks run at most this often (ms): a deadline may fire this much late. */
const DEADLINE_SLACK_MS = 10;

interface Conn {
  link: Link;
  calls: Set<Call>;
  dead: boolean;
  /** A response arrived on this link. */
  proven: boolean;
  /** A streaming call was opened on this link. */
  streamed: boolean;
  recvWatch: ReceiveWatch;
  /** Streaming request kinds the orchestrator on this link does not implement. */
  refused: RefusedKinds;
  /** The request liveness check (./liveness.ts); created with the first request on an idle link. */
  probe: RequestWatch | undefined;
}

interface Call {
  request: PluginRequest;
  payload: Uint8Array;
  /** Streaming calls: the caller's frame handler; undefined for a unary call. */
  onFrame: FrameHandler | undefined;
  resolve: (r: PluginResponse | undefined) => void;
  reject: (e: SenderError | Error) => void;
  settled: boolean;
  /** `performance.now()` time of the deadline (Infinity: none). */
  deadline: number;
  /** The deadline as given, in ms (for the error message). */
  timeoutMs: number;
  signal: CancelSignal | undefined;
  onAbort: (() => void) | undefined;
  conn: Conn | undefined;
  linkCall: LinkCall | undefined;
  frames: number;
  /** A `subscribe` whose request went out (it may be lost later). */
  subscribed: boolean;
  /** The link's received-packet count right after the request was written (undefined: no counter). */
  packetsAtWrite: number | undefined;
  /** The loss that made this call a retry (it is retried at most once). */
  retryOf: SenderError | undefined;
}

/** The transport client over the links of one {@link LinkDialer} (see the module comment). */
export class RpcClient implements StreamingSender {
  /** `host:port` as given (used in every error message). */
  readonly address: string;
  /** Whether {@link stream} is available (the link kind carries streaming RPCs). */
  readonly streams: boolean;
  private readonly log: Logger;
  private conn: Conn | undefined;
  private connecting: Promise<void> | undefined;
  private readonly dialAbort = new AbortController();
  private readonly queue: Call[] = [];
  private active = 0;
  private closed = false;
  /** Unsettled calls (queued or on a link), for the shared deadline timer. */
  private readonly pending = new Set<Call>();
  private deadlineTimer: NodeJS.Timeout | undefined;
  private deadlineAt = Infinity;
  /** Consecutive failures (failed attempts, links lost before answering), and the earliest next attempt. */
  private failures = 0;
  private nextConnectAt = 0;
  private backoffTimer: NodeJS.Timeout | undefined;
  private readonly closing = new Set<Promise<void>>();
  /** Topics whose established subscription was lost: the next one to it starts with a resync event. */
  private readonly lostTopics = new Set<string>();
  /** Calls taken off a dying link, queued again on the next microtask (see {@link retry}). */
  private readonly retrying: Call[] = [];
  /** The current outage's connect failure was logged at warn level. */
  private outageLogged = false;

  constructor(
    private readonly dialer: LinkDialer,
    private readonly opts: RpcClientOptions,
  ) {
    this.address = dialer.address;
    this.streams = dialer.streams;
    this.log = opts.logger;
  }

  /** Calls on the link / waiting for it, and whether a link is up (for diagnostics and tests). */
  get stats(): { active: number; queued: number; connected: boolean } {
    return { active: this.active, queued: this.queue.length, connected: this.conn !== undefined };
  }

  /** Calls sent and awaiting their response. */
  get inFlight(): number {
    return this.active;
  }

  /** Delay before the next connection attempt would be made, in ms (0 = at once). */
  get reconnectDelayMs(): number {
    return Math.max(0, this.nextConnectAt - performance.now());
  }

  /**
   * Sends one request and resolves with its response. An empty `request_id` is replaced by a
   * UUIDv7.
   * @throws SenderError kind `frame` (request unencodable or over 16 MiB, response oversized or
   *   malformed), `connect`, `closed`, `timeout`, `aborted` or `protocol` (refused by the server,
   *   request_id mismatch or already in flight)
   */
  send(request: PluginRequest, options: SendOptions = {}): Promise<PluginResponse> {
    const requested = options.timeoutMs && options.timeoutMs > 0 ? options.timeoutMs : this.opts.callTimeoutMs;
    return this.call(request, undefined, options, requested) as Promise<PluginResponse>;
  }

  /** See {@link StreamingSender.stream}. */
  async stream(request: PluginRequest, onFrame: FrameHandler, options: SendOptions = {}): Promise<void> {
    await this.call(request, onFrame, options, options.timeoutMs && options.timeoutMs > 0 ? options.timeoutMs : Infinity);
  }

  /**
   * Closes the link; queued and in-flight calls reject with `SenderError('closed')`. Idempotent.
   * Resolves once a connection attempt in progress has settled and the link is closed.
   */
  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.dialAbort.abort();
      if (this.backoffTimer) clearTimeout(this.backoffTimer);
      const error = this.err("closed", "sender closed");
      for (const call of [...this.queue.splice(0), ...this.retrying.splice(0)]) this.fail(call, error, "shutdown");
      const conn = this.conn;
      this.conn = undefined;
      if (conn) this.drop(conn, error, true);
    }
    if (this.connecting) await this.connecting.catch(() => {});
    await Promise.all([...this.closing]);
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
  }

  // ------------------------------------------------------------------------------------------

  private call(request: PluginRequest, onFrame: FrameHandler | undefined, options: SendOptions, requestedMs: number): Promise<PluginResponse | undefined> {
    if (this.closed) return Promise.reject(this.err("closed", "sender is closed"));
    if (options.signal?.aborted) return Promise.reject(this.err("aborted", "call aborted before it was sent", options.signal.reason));
    const req = request.requestId === "" ? { ...request, requestId: newRequestId() } : request;
    let payload: Uint8Array;
    try {
      payload = encodePluginRequest(req, PAYLOAD_CODEC_OPTIONS);
    } catch (e) {
      return Promise.reject(this.err("frame", `cannot encode PluginRequest: ${messageOf(e)}`, e));
    }
    if (payload.byteLength > MAX_FRAME_BYTES) {
      return Promise.reject(this.err("frame", `request frame of ${payload.byteLength} bytes exceeds the ${MAX_FRAME_BYTES}-byte limit`));
    }
    const timeoutMs = Math.min(requestedMs, MAX_TIMER_MS); // setTimeout fires at once beyond 2^31-1 ms
    return new Promise<PluginResponse | undefined>((resolve, reject) => {
      const signal = options.signal;
      const call: Call = {
        request: req,
        payload,
        onFrame,
        resolve,
        reject,
        settled: false,
        deadline: requestedMs === Infinity ? Infinity : performance.now() + timeoutMs,
        timeoutMs,
        signal,
        onAbort: undefined,
        conn: undefined,
        linkCall: undefined,
        frames: 0,
        subscribed: false,
        packetsAtWrite: undefined,
        retryOf: undefined,
      };
      if (signal) {
        call.onAbort = () => this.fail(call, this.err("aborted", "call aborted", signal.reason), "cancelled");
        signal.addEventListener("abort", call.onAbort, { once: true });
      }
      this.pending.add(call);
      if (call.deadline < this.deadlineAt) this.armDeadline(call.deadline);
      this.queue.push(call);
      this.pump();
    });
  }

  private err(kind: SenderErrorKind, detail: string, cause?: unknown): SenderError {
    return senderError(this.address, kind, detail, cause);
  }

  /** (Re)arms the shared deadline timer for `at` (a `performance.now()` time). */
  private armDeadline(at: number): void {
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.deadlineAt = at;
    this.deadlineTimer = setTimeout(() => this.sweepDeadlines(), Math.max(0, at - performance.now()));
    // It may outlive every call (it is not cleared when the earliest call settles): it must not
    // keep the process alive on its own. Open links do that while calls are pending.
    this.deadlineTimer.unref();
  }

  /** Fails every call whose deadline passed and re-arms the timer for the earliest remaining one. */
  private sweepDeadlines(): void {
    this.deadlineTimer = undefined;
    this.deadlineAt = Infinity;
    const now = performance.now();
    const expired: Call[] = [];
    let next = Infinity;
    for (const call of this.pending) {
      if (call.deadline <= now + 1) expired.push(call);
      else if (call.deadline < next) next = call.deadline;
    }
    for (const call of expired) {
      const conn = call.conn;
      const what = call.onFrame ? "no end of stream" : "no response";
      this.fail(call, this.err("timeout", `${what} within ${call.timeoutMs} ms`), "timeout");
      if (conn && !conn.dead) this.checkLiveness(conn, now);
    }
    if (next !== Infinity && this.pending.size > 0) this.armDeadline(Math.max(next, now + DEADLINE_SLACK_MS));
  }

  /**
   * Called when a call on `conn` hit its deadline: if the link received no packet at all (not
   * even the ACK of a keep-alive PING) for longer than `livenessMs`, the peer is gone, so the
   * link is dropped now rather than at its idle timeout.
   */
  private checkLiveness(conn: Conn, now: number): void {
    const packets = conn.link.packetsReceived;
    if (packets === undefined) return;
    const silent = conn.recvWatch.silentFor(packets, now);
    if (silent > this.opts.livenessMs) {
      this.lost(conn, this.err("closed", `connection lost: no packet received for ${Math.round(silent)} ms`));
    }
  }

  /** Starts as many queued calls as the link, the local cap and the peer's credit allow. */
  private pump(): void {
    if (this.closed) return;
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      if (head.settled) {
        this.queue.shift();
        continue;
      }
      const conn = this.conn;
      if (!conn) {
        this.connect();
        return;
      }
      if (this.active >= this.opts.maxConcurrentCalls) return;
      const kind = head.request.request.case;
      const refused = head.onFrame ? conn.refused.reason(kind) : undefined;
      if (refused !== undefined) {
        this.fail(head, new StreamUnsupportedError(`orchestrator ${this.address}: ${refused} (earlier on this connection)`), "refused");
        continue;
      }
      let linkCall: LinkCall | undefined;
      try {
        linkCall = conn.link.open(head.request.requestId, head.onFrame !== undefined, this.events(head));
      } catch (e) {
        this.fail(head, this.asSenderError(e), "internal");
        continue;
      }
      if (linkCall === undefined) return; // no credit: the link calls onCredit (→ pump)
      this.queue.shift();
      this.start(head, conn, linkCall);
    }
  }

  private events(call: Call): CallEvents {
    return {
      frame: (response) => this.onResponse(call, response),
      end: (error, reason) => this.onEnd(call, error, reason),
    };
  }

  private start(call: Call, conn: Conn, linkCall: LinkCall): void {
    const idle = conn.proven && conn.calls.size === 0;
    this.active++;
    call.conn = conn;
    call.linkCall = linkCall;
    conn.calls.add(call);
    if (call.onFrame) conn.streamed = true;
    try {
      linkCall.write(call.payload);
    } catch (e) {
      this.fail(call, this.asSenderError(e), "internal");
      return;
    }
    call.packetsAtWrite = conn.link.packetsReceived;
    const packets = call.packetsAtWrite;
    if (idle && packets !== undefined) {
      // The request liveness check (./liveness.ts); a later request restarts it.
      conn.probe ??= new RequestWatch(
        () => (conn.dead ? undefined : conn.link.packetsReceived),
        (ms) => this.lost(conn, this.err("closed", `connection lost: no packet received for ${ms} ms after a request on the idle connection`)),
      );
      conn.probe.start(packets);
    }
    const sub = call.request.request.case === "subscribe" ? call.request.request.value : undefined;
    if (sub && !call.settled) {
      call.subscribed = true;
      if (this.lostTopics.delete(sub.topic)) {
        this.log.debug({ address: this.address, topic: sub.topic }, "subscription re-established after a loss");
        this.deliver(
          call,
          createPluginResponse({
            requestId: call.request.requestId,
            response: { case: "eventDelivery", value: { subscriptionId: sub.subscriptionId, topic: sub.topic, eventType: RESUBSCRIBED_EVENT_TYPE } },
          }),
        );
      }
    }
  }

  private onResponse(call: Call, response: PluginResponse): void {
    if (call.settled) return;
    const conn = call.conn!;
    if (!conn.proven) {
      conn.proven = true;
      this.failures = 0;
      this.nextConnectAt = 0;
      this.outageLogged = false;
    }
    call.frames++;
    const id = call.request.requestId;
    if (response.requestId !== "" && response.requestId !== id) {
      const detail = `response request_id ${JSON.stringify(response.requestId)} does not match ${JSON.stringify(id)}`;
      this.fail(call, this.err("protocol", detail), "malformed");
      return;
    }
    if (!call.onFrame) {
      this.complete(call, response);
      return;
    }
    const refusal = call.frames === 1 ? refusalOf(call.request, response) : undefined;
    if (refusal !== undefined) {
      this.fail(call, new StreamUnsupportedError(`orchestrator ${this.address}: ${refusal}`), "refused");
      return;
    }
    this.deliver(call, response);
  }

  /** Hands one frame to a streaming call's handler; completes or cancels the call as it says. */
  private deliver(call: Call, response: PluginResponse): void {
    let complete: boolean | void;
    try {
      complete = call.onFrame!(response);
    } catch (e) {
      this.fail(call, e instanceof Error ? e : new Error(String(e)), "cancelled");
      return;
    }
    if (complete) this.complete(call, undefined);
  }

  private onEnd(call: Call, error: SenderError | undefined, reason: CancelReason = "malformed"): void {
    if (call.settled) return;
    if (error && this.retryable(call, call.conn!.link.packetsReceived)) this.retry(call, error);
    else if (error) this.fail(call, error, reason);
    else if (call.frames === 0) this.fail(call, this.err("frame", "malformed response: stream ended before a frame arrived"), "malformed");
    else this.complete(call, undefined);
  }

  /** Resolves `call` (a unary call with its response) and releases its stream. */
  private complete(call: Call, response: PluginResponse | undefined): void {
    const linkCall = call.linkCall;
    this.noteLostSubscription(call, undefined);
    this.settle(call);
    call.resolve(response);
    linkCall?.release();
  }

  /** Rejects `call` once; cancels it on its link (with `reason`) if it was opened. */
  private fail(call: Call, error: SenderError | Error, reason: CancelReason): void {
    if (call.settled) return;
    const linkCall = call.linkCall;
    if (error instanceof StreamUnsupportedError && call.onFrame) call.conn?.refused.add(call.request.request.case, error.message);
    this.noteLostSubscription(call, error);
    if (!call.conn) {
      const i = this.queue.indexOf(call);
      if (i >= 0) this.queue.splice(i, 1);
    }
    this.settle(call);
    linkCall?.cancel(reason);
    call.reject(error);
  }

  /** A subscription that went out and ends without the caller's asking: its next one resyncs. */
  private noteLostSubscription(call: Call, error: Error | undefined): void {
    if (!call.subscribed || error instanceof StreamUnsupportedError || call.signal?.aborted || this.closed) return;
    if (call.request.request.case === "subscribe") this.lostTopics.add(call.request.request.value.topic);
  }

  private settle(call: Call): void {
    call.settled = true;
    this.pending.delete(call);
    if (call.onAbort) call.signal!.removeEventListener("abort", call.onAbort);
    const conn = call.conn;
    if (conn) {
      conn.calls.delete(call);
      this.active--;
      call.conn = undefined;
      call.linkCall = undefined;
      this.pump();
    }
  }

  private asSenderError(e: unknown): SenderError {
    return e instanceof SenderError ? e : this.err("protocol", messageOf(e), e);
  }

  /**
   * Opens a link for the queued calls, no sooner than the backoff allows after failures
   * (`reconnectMinMs` doubling up to `reconnectMaxMs`; reset by the first response on a link).
   */
  private connect(): void {
    if (this.connecting || this.closed) return;
    const wait = this.nextConnectAt - performance.now();
    const delayed: Promise<void> =
      wait > 0
        ? new Promise<void>((resolve) => {
            this.backoffTimer = setTimeout(() => {
              this.backoffTimer = undefined;
              resolve();
            }, wait);
            this.backoffTimer.unref(); // the waiting calls' own deadlines keep the process alive
          })
        : Promise.resolve();
    this.connecting = delayed
      .then(() => {
        if (this.closed) throw this.err("closed", "sender closed");
        if (this.queue.every((c) => c.settled)) return undefined; // nobody waits any more
        return this.dialer.dial(this.dialAbort.signal);
      })
      .then(
        (link) => {
          this.connecting = undefined;
          if (!link) {
            this.queue.length = 0;
            return;
          }
          const conn: Conn = { link, calls: new Set(), dead: false, proven: false, streamed: false, recvWatch: new ReceiveWatch(), refused: new RefusedKinds(), probe: undefined };
          if (this.closed) {
            this.drop(conn, this.err("closed", "sender closed"), true);
            return;
          }
          link.onDown = (error) => this.lost(conn, error);
          link.onCredit = () => this.pump();
          this.conn = conn;
          this.pump();
        },
        (e: unknown) => {
          this.connecting = undefined;
          const error = e instanceof SenderError ? e : this.err("connect", messageOf(e), e);
          if (this.closed) return; // close() already rejected everything
          this.noteFailure();
          // Once per outage: further failed attempts log at debug until a link answers.
          const fields = { address: this.address, err: error.message, retryInMs: Math.round(this.reconnectDelayMs) };
          if (this.outageLogged) this.log.debug(fields, `${this.dialer.name} connect failed`);
          else this.log.warn(fields, `${this.dialer.name} connect failed (further failures are logged at debug level until a connection succeeds)`);
          this.outageLogged = true;
          for (const call of this.queue.splice(0)) this.fail(call, call.retryOf ? this.retryFailed(call.retryOf, error) : error, "shutdown");
        },
      );
  }

  /** The error of a retried call whose reconnect failed: its original loss, naming the failure. */
  private retryFailed(loss: SenderError, error: SenderError): SenderError {
    const detail = loss.message.startsWith(`orchestrator ${this.address}: `) ? loss.message.slice(`orchestrator ${this.address}: `.length) : loss.message;
    return this.err(loss.kind, `${detail}; reconnecting failed: ${error.message}`, loss);
  }

  private noteFailure(): void {
    const backoff = Math.min(this.opts.reconnectMaxMs, this.opts.reconnectMinMs * 2 ** Math.min(this.failures, 30));
    this.failures++;
    this.nextConnectAt = performance.now() + backoff;
  }

  /** The link ended without our asking: log it, fail its calls, drop it; the next calls reconnect. */
  private lost(conn: Conn, error: SenderError): void {
    if (conn.dead) return;
    const packets = conn.link.packetsReceived;
    for (const call of [...conn.calls]) if (this.retryable(call, packets)) this.retry(call, error);
    // "streaming" when the link carried progress calls or subscriptions: their callers retry / resubscribe.
    this.log.warn({ address: this.address, err: error.message }, `${this.dialer.name} ${conn.streamed ? "streaming " : ""}connection lost`);
    if (this.conn === conn) this.conn = undefined;
    // Not in a tight loop: a link that answered had reset the failure count, so this waits
    // reconnectMinMs; one that never answered keeps doubling.
    this.noteFailure();
    this.drop(conn, error, false);
    this.pump();
  }

  /**
   * Whether `call`, on a link that died having received `packets` packets, provably never reached
   * a live peer (no packet since its request was written, not even its ACK), had no response, was
   * not retried before and is still awaited. See docs/reliability.md, "Retry".
   */
  private retryable(call: Call, packets: number | undefined): boolean {
    const unseen = call.packetsAtWrite !== undefined && packets === call.packetsAtWrite;
    return unseen && !this.closed && call.retryOf === undefined && call.frames === 0 && !call.settled && !call.signal?.aborted;
  }

  /**
   * Takes `call` off its dying link and queues it again, ahead of the calls not yet sent. The
   * queue is pumped on the next microtask: a link's streams end before the link reports its own
   * end (`onDown`), so by then the dying link is no longer the current one.
   */
  private retry(call: Call, loss: SenderError): void {
    const conn = call.conn!;
    const linkCall = call.linkCall;
    conn.calls.delete(call);
    this.active--;
    call.conn = undefined;
    call.linkCall = undefined;
    call.packetsAtWrite = undefined;
    call.subscribed = false;
    call.retryOf = loss;
    linkCall?.cancel("shutdown");
    this.log.debug({ address: this.address, requestId: call.request.requestId, err: loss.message }, "call retried on a new connection: the peer never received it");
    if (this.retrying.push(call) > 1) return;
    queueMicrotask(() => {
      this.queue.unshift(...this.retrying.splice(0).filter((c) => !c.settled));
      this.pump();
    });
  }

  /** Marks `conn` dead, rejects its calls with `error` and closes its link. */
  private drop(conn: Conn, error: SenderError, graceful: boolean): void {
    if (conn.dead) return;
    conn.dead = true;
    conn.probe?.cancel();
    for (const call of [...conn.calls]) this.fail(call, error, "shutdown");
    conn.link.onDown = undefined;
    conn.link.onCredit = undefined;
    const closing = conn.link.close(graceful).catch(() => {});
    this.closing.add(closing);
    void closing.then(() => this.closing.delete(closing));
  }
}
