/**
 * A lossy UDP relay for tests: sits between one client and one server on 127.0.0.1 and drops a
 * given fraction of the datagrams in each direction, so transport-level loss recovery (QUIC,
 * RFC 9002 §6 loss detection) can be exercised on loopback.
 *
 * - The client sends to `proxy.port`; the proxy forwards from its own socket to the server, so
 *   the server sees the proxy as its peer. The first address that sends to `proxy.port` becomes
 *   "the client"; datagrams from any other address are counted in `ignored` and dropped.
 * - Drop decisions come from one seeded PRNG per direction (mulberry32), so the n-th datagram of
 *   a direction is always treated the same way for a given seed (the overall run still depends on
 *   timing, since it decides which datagram is the n-th).
 * - Bounded: nothing is queued or buffered; each datagram is forwarded or dropped when it
 *   arrives (datagram size is limited by UDP itself, 65,507 bytes on IPv4).
 * - `close()` releases both sockets; it is idempotent.
 */
import dgram from "node:dgram";
import type { AddressInfo } from "node:net";
import { mulberry32 } from "./prng.js";

/** Loss rates, each a fraction in [0, 1] of the datagrams of that direction to drop. */
export interface LossRates {
  /** Client → server datagrams to drop, in [0, 1]. */
  clientToServer: number;
  /** Server → client datagrams to drop, in [0, 1]. */
  serverToClient: number;
}

/** Options of {@link UdpLossProxy.start}. */
export interface UdpLossProxyOptions {
  /** UDP port of the server to forward to (on `targetHost`). */
  targetPort: number;
  /** Host of the server; default `127.0.0.1`. */
  targetHost?: string;
  /** Initial loss rates; default no loss. Change later with {@link UdpLossProxy.setLoss}. */
  loss?: Partial<LossRates>;
  /** PRNG seed (any 32-bit integer); default 1. */
  seed?: number;
}

/** Counters of one direction. */
export interface DirectionCounters {
  /** Datagrams passed on. */
  forwarded: number;
  /** UDP payload bytes of the datagrams passed on. */
  forwardedBytes: number;
  /** Datagrams dropped on purpose (loss injection). */
  dropped: number;
  /** Datagrams whose forwarding failed in the kernel (send callback error). */
  sendErrors: number;
}

/** Counters of a proxy; a snapshot is returned by {@link UdpLossProxy.stats}. */
export interface UdpLossProxyStats {
  clientToServer: DirectionCounters;
  serverToClient: DirectionCounters;
  /** Datagrams from addresses other than the client / the server, discarded. */
  ignored: number;
}

/** mulberry32 (./prng.ts), under the name this module's users know. */
export const seededRandom = mulberry32;

function checkRate(name: string, v: number): number {
  if (!Number.isFinite(v) || v < 0 || v > 1) throw new RangeError(`${name} must be a fraction in [0, 1], got ${v}`);
  return v;
}

function bind(socket: dgram.Socket, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(0, host, () => {
      socket.off("error", reject);
      resolve();
    });
  });
}

/** A one-client UDP relay with seeded, per-direction loss injection (see the module comment). */
export class UdpLossProxy {
  private readonly front: dgram.Socket;
  private readonly back: dgram.Socket;
  private readonly targetHost: string;
  private readonly targetPort: number;
  private readonly rngC2S: () => number;
  private readonly rngS2C: () => number;
  private rates: LossRates;
  private client: { address: string; port: number } | undefined;
  private closed = false;
  private readonly counters: UdpLossProxyStats = {
    clientToServer: { forwarded: 0, forwardedBytes: 0, dropped: 0, sendErrors: 0 },
    serverToClient: { forwarded: 0, forwardedBytes: 0, dropped: 0, sendErrors: 0 },
    ignored: 0,
  };
  /** Socket errors seen after start (the proxy keeps running; tests may assert on this). */
  readonly errors: Error[] = [];

  private constructor(front: dgram.Socket, back: dgram.Socket, opts: UdpLossProxyOptions) {
    this.front = front;
    this.back = back;
    this.targetHost = opts.targetHost ?? "127.0.0.1";
    this.targetPort = opts.targetPort;
    const seed = opts.seed ?? 1;
    this.rngC2S = seededRandom(seed);
    this.rngS2C = seededRandom(seed ^ 0x9e3779b9);
    this.rates = { clientToServer: 0, serverToClient: 0 };
    this.setLoss(opts.loss ?? {});
  }

  /**
   * Binds the proxy on 127.0.0.1 (an ephemeral port) and starts relaying.
   *
   * @throws {RangeError} if a loss rate is outside [0, 1] or `targetPort` is not a valid port.
   * @throws the socket error if binding fails.
   */
  static async start(opts: UdpLossProxyOptions): Promise<UdpLossProxy> {
    if (!Number.isInteger(opts.targetPort) || opts.targetPort <= 0 || opts.targetPort > 65535) {
      throw new RangeError(`targetPort must be a port number, got ${opts.targetPort}`);
    }
    const front = dgram.createSocket("udp4");
    const back = dgram.createSocket("udp4");
    let proxy: UdpLossProxy;
    try {
      proxy = new UdpLossProxy(front, back, opts);
      await bind(front, "127.0.0.1");
      await bind(back, "127.0.0.1");
    } catch (e) {
      front.close();
      back.close();
      throw e;
    }
    front.on("message", (msg, rinfo) => proxy.onClientDatagram(msg, rinfo));
    back.on("message", (msg, rinfo) => proxy.onServerDatagram(msg, rinfo));
    front.on("error", (e) => proxy.errors.push(e));
    back.on("error", (e) => proxy.errors.push(e));
    return proxy;
  }

  /** The UDP port (on 127.0.0.1) clients should send to. */
  get port(): number {
    return (this.front.address() as AddressInfo).port;
  }

  /**
   * Changes the loss rates from now on (fields left out keep their value).
   * @throws {RangeError} if a rate is outside [0, 1].
   */
  setLoss(rates: Partial<LossRates>): void {
    this.rates = {
      clientToServer: checkRate("clientToServer", rates.clientToServer ?? this.rates.clientToServer),
      serverToClient: checkRate("serverToClient", rates.serverToClient ?? this.rates.serverToClient),
    };
  }

  /** A snapshot of the counters. */
  stats(): UdpLossProxyStats {
    return {
      clientToServer: { ...this.counters.clientToServer },
      serverToClient: { ...this.counters.serverToClient },
      ignored: this.counters.ignored,
    };
  }

  /** Stops relaying and closes both sockets. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([this.front, this.back].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }

  private onClientDatagram(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    if (this.closed) return;
    if (this.client === undefined) this.client = { address: rinfo.address, port: rinfo.port };
    else if (this.client.address !== rinfo.address || this.client.port !== rinfo.port) {
      this.counters.ignored++;
      return;
    }
    const c = this.counters.clientToServer;
    if (this.rngC2S() < this.rates.clientToServer) {
      c.dropped++;
      return;
    }
    c.forwarded++;
    c.forwardedBytes += msg.length;
    this.back.send(msg, this.targetPort, this.targetHost, (err) => {
      if (err) c.sendErrors++;
    });
  }

  private onServerDatagram(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    if (this.closed) return;
    if (this.client === undefined || rinfo.port !== this.targetPort) {
      this.counters.ignored++;
      return;
    }
    const c = this.counters.serverToClient;
    if (this.rngS2C() < this.rates.serverToClient) {
      c.dropped++;
      return;
    }
    c.forwarded++;
    c.forwardedBytes += msg.length;
    this.front.send(msg, this.client.port, this.client.address, (err) => {
      if (err) c.sendErrors++;
    });
  }
}
