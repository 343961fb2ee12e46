#!/usr/bin/env node
/**
 * `orchestra-stdio` command line: one sub-command per file in this folder, parsed by commander.
 */
import { Command } from "commander";
import { PACKAGE_VERSION } from "../version.js";
import { registerServeCommand } from "./serve.js";
import { registerOrchestratorCommand } from "./orchestrator.js";
import { registerValidateCommand } from "./validate.js";

const program = new Command()
  .name("orchestra-stdio")
  .description("MCP stdio bridge to Orchestra orchestrators over QUIC, reference orchestrator, and MCP traffic validator")
  .version(PACKAGE_VERSION, "-V, --version")
  .showHelpAfterError()
  .enablePositionalOptions();

registerServeCommand(program);
registerOrchestratorCommand(program);
registerValidateCommand(program);
for (const command of program.commands) command.version(PACKAGE_VERSION, "-V, --version");

await program.parseAsync(process.argv);
