/**
 * Options every long-running command shares, and their environment variables.
 *
 * Each option of `serve` and `orchestrator` can also be given as `ORCHESTRA_<OPTION>` (the long
 * flag in upper case, `-` as `_`: `--orchestrator-addr` → `ORCHESTRA_ORCHESTRATOR_ADDR`,
 * `--no-builtins` → `ORCHESTRA_NO_BUILTINS`), so that an MCP client's `env` block can configure
 * the process. A flag on the command line wins over its variable; a variable wins over the
 * default. A boolean flag's variable turns it on when set to any value. Values from the
 * environment go through the same checks as flags (a bad value is a usage error, exit 2).
 * `--help` shows each variable beside its flag.
 */
import { Option, type Command } from "commander";
import { configureLogging, LOG_FORMATS, LOG_LEVELS, DEFAULT_LOG_LEVEL } from "../log.js";

/** The prefix of every environment variable the CLI reads. */
export const ENV_PREFIX = "ORCHESTRA_";

/** Flags that act at once instead of configuring the command: no variable. */
const NO_VARIABLE = new Set(["--version", "--help"]);

/** `--orchestrator-addr` → `ORCHESTRA_ORCHESTRATOR_ADDR`. */
export function envVarName(longFlag: string): string {
  return ENV_PREFIX + longFlag.replace(/^--/, "").toUpperCase().replace(/-/g, "_");
}

/**
 * Adds `--log-level` and `--log-format` to `command`, applied (through configureLogging) before
 * its action runs.
 */
export function addLogOptions(command: Command): Command {
  return command
    .addOption(new Option("--log-level <level>", "log lines at this level and above, on stderr").choices(LOG_LEVELS).default(DEFAULT_LOG_LEVEL))
    .addOption(new Option("--log-format <format>", "pretty (one line for people) or json (JSON lines); default: pretty when stderr is a terminal").choices(LOG_FORMATS))
    .hook("preAction", (_command, action) => {
      const { logLevel, logFormat } = action.opts<{ logLevel?: string; logFormat?: string }>();
      configureLogging({ level: logLevel, format: logFormat });
    });
}

/**
 * Makes every option later added to `command` that has a long flag and no variable yet also read
 * its `ORCHESTRA_<OPTION>` variable (commander's `Option.env`, which must be set before the
 * option is added: this wraps the command's `addOption`, which `.option()` also goes through).
 * Call right after creating the command.
 * @returns `command`
 */
export function withEnvironment(command: Command): Command {
  const addOption = command.addOption.bind(command);
  command.addOption = (option: Option): Command => {
    if (option.long && option.envVar === undefined && !NO_VARIABLE.has(option.long)) option.env(envVarName(option.long));
    return addOption(option);
  };
  return command;
}
