/**
 * Process-wide structured logger. Writes JSON lines to **stderr only** (fd 2): stdout is
 * reserved for JSON-RPC messages in `serve`. Level comes from `ORCHESTRA_LOG_LEVEL`
 * (trace|debug|info|warn|error|fatal|silent; default `warn`).
 */
import { pino, type Logger } from "pino";

export type { Logger };

const level = process.env.ORCHESTRA_LOG_LEVEL ?? "warn";

/** The root logger; use {@link childLogger} for a component-scoped one. */
export const logger: Logger = pino(
  { level, base: { pid: process.pid }, name: "orchestra-stdio" },
  pino.destination({ fd: 2, sync: true }),
);

/** A logger whose lines carry `component`. */
export function childLogger(component: string): Logger {
  return logger.child({ component });
}
