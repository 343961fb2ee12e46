#!/usr/bin/env node
/**
 * `orchestra-stdio` command line: one sub-command per file in this folder, parsed by commander.
 */
import { Command, CommanderError } from "commander";
import { exitOnInstallationFault } from "../installation.js";
import { PACKAGE_VERSION } from "../version.js";

/**
 * Each sub-command's module, loaded only when needed: `orchestra-stdio serve …` loads serve.js
 * alone (an MCP client starts one `serve` per session, so its start is what users wait for);
 * `--help`, `help`, an unknown or no command load them all, so that help and commander's
 * suggestions see every command.
 */
const COMMANDS: Readonly<Record<string, () => Promise<(program: Command) => void>>> = {
  serve: async () => (await import("./serve.js")).registerServeCommand,
  orchestrator: async () => (await import("./orchestrator.js")).registerOrchestratorCommand,
  validate: async () => (await import("./validate.js")).registerValidateCommand,
  certs: async () => (await import("./certs.js")).registerCertsCommand,
};

const program = new Command()
  // Usage errors throw instead of exiting, so that they exit with 2 like `validate`'s other input errors.
  .exitOverride()
  .name("orchestra-stdio")
  .description("MCP stdio bridge to Orchestra orchestrators over QUIC, reference orchestrator, and MCP traffic validator")
  .version(PACKAGE_VERSION, "-V, --version")
  // A usage error prints the problem and where the help is, not the whole help (an MCP client
  // keeps the stderr of a server that failed to start in its log).
  .showHelpAfterError("see `orchestra-stdio --help`")
  .enablePositionalOptions();

/** Registers the commands the arguments need, then runs the one named. */
async function main(): Promise<void> {
  // The program has no options of its own but --help and --version, so a command is always argv[2].
  const named = process.argv[2];
  const wanted = named !== undefined && Object.hasOwn(COMMANDS, named) ? [named] : Object.keys(COMMANDS);
  for (const register of await Promise.all(wanted.map((name) => COMMANDS[name]!()))) register(program);
  // Every sub-command, nested ones too (`certs init`), lists and answers --version; a usage error
  // names the command's --help instead of printing all of it.
  const withVersion = (commands: readonly Command[]): void => {
    for (const command of commands) {
      command.version(PACKAGE_VERSION, "-V, --version");
      withVersion(command.commands);
    }
  };
  withVersion(program.commands);
  for (const command of program.commands) command.showHelpAfterError(`see \`orchestra-stdio ${command.name()} --help\``);
  // The command whose usage error ended the parse: its variables are warned about after the error.
  let failed: Command | undefined;
  const recordFailure = (command: Command): void => {
    command.exitOverride((err) => {
      if (err.exitCode !== 0) failed ??= command;
      throw err;
    });
    for (const sub of command.commands) recordFailure(sub);
  };
  recordFailure(program);

  try {
    refuseMissingCommand(program, process.argv.slice(2));
    await program.parseAsync(helpOfUnknownCommand(program, process.argv));
  } catch (err) {
    if (!(err instanceof CommanderError)) {
      // A dependency or a file of dist/ that cannot be loaded is one line, not a stack.
      exitOnInstallationFault(err);
      throw err;
    }
    // --help and --version end with exit code 0; commander has already printed any message.
    process.exitCode = err.exitCode === 0 ? 0 : 2;
    // A command's usage error ends before its hooks: the variables it does not read still get their warning.
    if (failed !== undefined && failed.commands.length === 0) {
      const { unknownVariableWarnings } = await import("./environment.js");
      for (const line of unknownVariableWarnings(failed, process.env)) process.stderr.write(line);
    }
  }
}

/**
 * A usage error (exit 2, the two lines of any usage error) when `args` name no command, or a
 * command that has sub-commands (`certs`) and nothing after it: commander would print the
 * whole help on stderr.
 * @throws CommanderError through `command.error`
 */
function refuseMissingCommand(program: Command, args: readonly string[]): void {
  let command = program;
  let used = 0;
  for (let sub = program.commands.find((c) => c.name() === args[0]); sub !== undefined; sub = command.commands.find((c) => c.name() === args[used])) {
    command = sub;
    used++;
  }
  if (used < args.length || command.commands.length === 0) return;
  const names = command.commands.map((c) => (command === program ? c.name() : `${command.name()} ${c.name()}`));
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} or ${names.at(-1)}`;
  command.error(`error: missing command: ${list}`, { exitCode: 2, code: "orchestra.missingCommand" });
}

/**
 * `help NAME` for a NAME that is no command parses as `NAME` alone: commander's unknown-command
 * error (with its suggestion), not the whole help.
 * @returns the arguments to parse
 */
function helpOfUnknownCommand(program: Command, argv: readonly string[]): string[] {
  const [node = "", script = "", first, name, ...rest] = argv;
  if (first !== "help" || name === undefined || name.startsWith("-") || program.commands.some((c) => c.name() === name)) return [...argv];
  return [node, script, name, ...rest];
}

/**
 * The command's end (or its error): what the CLI bundle's loader waits for (src/cli/script-loader.ts),
 * as an ES module's top-level `await` would.
 */
export const finished: Promise<void> = main();
