/**
 * `orchestra-stdio orchestrator`: runs the reference orchestrator (a QUIC server of the Orchestra
 * plugin protocol) until SIGINT/SIGTERM.
 *
 * Prints `READY <host:port>` on stderr once listening (the readiness line Orchestra parties use,
 * orchestra-protocol.md "Orchestrator side"); exits 0 after a clean stop, 1 when it cannot start, 2 on a usage error or a `--certs-dir` with a literal `~` (docs/cli.md "Exit status").
 */
import { Command, InvalidArgumentError, Option } from "commander";
import { parseHostPort } from "../quic/address.js";
import type { RunningOrchestrator } from "../orchestrator/quic-server.js";
import { DEFAULT_MAX_STREAMS } from "../orchestrator/defaults.js";
import { addLogOptions, namingVariable, withEnvironment } from "./environment.js";
import { certsDirPath, toolModulePath } from "./path-options.js";

/** Default listen address (orchestra-protocol.md: default orchestrator address `localhost:50100`). */
export const DEFAULT_LISTEN = "127.0.0.1:50100";

interface OrchestratorCliOptions {
  listen: string;
  certsDir?: string;
  tools?: string[];
  builtins: boolean;
  maxStreams: number;
  /** `--transport`: quic (default) or tls (docs/tls-transport.md). */
  transport: "quic" | "tls";
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError("must be a positive integer");
  return n;
}

function listenAddress(value: string): string {
  try {
    parseHostPort(value);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
  return value;
}

/**
 * Adds `orchestrator --listen host:port --certs-dir DIR [--tools module...] [--no-builtins]
 * [--max-streams N]` to `program` (commander 14).
 */
export function registerOrchestratorCommand(program: Command): void {
  const command = withEnvironment(program.command("orchestrator"))
    .description("run the reference orchestrator (QUIC, mutual TLS); prints READY <host:port> on stderr")
    .addOption(new Option("--listen <host:port>", "UDP address to listen on (port 0 = ephemeral)").argParser(listenAddress).default(DEFAULT_LISTEN))
    .option("--certs-dir <dir>", "cert store (created if missing); default ~/.orchestra/certs", certsDirPath)
    .option("--tools <module...>", "ES modules exporting tools, prompts and resources (docs/modules.md)", toolModulePath)
    .option("--no-builtins", "do not serve the built-in tools, prompts and sample storage entries")
    .addOption(new Option("--max-streams <n>", "concurrent RPC streams granted to each client").argParser(positiveInt).default(DEFAULT_MAX_STREAMS))
    .addOption(new Option("--transport <kind>", "quic (UDP, interoperable) or tls (TLS 1.3 over TCP on the same address, our extension)").choices(["quic", "tls"]).default("quic"));
  addLogOptions(command).action(async (opts: OrchestratorCliOptions, action: Command) => {
    process.exitCode = await runOrchestrator(opts, action);
  });
}

/** @param action the parsed command, for where an option's value came from (its variable or flag) */
async function runOrchestrator(opts: OrchestratorCliOptions, action: Command): Promise<number> {
  // Loaded here so that `--help` and the other commands do not pay for the QUIC stack.
  const [{ childLogger }, { defaultCertsDir, literalTildeRefusal }, { loadOrchestratorContent, keepServingOnModuleErrors }, { startOrchestrator }] = await Promise.all([
    import("../log.js"),
    import("../pki/store.js"),
    import("../orchestrator/load-tools.js"),
    import("../orchestrator/quic-server.js"),
  ]);
  const log = childLogger("orchestrator-cli");
  // The store is created when missing: a literal `~` would make it under ./~.
  const tilde = opts.certsDir === undefined ? undefined : literalTildeRefusal(opts.certsDir);
  if (tilde !== undefined) {
    log.error((namingVariable(new Error(tilde), action, "--certs-dir") as Error).message);
    return 2;
  }
  // From the modules' import on (their top level may start timers): see keepServingOnModuleErrors.
  keepServingOnModuleErrors(log);
  let running: RunningOrchestrator;
  try {
    const { host, port } = parseHostPort(opts.listen);
    const content = await loadOrchestratorContent(opts.tools ?? [], opts.builtins).catch((err: unknown) => {
      throw namingVariable(err, action, "--tools");
    });
    const start = opts.transport === "tls" ? (await import("../orchestrator/tls-server.js")).startTlsOrchestrator : startOrchestrator;
    running = await start({
      host,
      port,
      certsDir: opts.certsDir ?? defaultCertsDir(),
      ...content,
      maxStreams: opts.maxStreams,
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const hint =
      code === "EADDRINUSE"
        ? ` (${opts.listen} is in use, perhaps by another orchestrator: choose another address with --listen or ORCHESTRA_LISTEN, port 0 for an ephemeral one)`
        : "";
    log.error(`${(err as Error).message}${hint}`);
    return 1;
  }
  // The handlers are in place before READY: a supervisor may stop it as soon as it reads the line.
  const stopped = new Promise<void>((resolve) => {
    const onSignal = (): void => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      resolve();
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
  process.stderr.write(`READY ${running.address}\n`);
  log.info({ address: running.address, tools: running.tools.list().map((t) => t.name) }, "orchestrator listening");
  await stopped;
  try {
    await running.stop();
  } catch (err) {
    log.warn({ err: (err as Error).message }, "error while stopping");
  }
  return 0;
}
