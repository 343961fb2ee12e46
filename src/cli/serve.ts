/**
 * `orchestra-stdio serve`: the MCP stdio bridge.
 *
 * With `--orchestrator-addr` it connects to that orchestrator using the cert store in
 * `--certs-dir` (default `~/.orchestra/certs`). Without it, it starts the reference orchestrator
 * in-process on an ephemeral loopback port with the user's embedded cert store (created once in
 * the user's cache directory, src/pki/embedded.ts; a throwaway one when that cannot be used), or
 * with the given `--certs-dir` if it already holds a CA and its key (else exit 2: it never creates
 * a CA in a store the user named). Exit status: docs/cli.md "Exit status".
 */
import { existsSync, rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Writable, type Readable } from "node:stream";
import { Command, InvalidArgumentError, Option } from "commander";
import type { Sender } from "../transport/sender.js";
import { tlsMaterialDetail } from "../transport/errors.js";
import { defaultCertsDir } from "../pki/default-certs-dir.js";
import type { TlsMaterial } from "../pki/store.js";
import { orchestratorAddress, serverNameOption } from "./address-option.js";
import { childLogger, holdLogging, startLogging } from "../log.js";
import { addLogOptions, namingVariable, optionOrigin, withEnvironment } from "./environment.js";
import { captureFilePath, certsDirPath, toolModulePath } from "./path-options.js";
import { setV8Flag, type V8FlagChange } from "./v8-flags.js";

interface ServeOptions {
  orchestratorAddr?: string;
  certsDir?: string;
  capture?: string;
  callTimeout: number;
  /** `--idle-timeout`: QUIC idle timeout in ms (connection loss is detected after this long). */
  idleTimeout?: number;
  listTimeout: number;
  shutdownGrace: number;
  serverName: string;
  /** `--transport`: quic (default) or tls (docs/tls-transport.md). */
  transport: Transport;
  /** `--page-size`: items per page of MCP list results. */
  pageSize: number;
  /** `--resource-prefix`: storage prefixes exposed as MCP resources (default: all). */
  resourcePrefix?: string[];
  /** `--tools`: modules for the embedded orchestrator (docs/modules.md). */
  tools?: string[];
  /** `--no-builtins`: the embedded orchestrator serves only the modules' content. */
  builtins: boolean;
}

/** Parses a positive integer option value (milliseconds). */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError("must be a positive integer");
  return n;
}

/** Adds the `serve` command to `program`. */
export function registerServeCommand(program: Command): void {
  // Log records wait for the end of start-up (or an error, or the exit) to be written: loading
  // pino then does not delay the `initialize` answer nor the first call (src/log.ts). Held from
  // the first preAction hook on: the warning for an `ORCHESTRA_*` variable serve does not read
  // is logged in the next one.
  const command = withEnvironment(program.command("serve").hook("preAction", holdLogging))
    .description("run the MCP stdio bridge (JSON-RPC on stdin/stdout, logs on stderr)")
    .addOption(new Option("--orchestrator-addr <host:port>", "orchestrator to connect to; omitted: start the embedded reference orchestrator").argParser(orchestratorAddress))
    .option(
      "--certs-dir <dir>",
      "cert store (ca.crt, ca.key, <name>.crt/.key); default ~/.orchestra/certs with an address, the user's embedded store in the cache directory without",
      certsDirPath,
    )
    .option("--capture <file>", "append every message in both directions to FILE as JSON lines (input for `validate`)", captureFilePath)
    .addOption(new Option("--call-timeout <ms>", "deadline for one tools/call").argParser(positiveInt).default(300_000))
    .addOption(new Option("--idle-timeout <ms>", "QUIC: fail pending calls and reconnect after this long without packets (default 15000)").argParser(positiveInt))
    .addOption(new Option("--list-timeout <ms>", "deadline for one list request").argParser(positiveInt).default(10_000))
    .addOption(new Option("--shutdown-grace <ms>", "on stdin EOF, how long in-flight calls may still take").argParser(positiveInt).default(30_000))
    .addOption(new Option("--server-name <name>", "TLS server name expected in the orchestrator's certificate").default("localhost").argParser(serverNameOption))
    .addOption(new Option("--transport <kind>", "transport to the orchestrator: quic (interoperable) or tls (TLS 1.3 over TCP, our extension)").choices(TRANSPORTS).default("quic"))
    .addOption(new Option("--page-size <n>", "items per page of tools/prompts/resources lists").argParser(positiveInt).default(100))
    .option("--resource-prefix <prefix...>", "storage path prefixes exposed as MCP resources (default: everything)")
    // The embedded orchestrator's content: the same option and module shape as `orchestrator --tools`.
    .option(
      "--tools <module...>",
      "embedded orchestrator only: ES modules exporting tools, prompts and resources (docs/modules.md; give absolute paths: MCP clients choose the working directory)",
      toolModulePath,
    )
    .option("--no-builtins", "embedded orchestrator only: do not serve the built-in tools, prompts and sample storage entries");
  addLogOptions(command).action(async (opts: ServeOptions, action: Command) => {
    if (opts.orchestratorAddr !== undefined && (opts.tools !== undefined || !opts.builtins)) {
      const embeddedOnly = [opts.tools !== undefined ? optionOrigin(action, "--tools") : undefined, opts.builtins ? undefined : optionOrigin(action, "--no-builtins")].filter(
        Boolean,
      );
      const given = [...embeddedOnly, optionOrigin(action, "--orchestrator-addr")].join(", ");
      action.error(`error: --tools and --no-builtins configure the embedded orchestrator; they cannot be used with --orchestrator-addr (given: ${given})`, {
        exitCode: 2,
        code: "orchestra.conflictingOptions",
      });
    }
    // Logged and used as an absolute path: the client's working directory is rarely obvious.
    const certsDirGiven = opts.certsDir;
    if (opts.certsDir !== undefined) opts.certsDir = resolve(opts.certsDir);
    process.exitCode = await serve(opts, { certsDir: optionOrigin(action, "--certs-dir"), certsDirGiven, action });
  });
}

/**
 * V8 heap growth for `serve`, percent over the live heap before the next full GC (V8's own
 * policy allows up to 4x). Each payload byte is copied several times on its way through (JSON,
 * protobuf, the embedded orchestrator), and with the default growth that garbage lets the heap
 * reach many times the backpressure budget; the price is more frequent full collections
 * (docs/reliability.md "Backpressure").
 */
const SERVE_HEAP_GROWING_PERCENT = 20;

/**
 * V8 flags `serve` sets at run time (`v8.setFlagsFromString`; a package `bin` cannot pass `node`
 * flags, and `NODE_OPTIONS` is the user's), in two steps:
 * - {@link SERVE_V8_FLAGS_AT_START}, before the bridge starts: `--semi-space-growth-factor=1`, the
 *   young generation keeps the size it has when `serve` starts (2 semi-spaces of 1-2 MiB) instead
 *   of doubling up to V8's 2 × 16 MiB. Every call allocates a few KiB that die young, and V8 grows
 *   the semi-spaces once the bytes surviving scavenges since the last growth exceed their size,
 *   which start-up and steady traffic always reach; the grown semi-spaces then stay committed
 *   (RSS) for the life of the process. `--max-semi-space-size` would be the direct limit, but V8
 *   reads it only when the isolate is created; the growth factor is read at each growth
 *   (docs/startup.md "Memory").
 * - {@link SERVE_V8_FLAGS_AFTER_START}, once start-up is over ({@link afterStartUp}):
 *   `--heap-growing-percent` ({@link SERVE_HEAP_GROWING_PERCENT}). While the modules of a session
 *   load, the old generation grows from almost nothing, and a 20 % limit would run a full
 *   collection at every fifth of growth, on the path to the first answers; the limit is for the
 *   steady state (large payloads, the backpressure budget), so it is set once start-up is over.
 * Each with V8's default, which the CLI's code cache sets back while it makes the data of scripts
 * compiled before the change (src/cli/v8-flags.ts; test/unit/v8-flags.test.ts checks the defaults).
 */
export const SERVE_V8_FLAGS_AT_START: readonly V8FlagChange[] = [{ set: "--semi-space-growth-factor=1", before: "--semi-space-growth-factor=2" }];
export const SERVE_V8_FLAGS_AFTER_START: readonly V8FlagChange[] = [{ set: `--heap-growing-percent=${SERVE_HEAP_GROWING_PERCENT}`, before: "--heap-growing-percent=0" }];
/** Milliseconds after the first answer (or of an idle start) when start-up is over ({@link afterStartUp}). */
const SERVE_START_MS = 1_000;
/** Milliseconds after the bridge starts reading by which start-up is over in any case ({@link afterStartUp}). */
const SERVE_START_LIMIT_MS = 10_000;

/**
 * Calls `then` once, when `serve`'s start-up is over: {@link SERVE_START_MS} after the bridge's
 * first write to `output` (normally the `initialize` answer; a client's first calls follow it
 * within that time), or {@link SERVE_START_MS} from now when `input` has given no byte by then
 * (no client has spoken: the process is idle), and at the latest {@link SERVE_START_LIMIT_MS}
 * from now. Timed from the answer, not from the process's start, so that a start slower than that
 * (a loaded machine, valgrind) does not do this work before it answers. Call it when the bridge
 * starts reading `input`.
 */
function afterStartUp(output: Writable, input: Readable, then: () => void): void {
  let over = false;
  const end = () => {
    if (over) return;
    over = true;
    then();
  };
  // A socket, a TTY and a file stream count what they read; a stdin that is not open has no such count.
  const idle = setTimeout(() => {
    if (((input as { bytesRead?: number }).bytesRead ?? 0) === 0) end();
  }, SERVE_START_MS).unref();
  // A client that has spoken but got no answer yet (e.g. notifications only) still ends the start.
  setTimeout(end, SERVE_START_LIMIT_MS).unref();
  const own = Object.getOwnPropertyDescriptor(output, "write");
  const write = output.write;
  output.write = function (this: Writable, ...args: Parameters<Writable["write"]>) {
    // Once: the stream's own `write` is put back.
    if (own) Object.defineProperty(output, "write", own);
    else delete (output as Partial<Writable>).write;
    clearTimeout(idle);
    setTimeout(end, SERVE_START_MS).unref();
    return write.apply(this, args);
  } as Writable["write"];
}

/** What `serve` does once start-up is over: the steady-state V8 flags, then the held log records. */
function endStartUp(): void {
  for (const flag of SERVE_V8_FLAGS_AFTER_START) setV8Flag(flag);
  startLogging();
}

/**
 * Runs the bridge until stdin EOF or a signal.
 * @param origins how the user gave options, for messages: `certsDir` (`--certs-dir` or
 *   `ORCHESTRA_CERTS_DIR="/x"`), `certsDirGiven` (the value before it was resolved) and the parsed command
 * @returns the exit status (docs/cli.md "Exit status")
 */
async function serve(opts: ServeOptions, origins: { certsDir: string; certsDirGiven: string | undefined; action: Command }): Promise<number> {
  for (const flag of SERVE_V8_FLAGS_AT_START) setV8Flag(flag);
  // Signals, handled from the start so that the throwaway cert store is always removed:
  // - before the bridge runs: remove it and exit at once (start-up may be stuck, e.g. on a dead filesystem);
  // - while serving (the embedded orchestrator may still be starting; a start still running then is abandoned): stop reading, answer every in-flight call with -32603, clean up, exit 128+n;
  // - a second signal: remove it and exit at once.
  let stopRequested = false;
  let bridgeRef: { interrupt(reason: string): void } | undefined;
  let throwawayDir: string | undefined;
  const emergencyExit = (code: number) => {
    if (throwawayDir) rmSync(throwawayDir, { recursive: true, force: true });
    process.exit(code);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    const code = 128 + (signal === "SIGINT" ? 2 : 15);
    if (stopRequested || !bridgeRef) emergencyExit(code);
    stopRequested = true;
    process.exitCode = code;
    bridgeRef!.interrupt(signal);
    process.stdin.destroy();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  // Loaded here, not at the top, so that `--help` and the other commands start fast.
  const [{ StdioBridge }, { CaptureWriter }, { PACKAGE_NAME, PACKAGE_VERSION }, { parseHostPort }, { STDIO_MAX_LINE_BYTES }, { DeferredSender }] = await Promise.all([
    import("../bridge/stdio-bridge.js"),
    import("../bridge/capture.js"),
    import("../version.js"),
    import("../quic/address.js"),
    import("../framing/line-splitter.js"),
    import("../transport/deferred-sender.js"),
  ]);
  const log = childLogger("serve");
  const cleanups: Array<() => Promise<void>> = [];
  /** Embedded: settles once the orchestrator is up (undefined) or could not start (the message). */
  let embeddedStart: Promise<string | undefined> | undefined;
  /** With an address: checks the cert store once (see below); undefined without one. */
  let checkStore: (() => Promise<TlsMaterial>) | undefined;
  /** The cert store's fault, once {@link checkStore} found one (exit 2). */
  let storeFailure: string | undefined;
  /** A store check is running: a signal then abandons it (it may wait up to 10 s for the store's lock). */
  let storeCheckPending = false;
  let abandoned = false;
  try {
    let sender: Sender;
    let bridgeOutput: Writable = process.stdout;
    let capture: InstanceType<typeof CaptureWriter> | undefined;
    // Opened once the options are known good and before anything starts or logs that it serves:
    // a capture file that cannot be opened is the start-up failure's one `error` line.
    const openCapture = (): boolean => {
      try {
        capture = opts.capture ? new CaptureWriter(opts.capture) : undefined;
      } catch (err) {
        log.error(`cannot open the capture file: ${(err as Error).message}`);
        return false;
      }
      const opened = capture;
      if (opened) cleanups.push(() => opened.close());
      return true;
    };
    try {
      if (opts.orchestratorAddr !== undefined) {
        const { host, port } = parseHostPort(opts.orchestratorAddr);
        if (!openCapture()) return 1;
        const address = opts.orchestratorAddr;
        const certsDir = opts.certsDir ?? defaultCertsDir();
        // An existing orchestrator's CA must be there, and our pair is issued from it: checked
        // after the `initialize` answer (it loads Node's crypto and the X.509 code), by the first
        // request that needs the orchestrator or when start-up is over, whichever comes first,
        // and at stdin EOF if neither came. A fault is logged as an `error`; the bridge serves on,
        // every request that needs the orchestrator answered -32603 naming it (the sender's
        // `connect` failure), and exits 2 at stdin EOF (docs/cli.md "Exit status").
        let checked: Promise<TlsMaterial> | undefined;
        checkStore = () =>
          (checked ??= (async () => {
            storeCheckPending = true;
            try {
              const { BRIDGE_CERT_NAME, ensureCertStore } = await import("../pki/store.js");
              // The path as given (it resolves to opts.certsDir): a literal `~` gets the store's `~` hint.
              return await ensureCertStore(origins.certsDirGiven ?? certsDir, BRIDGE_CERT_NAME, { createCa: false });
            } catch (err) {
              // After a signal the process is ending: its exit status is the signal's, and nothing more is logged.
              if (!stopRequested) log.error((storeFailure = (err as Error).message));
              throw err;
            } finally {
              storeCheckPending = false;
            }
          })());
        // The transport's code loads with the first call that needs the orchestrator, after `initialize`.
        const open = async () => {
          const tls = await checkStore!().catch((err: unknown) => {
            throw new Error(tlsMaterialDetail(err), { cause: err });
          });
          return openSender(opts.transport, { host, port, tls, certsDir, serverName: opts.serverName, ...(opts.idleTimeout ? { idleTimeoutMs: opts.idleTimeout } : {}) });
        };
        sender = new DeferredSender({ address, streams: opts.transport !== "tls", open });
        log.info({ orchestrator: address, transport: opts.transport, certsDir }, `MCP on stdin/stdout, bridged to the orchestrator at ${address} (${opts.transport})`);
      } else {
        const refusal = opts.certsDir === undefined ? undefined : await embeddedStoreRefusal(opts.certsDir, origins.certsDir, origins.certsDirGiven ?? opts.certsDir);
        if (refusal) {
          log.error(refusal);
          return 2;
        }
        if (!openCapture()) return 1;
        // A named store without an address is most often a missing or misspelt address: the demo must not pass for it.
        if (opts.certsDir !== undefined) {
          log.error(
            `no --orchestrator-addr (nor ORCHESTRA_ORCHESTRATOR_ADDR) but a cert store was given (${origins.certsDir}): serving the EMBEDDED DEMO ORCHESTRATOR (its sample tools), not yours. ` +
              `To connect to your orchestrator, set --orchestrator-addr or ORCHESTRA_ORCHESTRATOR_ADDR (check its spelling); for the demo alone, leave out the cert store`,
          );
        }
        // Module code runs in this process: from here on only the bridge writes to fd 1.
        bridgeOutput = divertStdout();
        // Started in the background: stdin is read and `initialize` answered meanwhile; calls
        // that need the orchestrator wait in the DeferredSender until it is up.
        const deferred = new DeferredSender({ address: "embedded", streams: opts.transport !== "tls" });
        sender = deferred;
        const started: EmbeddedResources = {};
        let settled = false;
        embeddedStart = startEmbedded(opts, origins.action, log, started, (dir) => (throwawayDir = dir)).then(
          (real) => {
            settled = true;
            deferred.ready(real);
            return undefined;
          },
          (err: unknown) => {
            settled = true;
            const message = (err as Error).message;
            deferred.fail(message, err);
            return message;
          },
        );
        cleanups.push(async () => {
          // On stdin EOF a start still running is finished first (its log line and its stop, as
          // when it ran before stdin was read); after a signal it is abandoned: the process exits.
          if (!settled && stopRequested) abandoned = true;
          else {
            await embeddedStart;
            await started.orchestrator?.stop();
          }
          if (started.throwawayDir) await rm(started.throwawayDir, { recursive: true, force: true });
        });
      }
    } catch (err) {
      log.error((err as Error).message);
      return 1;
    }
    const activeSender = sender;
    cleanups.unshift(() => activeSender.close());

    if (process.stdin.isTTY) process.stderr.write(TERMINAL_HINT);
    // stdout belongs to JSON-RPC; a closed pipe must not crash the process.
    // The client went away: its message and code at `warn`, the stack (of no use to a user) at `debug`.
    process.stdout.on("error", (err: NodeJS.ErrnoException) => {
      log.warn({ err: err.message, code: err.code }, "stdout closed");
      log.debug({ stack: err.stack }, "stdout closed: stack");
    });
    const bridge = new StdioBridge({
      input: process.stdin,
      output: bridgeOutput,
      sender,
      serverInfo: { name: PACKAGE_NAME, version: PACKAGE_VERSION },
      ...(opts.orchestratorAddr === undefined && opts.certsDir !== undefined ? { instructions: NAMED_STORE_DEMO_INSTRUCTIONS } : {}),
      toolCallTimeoutMs: opts.callTimeout,
      listTimeoutMs: opts.listTimeout,
      shutdownGraceMs: opts.shutdownGrace,
      maxLineBytes: STDIO_MAX_LINE_BYTES,
      capture,
      pageSize: opts.pageSize,
      ...(opts.resourcePrefix ? { resourcePrefixes: opts.resourcePrefix } : {}),
    });
    bridgeRef = bridge;
    let startFailure: string | undefined;
    void embeddedStart?.then((failure) => {
      if (failure === undefined) return;
      startFailure = failure;
      log.error(failure);
      bridge.interrupt(`the embedded orchestrator did not start: ${failure}`);
      process.stdin.destroy();
    });
    afterStartUp(bridgeOutput, process.stdin, () => {
      endStartUp();
      void checkStore?.().catch(() => undefined);
    });
    await bridge.run();
    // stdin may end before a failing start settles, or before the store was checked: either's failure is still the exit status.
    if (!stopRequested) await embeddedStart;
    if (startFailure !== undefined) return 1;
    if (!stopRequested) await checkStore?.().catch(() => undefined);
    if (storeFailure !== undefined) return 2;
    return stopRequested ? (process.exitCode as number) : 0;
  } finally {
    if (stopRequested && storeCheckPending) abandoned = true;
    await runAll(cleanups, log);
    if (abandoned) emergencyExit(process.exitCode as number);
  }
}

/** What the embedded orchestrator's start made so far, for the cleanup. */
interface EmbeddedResources {
  orchestrator?: { stop(): Promise<void> };
  /** A throwaway cert store, removed at exit. */
  throwawayDir?: string;
}

/**
 * Starts the embedded reference orchestrator: loads `--tools`, opens the cert store, listens on
 * an ephemeral loopback port, logs where, and resolves with the sender to it.
 * @param action the parsed command (an error caused by `ORCHESTRA_TOOLS` names it)
 * @param started filled in as parts are made, so that a failed or abandoned start is cleaned up
 * @throws whatever the modules, the cert store or the listener throw (the message is the exit 1 message)
 */
async function startEmbedded(
  opts: ServeOptions,
  action: Command,
  log: { info(obj: object, msg: string): void; warn(msg: string): void; error(obj: object, msg: string): void },
  started: EmbeddedResources,
  onThrowaway: (dir: string) => void,
): Promise<Sender> {
  const { loadOrchestratorContent, keepServingOnModuleErrors } = await import("../orchestrator/load-tools.js");
  // The modules' code runs in this process from their import on, as in `orchestrator`: an error
  // it throws outside a handler (while loading too) is logged, and the bridge serves on.
  keepServingOnModuleErrors(log);
  const content = await loadOrchestratorContent(opts.tools ?? [], opts.builtins).catch((err: unknown) => {
    throw namingVariable(err, action, "--tools");
  });
  // Without a store named: the user's cached embedded store (src/pki/embedded.ts), created
  // once; a throwaway one, removed at exit, only when that cannot be used.
  let certsDir = opts.certsDir ?? (await (await import("../pki/embedded.js")).openEmbeddedStore(undefined, (m) => log.warn(m)))?.dir;
  if (certsDir === undefined) {
    certsDir = started.throwawayDir = await mkdtemp(join(tmpdir(), "orchestra-stdio-"));
    onThrowaway(certsDir);
  }
  const orchestrator =
    opts.transport === "tls"
      ? await (await import("../orchestrator/tls-server.js")).startTlsOrchestrator({ host: "127.0.0.1", port: 0, certsDir, ...content })
      : await (await import("../orchestrator/quic-server.js")).startOrchestrator({ host: "127.0.0.1", port: 0, certsDir, ...content });
  started.orchestrator = orchestrator;
  log.info(
    { orchestrator: orchestrator.address, transport: opts.transport, ...(opts.certsDir ? { certsDir } : {}) },
    `MCP on stdin/stdout, bridged to the embedded reference orchestrator at ${orchestrator.address} (${opts.transport}; no --orchestrator-addr)`,
  );
  return openSender(opts.transport, { host: "127.0.0.1", port: orchestrator.port, certsDir, serverName: "localhost" });
}

/** The sender of `transport` to one orchestrator, its module loaded now. */
async function openSender(transport: Transport, options: import("../quic/quic-link.js").QuicSenderOptions & import("../tls/tls-link.js").TlsSenderOptions): Promise<Sender> {
  return transport === "tls" ? new (await import("../tls/tls-link.js")).TlsSender(options) : new (await import("../quic/quic-link.js")).QuicSender(options);
}

/**
 * Why the embedded orchestrator must not use the user's cert store `dir`, or undefined when it may.
 * It may when `dir` already holds a CA with its key (`ca.crt` and `ca.key`, as `certs init` or
 * `orchestrator` create them). Otherwise it would create a new CA there, and a bridge store
 * meant for another orchestrator (its `ca.crt`, no `ca.key`) would then trust the wrong CA:
 * most often the address was meant to be given and is missing or misspelt. The cert store's
 * module (its `~` sentence and advised directory) is loaded only to refuse.
 * @param origin how the store was given (`--certs-dir` or `ORCHESTRA_CERTS_DIR="/x"`)
 * @param given the path as given (a literal `~` gets the cert store's `~` sentence beside the path it made, and the advice names the home directory)
 */
async function embeddedStoreRefusal(dir: string, origin: string, given: string): Promise<string | undefined> {
  if (existsSync(join(dir, "ca.crt")) && existsSync(join(dir, "ca.key"))) return undefined;
  const { tildeSentence, advisedDir } = await import("../pki/store.js");
  const tilde = tildeSentence(given);
  const advised = advisedDir(dir, given);
  return (
    `no --orchestrator-addr (nor ORCHESTRA_ORCHESTRATOR_ADDR): the embedded reference orchestrator would create a new CA in ${dir} (${origin}${tilde === "" ? "" : `; ${tilde}`}), which holds no ca.crt with its ca.key; refusing to write one there. ` +
    `To connect to your orchestrator, set --orchestrator-addr or ORCHESTRA_ORCHESTRATOR_ADDR (check its spelling); for the embedded orchestrator, leave out the cert store (the user's embedded store is used) or create the CA first with \`orchestra-stdio certs init --certs-dir ${advised}\``
  );
}

async function runAll(cleanups: Array<() => Promise<void>>, log: { warn: (obj: object, msg: string) => void }): Promise<void> {
  for (const c of cleanups) {
    try {
      await c();
    } catch (err) {
      log.warn({ err }, "cleanup failed");
    }
  }
}

/**
 * Embedded mode: the bridge's JSON-RPC lines are the only bytes that reach stdout (fd 1).
 * Returns a Writable that writes to the real stdout (its callbacks, so backpressure and errors,
 * are the real stdout's), and makes `process.stdout.write` — hence `console.log`, `console.info`
 * and anything else in the process, e.g. a module's tool — write to stderr instead.
 */
function divertStdout(): Writable {
  const stdout = process.stdout;
  const write = stdout.write.bind(stdout) as (chunk: unknown, cb: (err?: Error | null) => void) => boolean;
  const output = new Writable({
    highWaterMark: stdout.writableHighWaterMark,
    write(chunk: Buffer, _encoding, callback) {
      write(chunk, callback);
    },
  });
  stdout.write = ((...args: Parameters<typeof process.stderr.write>) => process.stderr.write(...args)) as typeof stdout.write;
  return output;
}

// `--transport quic|tls`: which Sender (and embedded orchestrator) `serve` uses.
const TRANSPORTS = ["quic", "tls"] as const;
type Transport = (typeof TRANSPORTS)[number];

/**
 * `instructions` of the `initialize` result when the embedded orchestrator serves on a cert store
 * the user named without an address: the client (and its model) can tell the demo from the real thing.
 */
export const NAMED_STORE_DEMO_INSTRUCTIONS =
  "This is the embedded demo orchestrator of orchestra-stdio (sample tools only): no orchestrator address was given (--orchestrator-addr / ORCHESTRA_ORCHESTRATOR_ADDR), although a cert store was.";

/** Printed on stderr when stdin is a terminal: `serve` is meant to be started by an MCP client. */
export const TERMINAL_HINT =
  "orchestra-stdio serve speaks MCP: one JSON-RPC message per line on stdin, answers on stdout.\n" +
  "It is meant to be started by an MCP client (see the README); type requests here, or press Ctrl-D to quit.\n";
