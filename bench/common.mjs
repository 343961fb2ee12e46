// Shared pieces of the benchmarks in bench/ (plain ESM, no build step): the processes they start
// (our reference orchestrator, the upstream Go orchestrator), the counting UDP relay, per-process
// CPU and memory from /proc, and the latency quantile. One copy here; the bench scripts import it.
import { spawn } from "node:child_process";
import { createSocket } from "node:dgram";
import { execSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The project root (this file is bench/common.mjs). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * `../shared` beside the project root (developers and CI only; `ORCHESTRA_SHARED_DIR` when set, e.g.
 * for a git worktree elsewhere); same rule as test/helpers/requires.ts.
 */
export const SHARED_DIR = process.env.ORCHESTRA_SHARED_DIR ?? resolve(ROOT, "../shared");

/**
 * Where the upstream Go peer binaries are: `ORCHESTRA_GO_PEER_BIN`, default
 * `~/.cache/orchestra-go-peer/bin` (what `../shared/go-peer/build.sh` writes; the same rule as
 * `GO_PEER_BIN` in test/helpers/requires.ts, which TypeScript-only tests use).
 */
export const GO_PEER_BIN = process.env.ORCHESTRA_GO_PEER_BIN ?? join(homedir(), ".cache/orchestra-go-peer/bin");

/** Skip reason when the upstream Go orchestrator, bridge, echo plugin or run script is missing; else undefined. */
export function goPeerMissing() {
  for (const name of ["orchestrator", "transport-stdio", "tools-echo"]) {
    if (!existsSync(join(GO_PEER_BIN, name))) {
      return `needs the upstream Go peer in ${GO_PEER_BIN} (bash ../shared/go-peer/build.sh --bin DIR; ORCHESTRA_GO_PEER_BIN=DIR)`;
    }
  }
  if (!existsSync(join(SHARED_DIR, "go-peer/run-orchestrator.sh"))) return "needs ../shared/go-peer/run-orchestrator.sh";
  return undefined;
}

/** Element at quantile `q` (0..1) of an ascending array (nearest rank, lower side). */
export function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** The last non-blank line of a text ("" when none): the gist of a failed process's stderr. */
export function lastLine(text) {
  return text.trimEnd().split("\n").at(-1) ?? "";
}

/** Median of numbers (any order); NaN for an empty list. */
export function median(values) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

let CLK_TCK = 100;
try {
  CLK_TCK = Number(execSync("getconf CLK_TCK", { encoding: "utf8" }).trim()) || 100;
} catch {
  /* keep 100 */
}

/** CPU time (user + system) a process has used so far, in ms (/proc/<pid>/stat utime + stime); NaN once it is gone. */
export function cpuMsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the ")" of comm start at field 3; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
  } catch {
    return NaN;
  }
}

/** Resident set size now and its peak (VmRSS, VmHWM of /proc/<pid>/status), in KiB. */
export function memoryKiBOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { rssKiB: field("VmRSS"), peakRssKiB: field("VmHWM") };
}

/**
 * Variables of the caller's environment that the benchmarks keep from the processes they measure
 * ({@link measuredEnvironment}):
 * - `ORCHESTRA_*`: a variable `serve` does not read (the tests' `ORCHESTRA_SHARED_DIR`, the
 *   benchmarks' `ORCHESTRA_GO_PEER_BIN`) is a warning record;
 * - `NODE_EXTRA_CA_CERTS`: Node 20 reads and parses that CA bundle at every start, before any
 *   JavaScript runs, and adds Node's own root certificates to the same store: on a machine whose
 *   environment sets it to the system bundle (~140 certificates), ~400 M instructions and ~35 ms
 *   per process, bare Node's as much as ours, which hid most of the start-up ratios' numerators.
 *   No process measured here uses public CAs (their TLS trusts the cert store's CA alone).
 */
export const UNMEASURED_VARIABLES = [/^ORCHESTRA_/, /^NODE_EXTRA_CA_CERTS$/];

/** `env` without {@link UNMEASURED_VARIABLES}; `removed`: the names taken out. */
export function measuredEnvironment(env = process.env) {
  const removed = Object.keys(env).filter((name) => UNMEASURED_VARIABLES.some((pattern) => pattern.test(name)));
  return { env: Object.fromEntries(Object.entries(env).filter(([name]) => !removed.includes(name))), removed };
}

/**
 * The CLI of the build in `dist` (default: this tree's dist/): its `bin`, dist/cli/main.cjs, or
 * for a build made before it had one, dist/cli/main.js.
 */
export function cliOf(dist = join(ROOT, "dist")) {
  const bin = join(dist, "cli/main.cjs");
  return existsSync(bin) ? bin : join(dist, "cli/main.js");
}

/** A fresh temporary directory (the caller removes it). */
export function tempDir(prefix) {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * Waits for `READY <host:port>` on a child's stderr; resolves with the port. Rejects with the
 * stderr so far when the child exits first or after `timeoutMs`.
 */
function readyPort(child, what, timeoutMs = 30_000) {
  let stderr = "";
  let ready = false;
  child.stderr.setEncoding("utf8");
  return new Promise((resolveReady, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start within ${timeoutMs} ms; stderr ends: ${lastLine(stderr)}\n${stderr}`)), timeoutMs);
    // "close": after the exit and after stderr has delivered everything.
    const onExit = (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code ?? signal}) before READY; stderr ends: ${lastLine(stderr)}\n${stderr}`));
    };
    child.once("close", onExit);
    child.stderr.on("data", (d) => {
      if (stderr.length < 64 * 1024) stderr += d;
      const m = /READY (\S+)/.exec(stderr);
      if (m && !ready) {
        ready = true;
        clearTimeout(timer);
        child.off("close", onExit);
        resolveReady(Number(m[1].slice(m[1].lastIndexOf(":") + 1)));
      }
    });
  });
}

/** SIGTERM, then SIGKILL after `graceMs` if the process is still there; resolves once it has exited. */
function stopChild(child, graceMs = 3000) {
  return new Promise((resolveStop) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolveStop();
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolveStop();
    });
    child.kill("SIGTERM");
  });
}

/**
 * Creates the bridge's certificate (`transport.stdio-client`) in a cert store whose CA an
 * orchestrator has made, with the project's own `ensureCertStore`, once, before any bridge runs:
 * the measured bridges then only read the store, as on any launch after the first. (Two bridge
 * components creating it at once in a fresh store can leave a key that is not the certificate's.)
 */
export async function provisionBridgeCert(certsDir, dist = join(ROOT, "dist")) {
  const { ensureCertStore, BRIDGE_CERT_NAME } = await import(join(dist, "pki/store.js"));
  await ensureCertStore(certsDir, BRIDGE_CERT_NAME);
}

/**
 * Starts our reference orchestrator (`dist/cli/main.cjs orchestrator`) as a separate process on an
 * ephemeral loopback port. `transport`: "quic" | "tls". `nodeArgs`: extra Node flags.
 * Returns { port, pids, stop() } (`pids`: the processes that do the orchestrator's work).
 */
export async function startOurOrchestrator({ dist = join(ROOT, "dist"), transport = "quic", certsDir, nodeArgs = [] }) {
  const child = spawn(process.execPath, [...nodeArgs, cliOf(dist), "orchestrator", "--transport", transport, "--listen", "127.0.0.1:0", "--certs-dir", certsDir], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  const port = await readyPort(child, "our orchestrator");
  return { kind: "ours", transport, port, pids: [child.pid], stop: () => stopChild(child) };
}

/**
 * Starts the upstream Go orchestrator with its echo plugin (`../shared/go-peer/run-orchestrator.sh`,
 * binaries from {@link GO_PEER_BIN}) on an ephemeral loopback port, QUIC only. `pids`: the
 * orchestrator and the plugin process (upstream routes every tool_call to the plugin over QUIC).
 * stop(): SIGTERM, SIGKILL after 3 s (upstream can hang in "stopping all plugins"), then the
 * plugin, which upstream does not tie to its own life.
 */
export async function startUpstreamOrchestrator({ certsDir }) {
  const state = tempDir("orchestra-bench-go-orch-");
  const child = spawn("bash", [join(SHARED_DIR, "go-peer/run-orchestrator.sh"), "--certs-dir", certsDir, "--bin", GO_PEER_BIN, "--state", state], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  const port = await readyPort(child, "upstream orchestrator");
  const pluginPid = Number(readFileSync(join(state, "plugin.pid"), "utf8").trim());
  return {
    kind: "upstream",
    transport: "quic",
    port,
    pids: [child.pid, pluginPid],
    abort: () => {
      if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
    },
    stop: async () => {
      await stopChild(child);
      try {
        process.kill(pluginPid, "SIGKILL");
      } catch {
        /* already gone */
      }
      rmSync(state, { recursive: true, force: true });
    },
  };
}

/**
 * A UDP relay on 127.0.0.1 in front of the server on `serverPort`, counting datagrams:
 * `counts.up` client → server, `counts.down` server → client. Each client address (a bridge may
 * hold several QUIC connections, each on its own socket: `serve` has one for unary calls and one
 * for streaming) gets its own socket towards the server, as a NAT would, so every reply goes back
 * to the socket it belongs to; at most 16 client addresses (`counts.refused` counts the datagrams
 * of any more). Nothing is queued. close() releases every socket.
 */
export async function startRelay(serverPort) {
  const MAX_CLIENTS = 16;
  const front = createSocket("udp4");
  const counts = { up: 0, down: 0, clients: 0, refused: 0 };
  const backs = new Map(); // "address:port" of a client → its socket towards the server
  const buffers = (s) => {
    s.setRecvBufferSize(4 << 20);
    s.setSendBufferSize(4 << 20);
  };
  front.on("message", (msg, rinfo) => {
    const key = `${rinfo.address}:${rinfo.port}`;
    let back = backs.get(key);
    if (!back) {
      if (backs.size >= MAX_CLIENTS) return void counts.refused++;
      back = createSocket("udp4");
      back.on("listening", () => buffers(back));
      back.on("message", (reply) => {
        counts.down++;
        front.send(reply, rinfo.port, rinfo.address);
      });
      back.bind(0, "127.0.0.1"); // sends made before the bind completes wait for it
      backs.set(key, back);
      counts.clients++;
    }
    counts.up++;
    back.send(msg, serverPort, "127.0.0.1");
  });
  await new Promise((r) => front.bind(0, "127.0.0.1", r));
  buffers(front);
  return {
    port: front.address().port,
    counts,
    close: () => Promise.all([front, ...backs.values()].map((s) => new Promise((r) => s.close(r)))),
  };
}

/** Skip reason when `strace` cannot be run; else undefined. */
export function straceMissing() {
  try {
    execSync("strace -V", { stdio: "ignore" });
    return undefined;
  } catch {
    return "needs strace on PATH (apt-get install strace) and permission to attach (ptrace)";
  }
}

/**
 * Counts the system calls of running processes (every thread) with `strace -c`, from start() to
 * stop(). start() resolves once strace has attached to every process; stop() detaches (SIGINT)
 * and resolves with { syscall name → calls } (strace's "total" row left out); abort() detaches
 * without a result (idempotent, for error paths). Tracing slows the processes down: never time a
 * traced run.
 */
export function syscallCounter(pids) {
  const out = join(tempDir("orchestra-bench-strace-"), "summary.txt");
  let child;
  return {
    start: () =>
      new Promise((resolveStart, reject) => {
        // -f with -p attaches to every thread of the process (and follows new ones).
        child = spawn("strace", ["-f", "-c", "-o", out, ...pids.flatMap((pid) => ["-p", String(pid)])], { stdio: ["ignore", "ignore", "pipe"] });
        let stderr = "";
        const timer = setTimeout(() => reject(new Error(`strace did not attach within 30 s:\n${stderr}`)), 30_000);
        child.stderr.setEncoding("utf8");
        child.stderr.on("data", (d) => {
          stderr += d;
          if ((stderr.match(/Process \d+ attached/g) ?? []).length >= pids.length) {
            clearTimeout(timer);
            resolveStart();
          }
        });
        child.once("exit", (code) => reject(new Error(`strace exited (${code}):\n${stderr}`)));
      }),
    abort: () => {
      if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
      rmSync(dirname(out), { recursive: true, force: true });
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGINT");
        await exited;
      }
      const counts = {};
      // strace -c table rows: "% time  seconds  usecs/call  calls  [errors]  syscall"
      for (const line of readFileSync(out, "utf8").split("\n")) {
        const t = line.trim().split(/\s+/);
        if ((t.length === 5 || t.length === 6) && /^\d+$/.test(t[3]) && /^[a-z_0-9]+$/.test(t.at(-1)) && t.at(-1) !== "total") counts[t.at(-1)] = Number(t[3]);
      }
      rmSync(dirname(out), { recursive: true, force: true });
      return counts;
    },
  };
}
