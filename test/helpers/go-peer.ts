/**
 * The upstream Go peers as test parties (../shared/go-peer/README.md): the Go orchestrator with
 * its `tools.echo` plugin (`run-orchestrator.sh`), and the Go stdio bridge (`transport-stdio`).
 * Binaries from {@link GO_PEER_BIN}; callers skip with {@link requireGoPeer}'s reason first.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GO_PEER_BIN, requireGoPeer, requireShared, sharedPath } from "./requires.js";

/** Skip reason for a Go-peer test file: `../shared/go-peer` or the built binaries missing. */
export function goPeerSkipReason(): string | undefined {
  return requireShared("go-peer/run-orchestrator.sh") ?? requireGoPeer();
}

/** How long an idle session is watched for a spurious `list_changed` (issue 12: 10 s). */
export const IDLE_MS = 10_000;

/** Text an echo must return unchanged: emoji, CJK, U+2028 / U+2029, quotes, backslash, TAB. */
export const HARD_TEXT = 'emoji 🙂🚀 CJK 漢字かな한글 line\u2028sep\u2029para "quoted" \\back\\slash\ttab';

/** The `method` of every message (batches flattened) among lines a client received. */
export function methodsOf(lines: ReadonlyArray<Record<string, unknown> | Array<Record<string, unknown>>>): unknown[] {
  return lines.flatMap((l) => (Array.isArray(l) ? l : [l])).map((m) => m.method);
}

/** Path of the upstream Go stdio bridge binary. */
export const GO_BRIDGE = join(GO_PEER_BIN, "transport-stdio");

export interface GoOrchestrator {
  /** `host:port` it listens on (QUIC). */
  address: string;
  child: ChildProcessWithoutNullStreams;
  /** Everything it wrote on stderr so far. */
  stderr: () => string;
  /**
   * Sends `signal` to the orchestrator and resolves once it exited. After a SIGKILL the plugin
   * survives (upstream does not tie it to its parent): it is killed too; on SIGTERM the
   * orchestrator stops it itself.
   */
  kill: (signal: NodeJS.Signals) => Promise<void>;
}

/**
 * Starts the upstream orchestrator with the echo plugin (`echo {text}`, `slow {ms}`) and
 * resolves once it printed `READY <host:port>` (plugin registered).
 * @param listen `host:port` (default an ephemeral loopback port; reuse an address to restart)
 */
export async function startGoOrchestrator(options: { certsDir: string; listen?: string }): Promise<GoOrchestrator> {
  const state = await mkdtemp(join(tmpdir(), "go-orch-"));
  const child = spawn(
    "bash",
    [sharedPath("go-peer/run-orchestrator.sh"), "--certs-dir", options.certsDir, "--bin", GO_PEER_BIN, "--state", state, "--listen", options.listen ?? "127.0.0.1:0"],
    { stdio: ["pipe", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Go orchestrator not READY within 60 s; stderr:\n${stderr}`)), 60_000);
    const onData = (): void => {
      const m = /^READY (\S+)$/m.exec(stderr);
      if (m) {
        clearTimeout(timer);
        child.stderr.off("data", onData);
        resolve(m[1]!);
      } else if (/NOT READY/.test(stderr)) {
        clearTimeout(timer);
        reject(new Error(`Go orchestrator failed to start:\n${stderr}`));
      }
    };
    child.stderr.on("data", onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`Go orchestrator exited (${String(child.exitCode ?? child.signalCode)}); stderr:\n${stderr}`));
    });
  });
  const kill = async (signal: NodeJS.Signals): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    if (signal !== "SIGKILL") {
      // Upstream v1.0.2 may not exit after SIGTERM: it hangs in "stopping all plugins" (its QUIC
      // listener and connections are already closed by then), so it gets SIGKILL after a grace.
      const inTime = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5_000).unref())]);
      if (!inTime) child.kill("SIGKILL");
    }
    await exited;
    await killPlugin(state);
    await rm(state, { recursive: true, force: true });
  };
  return { address, child, stderr: () => stderr, kill };
}

/**
 * Kills the plugin a SIGKILLed orchestrator left running (its PID is in `<state>/plugin.pid`),
 * if that PID is still the plugin's.
 */
async function killPlugin(state: string): Promise<void> {
  const pid = Number((await readFile(join(state, "plugin.pid"), "utf8").catch(() => "")).trim());
  if (!(pid > 0)) return;
  const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
  if (!cmdline.includes("tools-echo")) return;
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    /* already gone */
  }
}
