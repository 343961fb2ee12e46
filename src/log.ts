/**
 * Process-wide logger. Writes to **stderr only** (fd 2): stdout is reserved for JSON-RPC messages
 * in `serve`. Two formats: `pretty` (one human-readable line per record, via pino-pretty: time,
 * level name, component, message) and `json` (pino's JSON lines). The CLI sets level and format
 * from `--log-level` / `--log-format` (or `ORCHESTRA_LOG_LEVEL` / `ORCHESTRA_LOG_FORMAT`) through
 * {@link configureLogging} before any command runs; defaults: level `info`, `pretty` when stderr
 * is a terminal, else `json`.
 *
 * pino is loaded (synchronously, from `node_modules`) by the first record that is written, not
 * when this module loads. Between {@link holdLogging} and {@link startLogging} records are kept in
 * order instead, with the time they were logged, and written once pino is there: `serve` holds
 * them so that its `initialize` answer does not wait for pino (docs/startup.md). A record at
 * `error` or `fatal`, and the process's `exit` event, end the hold at once: nothing is lost, and
 * an error that ends the process is written as before.
 */
import { createRequire } from "node:module";
import { exitOnInstallationFault } from "./installation.js";
import type { LogFn, Logger as PinoLogger } from "pino";

/** What the project's code logs through: pino's log methods (a pino logger is one). */
export type Logger = Pick<PinoLogger, "trace" | "debug" | "info" | "warn" | "error" | "fatal">;

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

type Method = keyof Logger;
/** pino's numeric levels (`silent`: none is written). */
const LEVEL_VALUES: Readonly<Record<LogLevelName, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };
/** A held record at this level or above ends the hold: it is written at once. */
const UNHOLD_AT = LEVEL_VALUES.error;

let settings: { level: LogLevelName; format: LogFormat | undefined } = { level: DEFAULT_LOG_LEVEL, format: undefined };
let root: PinoLogger | undefined;
/** pino child logger per component, made when the component's first record is written. */
const children = new Map<string, PinoLogger>();
let holding = false;
/** Records logged while holding: component, method, arguments, epoch ms. */
const held: Array<{ component: string; method: Method; args: unknown[]; time: number }> = [];
/** The epoch ms of the held record being written (pino's `time`), else undefined (now). */
let heldTime: number | undefined;

/**
 * Sets level and format. Call before the first log line (the CLI does, before a command's
 * action); a later call still changes the level of records logged afterwards.
 * @throws RangeError for a level or format outside {@link LOG_LEVELS} / {@link LOG_FORMATS}
 */
export function configureLogging(options: { level?: string; format?: string }): void {
  const level = options.level ?? settings.level;
  const format = options.format ?? settings.format;
  if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new RangeError(`log level must be one of ${LOG_LEVELS.join(", ")}; got ${level}`);
  if (format !== undefined && !(LOG_FORMATS as readonly string[]).includes(format)) throw new RangeError(`log format must be one of ${LOG_FORMATS.join(", ")}; got ${format}`);
  settings = { level: level as LogLevelName, format: format as LogFormat | undefined };
  if (root) root.level = settings.level;
  for (const child of children.values()) child.level = settings.level;
}

/**
 * From now until {@link startLogging}, records are kept (in order, with their time) instead of
 * loading pino to write them; a record at `error` or above, or the process's exit, writes them
 * first. No effect once pino is loaded (records are then written at once).
 */
export function holdLogging(): void {
  if (root) return;
  if (!holding) process.once("exit", startLogging);
  holding = true;
}

/** Ends {@link holdLogging}: loads pino if a record is held, and writes the held records in order. */
export function startLogging(): void {
  holding = false;
  process.removeListener("exit", startLogging);
  for (const record of held.splice(0)) {
    heldTime = record.time;
    try {
      (componentLogger(record.component)[record.method] as (...args: unknown[]) => void)(...record.args);
    } finally {
      heldTime = undefined;
    }
  }
}

function rootLogger(): PinoLogger {
  if (root) return root;
  const require = createRequire(import.meta.url);
  // Nothing can be logged without them: a missing dependency is the installation's one-line fault.
  const load = <T>(name: string): T => {
    try {
      return require(name) as T;
    } catch (err) {
      exitOnInstallationFault(err);
      throw err;
    }
  };
  const { pino } = load<typeof import("pino")>("pino");
  const format = settings.format ?? defaultLogFormat();
  // `time` as pino's default (epoch ms), except that a held record keeps the time it was logged.
  const options = { level: settings.level, base: { pid: process.pid }, name: "orchestra-stdio", timestamp: () => `,"time":${heldTime ?? Date.now()}` };
  root =
    format === "pretty"
      ? pino(
          options,
          // Loaded only when used: JSON output (a client's pipe) does not pay for it.
          load<typeof import("pino-pretty")>("pino-pretty").build({
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

function componentLogger(component: string): PinoLogger {
  let child = children.get(component);
  if (!child) children.set(component, (child = rootLogger().child({ component })));
  return child;
}

function logMethod(component: string, method: Method): LogFn {
  return ((...args: unknown[]) => {
    if (LEVEL_VALUES[method] < LEVEL_VALUES[settings.level]) return;
    if (holding) {
      held.push({ component, method, args, time: Date.now() });
      if (LEVEL_VALUES[method] >= UNHOLD_AT) startLogging();
      return;
    }
    (componentLogger(component)[method] as (...a: unknown[]) => void)(...args);
  }) as LogFn;
}

/** A logger whose lines carry `component`; pino is loaded by its first record written (above). */
export function childLogger(component: string): Logger {
  return {
    trace: logMethod(component, "trace"),
    debug: logMethod(component, "debug"),
    info: logMethod(component, "info"),
    warn: logMethod(component, "warn"),
    error: logMethod(component, "error"),
    fatal: logMethod(component, "fatal"),
  };
}
