/**
 * Process-wide logger. Writes to **stderr only** (fd 2): stdout is reserved for JSON-RPC messages
 * in `serve`. Two formats: `pretty` (one human-readable line per record, via pino-pretty: time,
 * level name, component, message) and `json` (pino's JSON lines). The CLI sets level and format
 * from `--log-level` / `--log-format` (or `ORCHESTRA_LOG_LEVEL` / `ORCHESTRA_LOG_FORMAT`) through
 * {@link configureLogging} before any command runs; defaults: level `info`, `pretty` when stderr
 * is a terminal, else `json`.
 */
import { createRequire } from "node:module";
import { pino, type Logger } from "pino";

export type { Logger };

/** Levels accepted by `--log-level` (pino's names; `silent` logs nothing). */
export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

/** Formats accepted by `--log-format`. */
export const LOG_FORMATS = ["pretty", "json"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** The level used when none is configured. */
export const DEFAULT_LOG_LEVEL: LogLevelName = "info";

/** The format used when none is configured: `pretty` on a terminal, `json` otherwise. */
export function defaultLogFormat(): LogFormat {
  return process.stderr.isTTY ? "pretty" : "json";
}

let settings: { level: LogLevelName; format: LogFormat | undefined } = { level: DEFAULT_LOG_LEVEL, format: undefined };
let root: Logger | undefined;

/**
 * Sets level and format. Call before the first log line (the CLI does, before a command's
 * action); a later call still changes the level of loggers created afterwards.
 * @throws RangeError for a level or format outside {@link LOG_LEVELS} / {@link LOG_FORMATS}
 */
export function configureLogging(options: { level?: string; format?: string }): void {
  const level = options.level ?? settings.level;
  const format = options.format ?? settings.format;
  if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new RangeError(`log level must be one of ${LOG_LEVELS.join(", ")}; got ${level}`);
  if (format !== undefined && !(LOG_FORMATS as readonly string[]).includes(format)) throw new RangeError(`log format must be one of ${LOG_FORMATS.join(", ")}; got ${format}`);
  settings = { level: level as LogLevelName, format: format as LogFormat | undefined };
  if (root) root.level = settings.level;
}

function rootLogger(): Logger {
  if (root) return root;
  const format = settings.format ?? defaultLogFormat();
  const options = { level: settings.level, base: { pid: process.pid }, name: "orchestra-stdio" };
  root =
    format === "pretty"
      ? pino(
          options,
          // Loaded only when used: JSON output (a client's pipe) does not pay for it.
          (createRequire(import.meta.url)("pino-pretty") as typeof import("pino-pretty")).build({
            destination: 2,
            sync: true,
            colorize: Boolean(process.stderr.isTTY),
            translateTime: "SYS:HH:MM:ss.l",
            ignore: "pid,hostname,name,component",
            singleLine: true,
            messageFormat: "{if component}{component}: {end}{msg}",
          }),
        )
      : pino(options, pino.destination({ fd: 2, sync: true }));
  return root;
}

/** A logger whose lines carry `component`. */
export function childLogger(component: string): Logger {
  return rootLogger().child({ component });
}
