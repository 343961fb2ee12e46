/**
 * `host:port` parsing and formatting, and name resolution to every address, for the QUIC and
 * TLS transports.
 */
import { createRequire } from "node:module";
import net from "node:net";

/**
 * Splits `host:port`, `[v6]:port` or a bare `host` (with `defaultPort`). Strict, so that a
 * mistyped address is refused before anything starts: no whitespace, no scheme or path
 * (`http://h:1`), an IPv6 host in brackets when a port follows (`[::1]:1`, not `::1:1`), the port
 * in decimal without leading zeros.
 * @param minPort the lowest port accepted: 0 for a listen address (ephemeral), 1 to connect to
 * @throws TypeError naming the input when it cannot be parsed or the port is not minPort..65535
 */
export function parseHostPort(input: string, defaultPort?: number, minPort: 0 | 1 = 0): { host: string; port: number } {
  const text = input;
  if (/\s/.test(text)) throw new TypeError(`invalid address ${JSON.stringify(input)}: contains whitespace`);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text))
    throw new TypeError(`invalid address ${JSON.stringify(input)}: a URL; give host:port without a scheme (e.g. ${text.replace(/^[^/]*\/\//, "").replace(/\/.*$/, "")})`);
  let host: string;
  let portText: string | undefined;
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  // An IPv6 address has two colons at least; the test is asked only then (its first use compiles a large RegExp).
  const bareV6 = !v6 && text.indexOf(":") !== text.lastIndexOf(":") && net.isIPv6(text);
  if (v6) {
    host = v6[1]!;
    portText = v6[2];
  } else if (bareV6) {
    host = text;
  } else {
    const i = text.lastIndexOf(":");
    if (i >= 0) {
      host = text.slice(0, i);
      portText = text.slice(i + 1);
    } else {
      host = text;
    }
  }
  if (host === "") throw new TypeError(`invalid address ${JSON.stringify(input)}: missing host`);
  if (!v6 && !bareV6 && host.includes(":")) throw new TypeError(`invalid address ${JSON.stringify(input)}: an IPv6 host needs brackets ([${host}]:${portText ?? "port"})`);
  if (/[/?#@]/.test(host)) throw new TypeError(`invalid address ${JSON.stringify(input)}: expected host:port (a host name or IP address, no path)`);
  let port: number;
  if (portText === undefined) {
    if (defaultPort === undefined) throw new TypeError(`invalid address ${JSON.stringify(input)}: missing port`);
    port = defaultPort;
  } else {
    if (!/^\d+$/.test(portText)) throw new TypeError(`invalid address ${JSON.stringify(input)}: bad port`);
    if (/^0\d/.test(portText)) throw new TypeError(`invalid address ${JSON.stringify(input)}: port ${portText} has leading zeros`);
    port = Number(portText);
  }
  if (!Number.isInteger(port) || port < minPort || port > 65535) {
    const zero = port === 0 ? ": port 0 cannot be connected to" : "";
    throw new TypeError(`invalid address ${JSON.stringify(input)}${zero}: port must be ${minPort}..65535`);
  }
  return { host, port };
}

/**
 * Delay before the next address of a name is tried while a connection attempt to the previous
 * one is still pending (ms; "Connection Attempt Delay", RFC 8305 §5 and §8: 250), for QUIC
 * (src/quic/dial.ts); TLS uses Node's `autoSelectFamily`, whose default attempt timeout is the same.
 */
export const CONNECTION_ATTEMPT_DELAY_MS = 250;

/**
 * `host:port`, bracketing IPv6 literals: a host with a `:` is one (names and IPv4 literals have
 * none), which spares Node's IPv6 pattern its compilation on the first call.
 */
export function formatHostPort(host: string, port: number): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]:${port}` : `${host}:${port}`;
}

/** One resolved address. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** A name that resolved to no address. */
export class ResolveError extends Error {
  override readonly name = "ResolveError";
}

/** Resolves a host name to every address (`all`, the resolver's order). */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

/** `dns.lookup` of every address; `node:dns` is loaded by the first name resolved (an IP address needs none). */
const systemResolver: Resolver = async (host) => {
  const { lookup } = createRequire(import.meta.url)("node:dns/promises") as typeof import("node:dns/promises");
  return (await lookup(host, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/**
 * The addresses to try for `host`: an IP literal as it is, else every address the resolver
 * returns, duplicates removed, families alternating and starting with the resolver's first
 * (RFC 8305 §4).
 * @throws ResolveError when the name cannot be resolved or has no address
 */
export async function resolveAddresses(host: string, resolver: Resolver = systemResolver): Promise<ResolvedAddress[]> {
  const literal = net.isIP(host);
  if (literal !== 0) return [{ address: host, family: literal === 6 ? 6 : 4 }];
  let found: ResolvedAddress[];
  try {
    found = await resolver(host);
  } catch (e) {
    throw new ResolveError(`cannot resolve ${host}: ${(e as Error).message}`, { cause: e });
  }
  const seen = new Set<string>();
  const unique = found.filter((a) => !seen.has(a.address) && seen.add(a.address));
  if (unique.length === 0) throw new ResolveError(`cannot resolve ${host}: no address`);
  const first = unique.filter((a) => a.family === unique[0]!.family);
  const other = unique.filter((a) => a.family !== unique[0]!.family);
  const out: ResolvedAddress[] = [];
  for (let i = 0; i < Math.max(first.length, other.length); i++) {
    if (i < first.length) out.push(first[i]!);
    if (i < other.length) out.push(other[i]!);
  }
  return out;
}
