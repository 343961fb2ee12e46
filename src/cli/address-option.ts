/**
 * `serve --orchestrator-addr` value checking: a bad address is a usage error (exit 2, like
 * `orchestrator --listen`), reported before anything starts.
 */
import { InvalidArgumentError } from "commander";
import { parseHostPort } from "../quic/address.js";

/**
 * Accepts `host:port` or `[v6]:port` with a port in 1..65535 (parseHostPort's rules).
 * @throws InvalidArgumentError (commander: exit 2) naming the value and what is wrong
 */
export function orchestratorAddress(value: string): string {
  if (value.trim() === "") throw new InvalidArgumentError("--orchestrator-addr is empty (omit it to use the embedded orchestrator)");
  try {
    parseHostPort(value, undefined, 1);
  } catch (e) {
    throw new InvalidArgumentError(`${(e as Error).message} (expected host:port or [v6]:port)`);
  }
  return value;
}

/**
 * `serve --server-name`: the DNS name the orchestrator's certificate must carry. An empty or
 * blank name cannot be verified (quiche refuses the handshake), so it is a usage error (exit 2).
 * @throws InvalidArgumentError (commander: exit 2)
 */
export function serverNameOption(value: string): string {
  if (value.trim() === "" || /\s/.test(value)) {
    throw new InvalidArgumentError(`invalid server name ${JSON.stringify(value)}: expected the DNS name in the orchestrator's certificate (default localhost)`);
  }
  return value;
}
