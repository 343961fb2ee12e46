#!/usr/bin/env node
/**
 * `orchestra-stdio` command line: one sub-command per file in this folder, parsed by commander.
 */
import { Command, CommanderError } from "commander";
import { PACKAGE_VERSION } from "../version.js";
import { registerServeCommand } from "./serve.js";
import { registerOrchestratorCommand } from "./orchestrator.js";
import { registerValidateCommand } from "./validate.js";
import { registerCertsCommand } from "./certs.js";

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

registerServeCommand(program);
registerOrchestratorCommand(program);
registerValidateCommand(program);
registerCertsCommand(program);
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

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (!(err instanceof CommanderError)) throw err;
  // --help and --version end with exit code 0; commander has already printed any message.
  process.exitCode = err.exitCode === 0 ? 0 : 2;
}
