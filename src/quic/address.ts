/**
 * `host:port` parsing and formatting for QUIC endpoints.
 */
import net from "node:net";

/**
 * Splits `host:port`, `[v6]:port` or a bare `host` (with `defaultPort`).
 * @throws TypeError naming the input when it cannot be parsed or the port is not 1..65535
 */
export function parseHostPort(input: string, defaultPort?: number): { host: string; port: number } {
  const text = input.trim();
  let host: string;
  let portText: string | undefined;
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (v6) {
    host = v6[1]!;
    portText = v6[2];
  } else if (net.isIPv6(text)) {
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
  if (host === "" || /\s/.test(host)) throw new TypeError(`invalid address ${JSON.stringify(input)}: missing host`);
  let port: number;
  if (portText === undefined) {
    if (defaultPort === undefined) throw new TypeError(`invalid address ${JSON.stringify(input)}: missing port`);
    port = defaultPort;
  } else {
    if (!/^\d+$/.test(portText)) throw new TypeError(`invalid address ${JSON.stringify(input)}: bad port`);
    port = Number(portText);
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new TypeError(`invalid address ${JSON.stringify(input)}: port must be 0..65535`);
  }
  return { host, port };
}

/** `host:port`, bracketing IPv6 literals. */
export function formatHostPort(host: string, port: number): string {
  return net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}
