/**
 * Options every long-running command shares, and their environment variables.
 *
 * Each option of `serve` and `orchestrator` can also be given as `ORCHESTRA_<OPTION>` (the long
 * flag in upper case, `-` as `_`: `--orchestrator-addr` → `ORCHESTRA_ORCHESTRATOR_ADDR`,
 * `--no-builtins` → `ORCHESTRA_NO_BUILTINS`), so that an MCP client's `env` block can configure
 * the process. A flag on the command line wins over its variable; a variable wins over the
 * default. A boolean flag's variable (`ORCHESTRA_NO_BUILTINS`) is on for `1`, `true` or `yes`
 * and off for `0`, `false`, `no` or the empty string (any case); another value is a usage error
 * naming the variable. Values from the environment go through the same checks as flags (a bad
 * value is a usage error, exit 2). A set `ORCHESTRA_*` variable (any case) that the command does
 * not read is a warning, with the name it does read that is close to it, if any
 * ({@link unknownVariables}): logged by the commands with log options, a plain `warning:` line
 * from the others ({@link warnAboutVariables}), and after a usage error's two lines
 * ({@link unknownVariableWarnings}). `--help` shows each variable beside its flag.
 */
import { Option, type Command } from "commander";
import { childLogger, configureLogging, LOG_FORMATS, LOG_LEVELS, DEFAULT_LOG_LEVEL } from "../log.js";

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
      const log = childLogger("environment");
      for (const unknown of unknownVariables(action, process.env)) log.warn({ variable: unknown.name, closest: unknown.closest }, unknown.message);
    });
}

/**
 * Makes `command` (one without log options: `certs init`, `validate`) write one plain
 * `warning: …` line on stderr for each `ORCHESTRA_*` variable it does not read, before its action.
 * @returns `command`
 */
export function warnAboutVariables(command: Command): Command {
  return command.hook("preAction", (_command, action) => {
    for (const line of unknownVariableWarnings(action, process.env)) process.stderr.write(line);
  });
}

/** Boolean variable values (compared in lower case, trimmed): on and off. */
const BOOLEAN_ON = new Set(["1", "true", "yes"]);
const BOOLEAN_OFF = new Set(["0", "false", "no", ""]);

/**
 * Where an option's value came from, for messages: `ORCHESTRA_NO_BUILTINS=false` when from its
 * variable, else the flag (`--no-builtins`).
 */
export function optionOrigin(command: Command, longFlag: string): string {
  const option = command.options.find((o) => o.long === longFlag);
  if (option?.envVar && command.getOptionValueSource(option.attributeName()) === "env") return `${option.envVar}=${JSON.stringify(process.env[option.envVar] ?? "")}`;
  return longFlag;
}

/**
 * Appends to `err`'s message where the option's value came from when that was its variable
 * (` (from ORCHESTRA_TOOLS="./t.mjs")`, through {@link optionOrigin}); a flag's value adds nothing.
 * @returns `err`, for `throw`
 */
export function namingVariable(err: unknown, command: Command, longFlag: string): unknown {
  const origin = optionOrigin(command, longFlag);
  if (origin !== longFlag && err instanceof Error) err.message += ` (from ${origin})`;
  return err;
}

/** `ORCHESTRA_*` variables the CLI reads itself, for every command: `ORCHESTRA_NO_CODE_CACHE` (src/cli/code-cache.ts). */
const CLI_VARIABLES: readonly string[] = ["ORCHESTRA_NO_CODE_CACHE"];

/** Commands whose variables were already warned about (a usage error after the action's hooks must not repeat them). */
const warned = new WeakSet<Command>();

/**
 * The variables of `env` named `ORCHESTRA_*` (in any case) that `command` reads no option from
 * (nor the CLI itself), sorted, each with the name it does read that is close to it (undefined
 * when none is: {@link closestName}) and the warning's sentence. Marks `command` as warned: a
 * second call for it returns `[]`.
 */
export function unknownVariables(command: Command, env: NodeJS.ProcessEnv): Array<{ name: string; closest: string | undefined; message: string }> {
  if (warned.has(command)) return [];
  warned.add(command);
  const known = [...command.options.flatMap((o) => (o.envVar ? [o.envVar] : [])), ...CLI_VARIABLES];
  return Object.keys(env)
    .filter((name) => name.toUpperCase().startsWith(ENV_PREFIX) && !known.includes(name))
    .sort()
    .map((name) => {
      const closest = closestName(name, known);
      const hint =
        closest === undefined ? "" : closest.toUpperCase() === name.toUpperCase() ? `; did you mean ${closest}? (names are case-sensitive)` : `; did you mean ${closest}?`;
      return { name, closest, message: `${name} is set but \`orchestra-stdio ${commandPath(command)}\` reads no such variable (ignored)${hint}` };
    });
}

/** {@link unknownVariables} as plain stderr lines (`warning: …\n`), for output that is not a log. */
export function unknownVariableWarnings(command: Command, env: NodeJS.ProcessEnv): string[] {
  return unknownVariables(command, env).map((u) => `warning: ${u.message}\n`);
}

/** `certs init` for a sub-command of `certs`; the program's name left out. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

/**
 * The candidate that `name` most likely misspells, or undefined when none is close:
 * - the same name in another case;
 * - else the one sharing the most `_`-separated words of three letters or more with it (a word
 *   matches within one edit per four letters; `ORCHESTRA_ADDR` → `ORCHESTRA_ORCHESTRATOR_ADDR`;
 *   `NO` alone does not make `ORCHESTRA_NO_TLS` mean `ORCHESTRA_NO_BUILTINS`), ties going to the smaller
 *   edit distance of the whole name;
 * - else the one within one edit per four letters of the part after `ORCHESTRA_`
 *   (`ORCHESTRA_TOLS` → `ORCHESTRA_TOOLS`, not `ORCHESTRA_FOO` → `ORCHESTRA_TOOLS`).
 * Compared in upper case.
 */
function closestName(name: string, candidates: readonly string[]): string | undefined {
  const upper = name.toUpperCase();
  const sameName = candidates.find((c) => c.toUpperCase() === upper);
  if (sameName !== undefined) return sameName;
  const words = (n: string) =>
    n
      .slice(ENV_PREFIX.length)
      .split("_")
      .filter((w) => w !== "");
  const close = (a: string, b: string) => editDistance(a, b) <= Math.floor(Math.max(a.length, b.length) / 4);
  const own = words(upper).filter((w) => w.length >= 3);
  let best: { name: string; shared: number; distance: number } | undefined;
  for (const candidate of candidates) {
    const theirs = words(candidate);
    const shared = own.filter((w) => theirs.some((t) => close(w, t))).length;
    const distance = editDistance(upper, candidate);
    if (!best || shared > best.shared || (shared === best.shared && distance < best.distance)) best = { name: candidate, shared, distance };
  }
  if (!best) return undefined;
  return best.shared > 0 || close(upper.slice(ENV_PREFIX.length), best.name.slice(ENV_PREFIX.length)) ? best.name : undefined;
}

/** Levenshtein distance (insertions, deletions, substitutions). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * Applies the boolean variable values of `command`'s flags without a value: commander turns such
 * a flag on whenever its variable is set; this turns it back off for an off value and refuses
 * anything else.
 * @throws CommanderError (through `command.error`, exit 2) naming the variable and the values
 */
function applyBooleanVariables(command: Command): void {
  for (const option of command.options) {
    if (!option.envVar || option.required || option.optional) continue;
    const name = option.attributeName();
    if (command.getOptionValueSource(name) !== "env") continue;
    const raw = process.env[option.envVar] ?? "";
    const value = raw.trim().toLowerCase();
    if (BOOLEAN_ON.has(value)) continue;
    if (BOOLEAN_OFF.has(value)) {
      command.setOptionValueWithSource(name, option.negate ? true : option.defaultValue, "default");
      continue;
    }
    command.error(`error: ${option.envVar}=${JSON.stringify(raw)} is not a boolean: use 1, true or yes to set ${option.long}, or 0, false, no or empty for the default`, {
      exitCode: 2,
      code: "orchestra.booleanVariable",
    });
  }
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
  command.hook("preAction", (_command, action) => applyBooleanVariables(action));
  return command;
}
