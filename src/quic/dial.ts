/**
 * Connecting to an orchestrator by name: every address the name resolves to is tried, IPv6 and
 * IPv4 interleaved in the resolver's order, each attempt started when the previous one failed
 * or after {@link CONNECTION_ATTEMPT_DELAY_MS} ("happy eyeballs", RFC 8305 §4–§5). The first
 * connection to complete its handshake wins; later ones are closed. So `localhost` works
 * against an orchestrator on 127.0.0.1 when `::1` resolves first, and the other way round.
 *
 * QUIC only: the TLS transport uses Node's own implementation of the same algorithm
 * (`autoSelectFamily`, src/tls/tls-link.ts).
 */
import { CONNECTION_ATTEMPT_DELAY_MS, resolveAddresses, type ResolvedAddress, type Resolver } from "./address.js";
import { connectQuic, type ConnectOptions, type QuicConnection } from "./engine/index.js";
import { isLoopbackHost, udpPayloadConfig } from "./quic-common.js";

/**
 * Runs `attempt` for each address in turn, starting the next when the current one fails or
 * after `delayMs`, whichever comes first, with several in flight. Resolves with the first
 * success (later successes go to `discard`); rejects with the error of the attempt that failed
 * last when all fail.
 */
export function firstToConnect<T>(
  addresses: readonly ResolvedAddress[],
  attempt: (address: ResolvedAddress) => Promise<T>,
  discard: (value: T) => void,
  delayMs = CONNECTION_ATTEMPT_DELAY_MS,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let next = 0;
    let pending = 0;
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const startNext = (): void => {
      clearTimeout(timer);
      if (done || next >= addresses.length) return;
      const address = addresses[next++]!;
      pending++;
      attempt(address).then(
        (value) => {
          pending--;
          if (done) return discard(value);
          done = true;
          clearTimeout(timer);
          resolve(value);
        },
        (e: unknown) => {
          pending--;
          if (done) return;
          if (next < addresses.length) startNext();
          else if (pending === 0) {
            done = true;
            reject(e);
          }
        },
      );
      if (next < addresses.length) timer = setTimeout(startNext, delayMs);
    };
    startNext();
  });
}

/** Options of {@link dialQuic}: those of `connectQuic` with a host name instead of an IP. */
export interface DialOptions extends Omit<ConnectOptions, "host" | "maxSendUdpPayload" | "maxRecvUdpPayload"> {
  /** Host name or IP literal. */
  host: string;
  /** UDP payload size override (`udpPayloadConfig`); default by whether the address is loopback. */
  udpPayloadBytes?: number;
  /** Name resolution (default: the system resolver, every address). */
  resolver?: Resolver;
  /** See {@link CONNECTION_ATTEMPT_DELAY_MS}. */
  attemptDelayMs?: number;
}

/**
 * Connects over QUIC to the first address of `options.host` that completes a handshake (see the
 * module comment).
 * @throws ResolveError when the name does not resolve; else the `QuicConnectError` (or other
 *   error) of the attempt that failed last
 */
export async function dialQuic(options: DialOptions): Promise<QuicConnection> {
  const { host, udpPayloadBytes, resolver, attemptDelayMs, ...connect } = options;
  const addresses = await resolveAddresses(host, resolver);
  return firstToConnect(
    addresses,
    (a) => {
      const udp = udpPayloadConfig(isLoopbackHost(a.address), udpPayloadBytes);
      return connectQuic({ ...connect, host: a.address, maxSendUdpPayload: udp.maxSendUdpPayloadSize, maxRecvUdpPayload: udp.maxRecvUdpPayloadSize });
    },
    (conn) => conn.close(0, ""),
    attemptDelayMs,
  );
}
