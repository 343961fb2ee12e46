/**
 * MCP logging levels (server/utilities/logging: the RFC 5424 syslog severities) and the
 * `notifications/message` the bridge sends to its client.
 */
import type { JSONRPCNotification } from "../jsonrpc/message.js";

/** MCP `LoggingLevel`, least to most severe. */
export const LOGGING_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] as const;
export type LoggingLevel = (typeof LOGGING_LEVELS)[number];

/** `logger` name the bridge puts on its log notifications. */
export const CLIENT_LOGGER_NAME = "orchestra-stdio";

/** Whether `value` is a {@link LoggingLevel}. */
export function isLoggingLevel(value: unknown): value is LoggingLevel {
  return typeof value === "string" && (LOGGING_LEVELS as readonly string[]).includes(value);
}

/** Whether a message at `level` passes the minimum `threshold` (both MCP levels). */
export function atLeast(level: LoggingLevel, threshold: LoggingLevel): boolean {
  return LOGGING_LEVELS.indexOf(level) >= LOGGING_LEVELS.indexOf(threshold);
}

/** A `notifications/message` carrying `data` at `level`, from `logger` (default {@link CLIENT_LOGGER_NAME}). */
export function logNotification(level: LoggingLevel, data: unknown, logger: string = CLIENT_LOGGER_NAME): JSONRPCNotification {
  return { jsonrpc: "2.0", method: "notifications/message", params: { level, logger, data } };
}
