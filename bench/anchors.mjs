// `node bench/anchors.mjs [--quick] [--rounds N] [--json FILE] [--only throughput,start,heap,datagrams,syscalls] [--syscalls-in-flight N]`
// (first part of `npm run bench`): our bridge measured against its real anchors in one run
// (issue 16), 100-byte `echo` tools/call, every figure from this process's stdio client
// (bench/stdio-session.mjs) writing JSON-RPC lines to the subject's stdin:
//
// - throughput, at 1 and 64 calls in flight: our bridge (`serve`) and the upstream Go bridge
//   (`transport-stdio`) against the upstream Go orchestrator (`../shared/go-peer`), both against
//   our orchestrator (`dist/cli/main.js orchestrator`, its own process) over QUIC, our bridge
//   against our orchestrator over `--transport tls`, our bridge with the embedded orchestrator
//   (QUIC and TLS), the MCP SDK's stdio server (bench/baseline-server.mjs: McpServer with one
//   echo tool, no hop) and a bare Node process (bench/bare-node-server.mjs, Node's floor and the
//   ceiling of this client). Per case: calls/s, p50/p99 latency in ms, CPU ms per call of the
//   bridge and of the orchestrator side (/proc/<pid>/stat; upstream: orchestrator + echo plugin).
//   Rounds are interleaved (the order reverses every round); figures are medians over rounds.
// - start-up, per spawn: spawn → `initialize` answered, spawn → first `tools/call` answered
//   (sent right after the initialize response), CPU ms used by then, and RSS (VmRSS, VmHWM)
//   after 1,000 calls at 1 in flight; for our bridge against our orchestrator and embedded, the
//   Go bridge against our orchestrator, the SDK's stdio server and the bare Node process. One
//   unmeasured spawn of each first (page cache; our processes' code cache, kept in the run's own
//   XDG_CACHE_HOME); medians over the measured spawns, ratios the median of per-round ratios
//   (bench/startup-compare.mjs measures the same way).
// - the JavaScript heap after 1,000 calls of the Node subjects (process.memoryUsage(), before and
//   after a full GC, through bench/startup/memory-probe.mjs; separate spawns, since the probe is
//   one more module to load).
// - QUIC datagrams per call each way, 1 and 64 in flight, for every bridge/orchestrator pair on
//   QUIC, counted by a UDP relay on loopback between them (a separate, untimed pass).
// - system calls per call on each side at 64 in flight, every bridge/orchestrator pair (strace -c
//   attached for the measured calls only; a separate, untimed pass).
// - the ratios against the issue's targets: measured, target, met or not.
//
// Without the Go peer (ORCHESTRA_GO_PEER_BIN, default ~/.cache/orchestra-go-peer/bin, and
// ../shared/go-peer) its rows and ratios are skipped with the reason; likewise the syscall pass
// without strace. A subject that crashes or stops answering (bench/stdio-session.mjs: 60 s) is
// reported FAILED and the run goes on; any failure makes the exit code 1. Machine-readable summary:
// bench/results/anchors-latest.json (or --json FILE). Needs `npm run build` first.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import {
  GO_PEER_BIN,
  ROOT,
  cliOf,
  cpuMsOf,
  goPeerMissing,
  measuredEnvironment,
  median,
  provisionBridgeCert,
  startOurOrchestrator,
  startRelay,
  startUpstreamOrchestrator,
  straceMissing,
  syscallCounter,
  tempDir,
} from "./common.mjs";
import { StdioSession, driveEcho } from "./stdio-session.mjs";

// Every process of the run (subjects, orchestrators) gets the caller's environment without the
// variables that common.mjs's UNMEASURED_VARIABLES names (NODE_EXTRA_CA_CERTS, ORCHESTRA_*).
const { removed: removedVariables } = measuredEnvironment();
for (const name of removedVariables) delete process.env[name];

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const quick = flag("--quick");
const jsonOut = option("--json", join(ROOT, "bench/results/anchors-latest.json"));
const PASSES = ["throughput", "start", "heap", "datagrams", "syscalls"];
const only = new Set(option("--only", PASSES.join(",")).split(","));
for (const pass of only) {
  if (!PASSES.includes(pass)) {
    console.error(`--only: unknown pass ${JSON.stringify(pass)} (passes: ${PASSES.join(", ")})`);
    process.exit(2);
  }
}
const PAYLOAD = 100;
const CONFIG = {
  rounds: Math.max(1, Math.trunc(Number(option("--rounds", quick ? 1 : 3))) || 1),
  warmupCalls: quick ? 100 : 500,
  cases: [
    { inFlight: 1, calls: quick ? 200 : 2000 },
    { inFlight: 64, calls: quick ? 1000 : 10_000 },
  ],
  startSpawns: quick ? 2 : 7,
  callsBeforeRss: 1000,
  heapSpawns: quick ? 1 : 3,
  datagramCalls: quick ? 500 : 4000,
  syscallCalls: quick ? 300 : 2000,
  // engine (issue 16 item 2): `--syscalls-in-flight N` runs the syscall pass at N calls in
  // flight instead of 64 (e.g. 1, where an ACK-only datagram per call shows).
  syscallInFlight: Math.max(1, Math.trunc(Number(option("--syscalls-in-flight", 64))) || 64),
};

const MAIN = cliOf();
const goMissing = goPeerMissing();
const log = (line) => process.stderr.write(`${line}\n`);

// ---- subjects ------------------------------------------------------------------------------
// A subject is one MCP stdio server command line; `orch` (if any) is the orchestrator it dials.
const addr = (port) => `127.0.0.1:${port}`;
const SUBJECTS = {
  ours: (o) => [process.execPath, [MAIN, "serve", "--orchestrator-addr", addr(o.port), "--certs-dir", o.certsDir, "--transport", o.transport]],
  go: (o) => [join(GO_PEER_BIN, "transport-stdio"), ["--orchestrator-addr", addr(o.port), "--certs-dir", o.certsDir]],
  embedded: (transport) => [process.execPath, [MAIN, "serve", "--transport", transport]],
  sdk: () => [process.execPath, [join(ROOT, "bench/baseline-server.mjs")]],
  bare: () => [process.execPath, [join(ROOT, "bench/bare-node-server.mjs")]],
};

function spawnSubject([command, args]) {
  return new StdioSession(command, args);
}

// ---- orchestrators (long-lived for the whole run, as in a deployment) ----------------------
const work = tempDir("orchestra-bench-anchors-");
// Every process of the run (our orchestrators and bridges) keeps its code cache and the embedded
// cert store in the run's own cache directory, as a user's own would be: written by the start
// pass's unmeasured round, and shared with no test, other build or other run (the user's cache
// directory keeps at most 8 code cache files, and their processes rewrite them meanwhile).
process.env.XDG_CACHE_HOME = join(work, "xdg-cache");
const orchestrators = {};
async function startOrchestrators() {
  const oursCerts = join(work, "certs-ours");
  orchestrators.oursQuic = { ...(await startOurOrchestrator({ transport: "quic", certsDir: oursCerts })), certsDir: oursCerts };
  orchestrators.oursTls = { ...(await startOurOrchestrator({ transport: "tls", certsDir: oursCerts })), certsDir: oursCerts };
  await provisionBridgeCert(oursCerts);
  if (!goMissing) {
    const upCerts = join(work, "certs-upstream");
    try {
      orchestrators.upstream = { ...(await startUpstreamOrchestrator({ certsDir: upCerts })), certsDir: upCerts };
      await provisionBridgeCert(upCerts);
    } catch (err) {
      upstreamFailure = `the upstream orchestrator did not start: ${err.message.split("\n")[0]}`;
      log(`FAILED: ${err.message}`);
    }
  }
}
/** Set when the Go peer is there but its orchestrator failed to start (the run fails). */
let upstreamFailure;

/**
 * The bridge → orchestrator pairs (separate processes): id, label, bridge ("ours" | "go"), the
 * orchestrator (a key of `orchestrators`), skip reason. Used by the throughput, datagram and
 * syscall passes.
 */
function bridgePairs() {
  return [
    { id: "ours-upstream", label: "our bridge → upstream orchestrator (QUIC)", bridge: "ours", orch: "upstream", skipped: goMissing ?? upstreamFailure },
    { id: "go-upstream", label: "Go bridge → upstream orchestrator (QUIC)", bridge: "go", orch: "upstream", skipped: goMissing ?? upstreamFailure },
    { id: "ours-ours", label: "our bridge → our orchestrator (QUIC)", bridge: "ours", orch: "oursQuic" },
    { id: "go-ours", label: "Go bridge → our orchestrator (QUIC)", bridge: "go", orch: "oursQuic", skipped: goMissing },
    { id: "ours-ours-tls", label: "our bridge → our orchestrator (TLS)", bridge: "ours", orch: "oursTls" },
  ].map((p) => ({ ...p, cmd: () => SUBJECTS[p.bridge](orchestrators[p.orch]), orchestrator: () => orchestrators[p.orch] }));
}

/** Throughput subjects: the bridge pairs, then the single-process ones. */
function throughputPairs() {
  return [
    ...bridgePairs(),
    { id: "embedded-quic", label: "our bridge, embedded orchestrator (QUIC)", cmd: () => SUBJECTS.embedded("quic") },
    { id: "embedded-tls", label: "our bridge, embedded orchestrator (TLS)", cmd: () => SUBJECTS.embedded("tls") },
    { id: "sdk", label: "MCP SDK stdio server (in-process echo)", cmd: () => SUBJECTS.sdk() },
    { id: "bare", label: "bare Node (floor; this client's ceiling)", cmd: () => SUBJECTS.bare() },
  ];
}

/**
 * Runs `measure(item)` for every item not skipped, `rounds` times, the order reversed every other
 * round (so drift of the machine's load does not favour one subject). A subject whose measurement
 * throws (it crashed, hung, or refused a call) is reported and not measured again.
 * `unmeasuredFirst`: one more round first whose results are dropped (page cache).
 * Returns { samples: Map id → results, errors: Map id → message }.
 */
async function interleaved(items, rounds, measure, report, { unmeasuredFirst = false } = {}) {
  const samples = new Map(items.map((it) => [it.id, []]));
  const errors = new Map();
  for (let round = unmeasuredFirst ? -1 : 0; round < rounds; round++) {
    for (const it of round % 2 ? [...items].reverse() : items) {
      if (it.skipped || errors.has(it.id)) continue;
      try {
        const r = await measure(it);
        if (round < 0) continue; // the unmeasured round
        samples.get(it.id).push(r);
        report(it, r, round + 1);
      } catch (err) {
        errors.set(it.id, err.message);
        log(`${it.id}: FAILED: ${err.message}`);
      }
    }
  }
  return { samples, errors };
}

/** The row of a subject that was skipped or failed, or undefined when it has figures. */
function notMeasured(item, errors) {
  if (item.skipped) return { id: item.id, label: item.label, skipped: item.skipped };
  if (errors?.has(item.id)) return { id: item.id, label: item.label, error: errors.get(item.id) };
  return undefined;
}

const sumCpu = (pids) => pids.reduce((s, pid) => s + cpuMsOf(pid), 0);

async function throughputOnce(pair) {
  const session = spawnSubject(pair.cmd());
  const orchPids = pair.orchestrator?.().pids ?? [];
  try {
    await session.initialize();
    const warm = await driveEcho(session, { payload: PAYLOAD, inFlight: 8, calls: CONFIG.warmupCalls });
    if (warm.failures) throw new Error(`${pair.id}: warm-up failures (${warm.failures}), first: ${warm.firstFailure}`);
    const out = [];
    for (const c of CONFIG.cases) {
      const b0 = session.cpuMs();
      const o0 = sumCpu(orchPids);
      const r = await driveEcho(session, { payload: PAYLOAD, ...c });
      out.push({
        ...c,
        ...r,
        bridgeCpuMsPerCall: (session.cpuMs() - b0) / c.calls,
        orchestratorCpuMsPerCall: orchPids.length ? (sumCpu(orchPids) - o0) / c.calls : undefined,
      });
    }
    return out;
  } finally {
    await session.close();
  }
}

async function throughputPass() {
  const pairs = throughputPairs();
  const { samples, errors } = await interleaved(pairs, CONFIG.rounds, throughputOnce, (pair, cases, round) =>
    log(
      `round ${round}/${CONFIG.rounds} ${pair.id.padEnd(14)} ${cases.map((c) => `x${c.inFlight}: ${c.callsPerSec.toFixed(0)} calls/s${c.failures ? ` (${c.failures} FAILED)` : ""}`).join(", ")}`,
    ),
  );
  return pairs.map((p) => {
    const none = notMeasured(p, errors);
    if (none) return none;
    const rounds = samples.get(p.id);
    const cases = CONFIG.cases.map((c, i) => {
      const of = (key) => median(rounds.map((r) => r[i][key]).filter((v) => v !== undefined));
      const orchCpu = rounds.every((r) => r[i].orchestratorCpuMsPerCall !== undefined) ? of("orchestratorCpuMsPerCall") : undefined;
      return {
        inFlight: c.inFlight,
        callsPerRound: c.calls,
        rounds: rounds.length,
        failures: rounds.reduce((s, r) => s + r[i].failures, 0),
        firstFailure: rounds.map((r) => r[i].firstFailure).find((f) => f),
        callsPerSec: of("callsPerSec"),
        callsPerSecRounds: rounds.map((r) => r[i].callsPerSec),
        p50Ms: of("p50Ms"),
        p99Ms: of("p99Ms"),
        bridgeCpuMsPerCall: of("bridgeCpuMsPerCall"),
        orchestratorCpuMsPerCall: orchCpu,
      };
    });
    return { id: p.id, label: p.label, cases };
  });
}

// ---- start-up and memory -------------------------------------------------------------------
function startSubjects() {
  const o = orchestrators;
  return [
    { id: "ours-remote", label: "our bridge → our orchestrator (QUIC, separate process)", cmd: () => SUBJECTS.ours(o.oursQuic) },
    { id: "ours-embedded", label: "our bridge, embedded orchestrator (QUIC)", cmd: () => SUBJECTS.embedded("quic") },
    { id: "go-remote", label: "Go bridge → our orchestrator (QUIC)", cmd: () => SUBJECTS.go(o.oursQuic), skipped: goMissing },
    { id: "sdk", label: "MCP SDK stdio server", cmd: () => SUBJECTS.sdk() },
    { id: "bare", label: "bare Node (floor)", cmd: () => SUBJECTS.bare() },
  ];
}

async function startOnce(subject) {
  const session = spawnSubject(subject.cmd());
  try {
    const initAt = await session.initialize();
    const first = await session.echo("x".repeat(PAYLOAD));
    if (!first.ok) throw new Error(`${subject.id}: first tools/call failed: ${JSON.stringify(first.message)}`);
    const cpuMsToFirstCall = session.cpuMs();
    const rest = await driveEcho(session, { payload: PAYLOAD, inFlight: 1, calls: CONFIG.callsBeforeRss - 1 });
    if (rest.failures) throw new Error(`${subject.id}: ${rest.failures} failed calls, first: ${rest.firstFailure}`);
    const mem = session.memory();
    return { initializeMs: initAt - session.spawnedAt, firstCallMs: first.at - session.spawnedAt, cpuMsToFirstCall, ...mem };
  } finally {
    await session.close();
  }
}

async function startPass() {
  const subjects = startSubjects();
  const { samples, errors } = await interleaved(
    subjects,
    CONFIG.startSpawns,
    startOnce,
    (s, r, round) =>
      log(
        `spawn ${round}/${CONFIG.startSpawns} ${s.id.padEnd(14)} initialize ${r.initializeMs.toFixed(1)} ms, first call ${r.firstCallMs.toFixed(1)} ms, RSS ${(r.rssKiB / 1024).toFixed(1)} MiB`,
      ),
    { unmeasuredFirst: true },
  );
  return subjects.map((s) => {
    const none = notMeasured(s, errors);
    if (none) return none;
    const runs = samples.get(s.id);
    const of = (key) => median(runs.map((r) => r[key]));
    return {
      id: s.id,
      label: s.label,
      spawns: runs.length,
      initializeMs: of("initializeMs"),
      initializeMsMin: Math.min(...runs.map((r) => r.initializeMs)),
      firstCallMs: of("firstCallMs"),
      firstCallMsMin: Math.min(...runs.map((r) => r.firstCallMs)),
      cpuMsToFirstCall: of("cpuMsToFirstCall"),
      rssKiB: of("rssKiB"),
      peakRssKiB: of("peakRssKiB"),
      runs: Object.fromEntries(["initializeMs", "firstCallMs", "rssKiB"].map((k) => [k, runs.map((r) => r[k])])),
    };
  });
}

// ---- JavaScript heap after 1,000 calls (the Node subjects) ----------------------------------
const MEMORY_PROBE = join(ROOT, "bench/startup/memory-probe.mjs");

/** The heap after 1,000 calls at 1 in flight, read through bench/startup/memory-probe.mjs (SIGUSR2). */
async function heapOnce(subject) {
  const [command, args] = subject.cmd();
  const out = join(work, `heap-${subject.id}-${Date.now()}.json`);
  const session = new StdioSession(command, ["--import", MEMORY_PROBE, ...args], { env: { ...process.env, MEMORY_PROBE_OUT: out } });
  try {
    await session.initialize();
    const r = await driveEcho(session, { payload: PAYLOAD, inFlight: 1, calls: CONFIG.callsBeforeRss });
    if (r.failures) throw new Error(`${subject.id}: ${r.failures} failed calls, first: ${r.firstFailure}`);
    process.kill(session.pid, "SIGUSR2");
    for (let waited = 0; !existsSync(out); waited += 20) {
      if (waited > 10_000) throw new Error(`${subject.id}: no memory report 10 s after SIGUSR2`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return JSON.parse(readFileSync(out, "utf8"));
  } finally {
    await session.close();
  }
}

async function heapPass() {
  const subjects = startSubjects().filter((s) => s.id !== "go-remote"); // Node processes only
  const { samples, errors } = await interleaved(subjects, CONFIG.heapSpawns, heapOnce, (s, r, round) =>
    log(`heap ${round}/${CONFIG.heapSpawns} ${s.id.padEnd(14)} heap used ${(r.heapUsed / 2 ** 20).toFixed(1)} MiB, after GC ${(r.heapUsedAfterGc / 2 ** 20).toFixed(1)} MiB`),
  );
  return subjects.map((s) => {
    const none = notMeasured(s, errors);
    if (none) return none;
    const runs = samples.get(s.id);
    const of = (key) => median(runs.map((r) => r[key]));
    return {
      id: s.id,
      label: s.label,
      spawns: runs.length,
      ...Object.fromEntries(["heapUsed", "heapUsedAfterGc", "heapTotal", "external", "arrayBuffers", "rss"].map((k) => [k, of(k)])),
    };
  });
}

// ---- QUIC datagrams per call ---------------------------------------------------------------
async function datagramsOnce(p) {
  const relay = await startRelay(p.orchestrator().port);
  const session = spawnSubject(SUBJECTS[p.bridge]({ ...p.orchestrator(), port: relay.port }));
  try {
    await session.initialize();
    await driveEcho(session, { payload: PAYLOAD, inFlight: 8, calls: CONFIG.warmupCalls });
    const cases = [];
    for (const inFlight of [1, 64]) {
      const calls = inFlight === 1 ? Math.min(CONFIG.datagramCalls, 1000) : CONFIG.datagramCalls;
      const up0 = relay.counts.up;
      const down0 = relay.counts.down;
      const r = await driveEcho(session, { payload: PAYLOAD, inFlight, calls });
      cases.push({
        inFlight,
        calls,
        failures: r.failures,
        bridgeToOrchestrator: (relay.counts.up - up0) / calls,
        orchestratorToBridge: (relay.counts.down - down0) / calls,
        bridgeSockets: relay.counts.clients,
      });
    }
    return cases;
  } finally {
    await session.close();
    await relay.close();
  }
}

async function datagramPass() {
  const pairs = bridgePairs().filter((p) => p.orch !== "oursTls"); // the QUIC pairs
  const { samples, errors } = await interleaved(pairs, 1, datagramsOnce, (p, cases) =>
    log(`datagrams ${p.id.padEnd(14)} ${cases.map((c) => `x${c.inFlight}: ${c.bridgeToOrchestrator.toFixed(2)} up, ${c.orchestratorToBridge.toFixed(2)} down`).join("; ")}`),
  );
  return pairs.map((p) => notMeasured(p, errors) ?? { id: p.id, label: p.label, cases: samples.get(p.id)[0] });
}

// ---- system calls per call -----------------------------------------------------------------
/** Syscall names counted per call, by what they do (the rest is summed in `other`). */
const SYSCALL_KINDS = {
  "UDP send": ["sendmsg", "sendmmsg", "sendto"],
  "UDP receive": ["recvmsg", "recvmmsg", "recvfrom"],
  write: ["write", "writev", "pwrite64"],
  read: ["read", "readv", "pread64"],
  "epoll/poll": ["epoll_wait", "epoll_pwait", "epoll_pwait2", "epoll_ctl", "poll", "ppoll", "select", "pselect6"],
  "futex/sleep": ["futex", "nanosleep", "clock_nanosleep", "sched_yield"],
};

function syscallKinds(counts, calls) {
  const out = {};
  let other = 0;
  const known = new Set(Object.values(SYSCALL_KINDS).flat());
  for (const [kind, names] of Object.entries(SYSCALL_KINDS)) out[kind] = names.reduce((s, n) => s + (counts[n] ?? 0), 0) / calls;
  for (const [n, c] of Object.entries(counts)) if (!known.has(n)) other += c;
  out.other = other / calls;
  out.total = Object.values(counts).reduce((s, c) => s + c, 0) / calls;
  return out;
}

/**
 * System calls per tools/call on each side at 64 in flight (strace -c attached to every thread
 * of the bridge and of the orchestrator side for the measured calls only; a separate, untimed
 * pass, since tracing slows everything down). The "write" and "read" rows include the bridge's
 * stdio and, over TLS, the TCP socket.
 */
async function syscallsOnce(p) {
  const session = spawnSubject(p.cmd());
  const counters = [];
  try {
    await session.initialize();
    await driveEcho(session, { payload: PAYLOAD, inFlight: 8, calls: CONFIG.warmupCalls });
    counters.push(syscallCounter([session.pid]), syscallCounter(p.orchestrator().pids));
    await Promise.all(counters.map((c) => c.start()));
    const r = await driveEcho(session, { payload: PAYLOAD, inFlight: CONFIG.syscallInFlight, calls: CONFIG.syscallCalls });
    const [b, s] = await Promise.all(counters.map((c) => c.stop()));
    return {
      inFlight: CONFIG.syscallInFlight,
      calls: r.calls,
      failures: r.failures,
      bridge: syscallKinds(b, r.calls),
      orchestrator: syscallKinds(s, r.calls),
      bridgeCounts: b,
      orchestratorCounts: s,
    };
  } finally {
    for (const c of counters) c.abort();
    await session.close();
  }
}

async function syscallPass() {
  const noStrace = straceMissing();
  const pairs = bridgePairs().map((p) => ({ ...p, skipped: p.skipped ?? noStrace }));
  const { samples, errors } = await interleaved(pairs, 1, syscallsOnce, (p, r) =>
    log(`syscalls ${p.id.padEnd(14)} bridge ${r.bridge.total.toFixed(1)}/call, orchestrator side ${r.orchestrator.total.toFixed(1)}/call`),
  );
  return pairs.map((p) => notMeasured(p, errors) ?? { id: p.id, label: p.label, ...samples.get(p.id)[0] });
}

// ---- targets (issue 16) --------------------------------------------------------------------
/**
 * Per-round figures of both sides → the median of the per-round ratios a[i] / b[i]: each ratio
 * compares two subjects measured next to each other in the same round (same load), which is
 * steadier on a busy machine than the ratio of the two medians.
 */
function pairedRatio(a, b) {
  return a?.length && b?.length === a.length ? median(a.map((x, i) => x / b[i])) : undefined;
}

/** Accessors of a summary: per-round calls/s, per-spawn start-up figures, datagram rates, skip reasons. */
function lookups({ throughput, start, datagrams }) {
  return {
    cps: (id, n) => throughput?.find((r) => r.id === id)?.cases?.find((c) => c.inFlight === n)?.callsPerSecRounds,
    st: (id, key) => start?.find((r) => r.id === id)?.runs?.[key],
    dg: (id, n, key) => datagrams?.find((r) => r.id === id)?.cases?.find((c) => c.inFlight === n)?.[key],
    /** Why a pass ("throughput" | "start" | "datagrams") has no figures for one of `ids`, if so. */
    skip: (pass, ...ids) =>
      ids
        .map((id) => ({ throughput, start, datagrams })[pass]?.find((r) => r.id === id))
        .map((r) => r?.skipped ?? (r?.error ? `failed: ${r.error.split("\n")[0]}` : undefined))
        .find((s) => s),
  };
}

function targets(summary) {
  const { cps, st, dg, skip } = lookups(summary);
  const rows = [
    {
      target: "our bridge ÷ Go bridge calls/s, upstream orchestrator, 1 in flight",
      op: "≥",
      bound: 1.2,
      measured: pairedRatio(cps("ours-upstream", 1), cps("go-upstream", 1)),
      skipped: skip("throughput", "ours-upstream", "go-upstream"),
    },
    {
      target: "our bridge ÷ Go bridge calls/s, upstream orchestrator, 64 in flight",
      op: "≥",
      bound: 1.2,
      measured: pairedRatio(cps("ours-upstream", 64), cps("go-upstream", 64)),
      skipped: skip("throughput", "ours-upstream", "go-upstream"),
    },
    {
      target: "chain over QUIC ÷ over TLS calls/s, our bridge → our orchestrator, 64 in flight",
      op: "≥",
      bound: 1.0,
      measured: pairedRatio(cps("ours-ours", 64), cps("ours-ours-tls", 64)),
      skipped: skip("throughput", "ours-ours", "ours-ours-tls"),
    },
    {
      target: "QUIC datagrams per call, bridge → orchestrator, 64 in flight (ours → ours)",
      op: "≤",
      bound: 0.25,
      measured: dg("ours-ours", 64, "bridgeToOrchestrator"),
      skipped: skip("datagrams", "ours-ours"),
    },
    {
      target: "QUIC datagrams per call, orchestrator → bridge, 64 in flight (ours → ours)",
      op: "≤",
      bound: 0.25,
      measured: dg("ours-ours", 64, "orchestratorToBridge"),
      skipped: skip("datagrams", "ours-ours"),
    },
    {
      target: "chain (QUIC, our orchestrator) ÷ SDK in-process server calls/s, 64 in flight (long-range aim)",
      op: "≥",
      bound: 1.0,
      measured: pairedRatio(cps("ours-ours", 64), cps("sdk", 64)),
      skipped: skip("throughput", "ours-ours", "sdk"),
    },
    {
      target: "spawn → initialize answered, our bridge (remote) ÷ bare Node",
      op: "≤",
      bound: 1.5,
      measured: pairedRatio(st("ours-remote", "initializeMs"), st("bare", "initializeMs")),
      skipped: skip("start", "ours-remote", "bare"),
    },
    {
      target: "spawn → first tools/call answered, our bridge (remote) ÷ bare Node",
      op: "≤",
      bound: 2.5,
      measured: pairedRatio(st("ours-remote", "firstCallMs"), st("bare", "firstCallMs")),
      skipped: skip("start", "ours-remote", "bare"),
    },
    {
      target: "RSS after 1,000 calls, our bridge (remote) ÷ bare Node",
      op: "≤",
      bound: 1.5,
      measured: pairedRatio(st("ours-remote", "rssKiB"), st("bare", "rssKiB")),
      skipped: skip("start", "ours-remote", "bare"),
    },
  ];
  return rows.map((r) => ({ ...r, met: r.measured === undefined || Number.isNaN(r.measured) ? undefined : r.op === "≥" ? r.measured >= r.bound : r.measured <= r.bound }));
}

/** Informational ratios printed beside the targets (no target in the issue). */
function context(summary) {
  const { cps, st } = lookups(summary);
  const rows = [
    ["Go bridge calls/s, our orchestrator ÷ upstream orchestrator, 64 in flight", pairedRatio(cps("go-ours", 64), cps("go-upstream", 64))],
    ["our bridge ÷ Go bridge calls/s, our orchestrator, 64 in flight", pairedRatio(cps("ours-ours", 64), cps("go-ours", 64))],
    ["embedded chain over QUIC ÷ over TLS calls/s, 64 in flight", pairedRatio(cps("embedded-quic", 64), cps("embedded-tls", 64))],
    ["our bridge (remote) ÷ Go bridge: spawn → initialize", pairedRatio(st("ours-remote", "initializeMs"), st("go-remote", "initializeMs"))],
    ["our bridge (remote) ÷ Go bridge: spawn → first tools/call", pairedRatio(st("ours-remote", "firstCallMs"), st("go-remote", "firstCallMs"))],
    ["our bridge (remote) ÷ Go bridge: RSS after 1,000 calls", pairedRatio(st("ours-remote", "rssKiB"), st("go-remote", "rssKiB"))],
    ["our bridge, embedded ÷ bare Node: spawn → first tools/call", pairedRatio(st("ours-embedded", "firstCallMs"), st("bare", "firstCallMs"))],
    ["SDK stdio server ÷ bare Node: spawn → initialize", pairedRatio(st("sdk", "initializeMs"), st("bare", "initializeMs"))],
  ];
  return rows.filter(([, v]) => Number.isFinite(v)).map(([what, value]) => ({ what, value }));
}

// ---- report --------------------------------------------------------------------------------
const f = (n, d = 2) => (n === undefined || Number.isNaN(n) ? "–" : n.toFixed(d));
const mib = (kib) => f(kib / 1024, 1);
const skipped = (reason) => (reason === goMissing ? "skipped (no Go peer, see above)" : `skipped: ${reason}`);
/** Text of a row without figures: skipped (with the reason) or FAILED (with the error); undefined otherwise. */
const noFigures = (r) => (r.skipped ? skipped(r.skipped) : r.error ? `FAILED: ${r.error.split("\n")[0]}` : undefined);

function printReport(summary) {
  const { throughput, start, datagrams } = summary;
  console.log(
    `\nAnchors benchmark (${quick ? "quick" : "full"}), 100-byte echo, Node ${process.version}, ${cpus().length} CPUs, load average ${summary.loadavg.start.map((l) => l.toFixed(2)).join(" ")} → ${summary.loadavg.end.map((l) => l.toFixed(2)).join(" ")}`,
  );
  if (goMissing) console.log(`Go rows skipped: ${goMissing}`);
  if (summary.removedVariables.length)
    console.log(`Removed from the environment of every process measured (bench/common.mjs UNMEASURED_VARIABLES): ${summary.removedVariables.join(", ")}`);
  if (throughput) {
    console.log(`\nThroughput (medians of ${CONFIG.rounds} interleaved round(s); CPU ms per call from /proc):`);
    console.log("| subject | in flight | calls/s | p50 ms | p99 ms | bridge CPU ms/call | orchestrator CPU ms/call | failures |");
    console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for (const r of throughput) {
      if (noFigures(r)) {
        console.log(`| ${r.label} | – | ${noFigures(r)} | | | | | |`);
        continue;
      }
      for (const c of r.cases) {
        console.log(
          `| ${r.label} | ${c.inFlight} | ${f(c.callsPerSec, 0)} | ${f(c.p50Ms, 3)} | ${f(c.p99Ms, 3)} | ${f(c.bridgeCpuMsPerCall, 3)} | ${f(c.orchestratorCpuMsPerCall, 3)} | ${c.failures} |`,
        );
      }
    }
  }
  if (start) {
    console.log(
      `\nStart-up and memory (medians of ${CONFIG.startSpawns} spawn(s) per subject, interleaved: one round of every subject at a time, the order reversed every other round, after one unmeasured round that writes the code cache into the run's own XDG_CACHE_HOME; RSS after ${CONFIG.callsBeforeRss} calls at 1 in flight; the targets' ratios are medians of per-round ratios):`,
    );
    console.log("| subject | spawn → initialize ms (min) | spawn → first tools/call ms (min) | CPU ms to first call | RSS MiB | peak RSS MiB |");
    console.log("| --- | --- | --- | --- | --- | --- |");
    for (const r of start) {
      if (noFigures(r)) console.log(`| ${r.label} | ${noFigures(r)} | | | | |`);
      else
        console.log(
          `| ${r.label} | ${f(r.initializeMs, 1)} (${f(r.initializeMsMin, 1)}) | ${f(r.firstCallMs, 1)} (${f(r.firstCallMsMin, 1)}) | ${f(r.cpuMsToFirstCall, 0)} | ${mib(r.rssKiB)} | ${mib(r.peakRssKiB)} |`,
        );
    }
  }
  if (summary.heap) {
    console.log(
      `\nJavaScript heap after ${CONFIG.callsBeforeRss} calls at 1 in flight (process.memoryUsage() through bench/startup/memory-probe.mjs; medians of ${CONFIG.heapSpawns} spawn(s)), MiB:`,
    );
    console.log("| subject | heap used | heap used after a full GC | heap total | external | array buffers | RSS |");
    console.log("| --- | --- | --- | --- | --- | --- | --- |");
    for (const r of summary.heap) {
      if (noFigures(r)) console.log(`| ${r.label} | ${noFigures(r)} | | | | | |`);
      else console.log(`| ${r.label} | ${["heapUsed", "heapUsedAfterGc", "heapTotal", "external", "arrayBuffers", "rss"].map((k) => mib(r[k] / 1024)).join(" | ")} |`);
    }
  }
  if (datagrams) {
    console.log("\nQUIC datagrams per call (UDP relay on loopback, separate untimed pass):");
    console.log("| pair | in flight | calls | bridge → orchestrator | orchestrator → bridge | bridge UDP sockets | failures |");
    console.log("| --- | --- | --- | --- | --- | --- | --- |");
    for (const r of datagrams) {
      if (noFigures(r)) console.log(`| ${r.label} | – | ${noFigures(r)} | | | | |`);
      else
        for (const c of r.cases)
          console.log(`| ${r.label} | ${c.inFlight} | ${c.calls} | ${f(c.bridgeToOrchestrator)} | ${f(c.orchestratorToBridge)} | ${c.bridgeSockets} | ${c.failures} |`);
    }
  }
  if (summary.syscalls) {
    console.log(`\nSystem calls per tools/call at ${CONFIG.syscallInFlight} in flight (strace -c on every thread, separate untimed pass; bridge / orchestrator side):`);
    const kinds = [...Object.keys(SYSCALL_KINDS), "other", "total"];
    console.log(`| pair | calls | ${kinds.join(" | ")} |`);
    console.log(`| --- | --- | ${kinds.map(() => "---").join(" | ")} |`);
    for (const r of summary.syscalls) {
      if (noFigures(r)) console.log(`| ${r.label} | ${noFigures(r)} | ${kinds.map(() => "").join(" | ")} |`);
      else console.log(`| ${r.label} | ${r.calls} | ${kinds.map((k) => `${f(r.bridge[k])} / ${f(r.orchestrator[k])}`).join(" | ")} |`);
    }
  }
  console.log("\nTargets (issue 16; a ratio is the median of the per-round ratios of two subjects measured side by side):");
  console.log("| target | measured | bound | met |");
  console.log("| --- | --- | --- | --- |");
  for (const t of summary.targets) {
    const verdict = t.skipped ? skipped(t.skipped) : t.met === undefined ? "not measured" : t.met ? "met" : "**not met**";
    console.log(`| ${t.target} | ${f(t.measured)} | ${t.op} ${t.bound} | ${verdict} |`);
  }
  if (summary.context.length) {
    console.log("\nFor context (no target; medians of per-round ratios):");
    for (const c of summary.context) console.log(`  ${c.what}: ${f(c.value)}`);
  }
  const failures = summary.failures;
  if (failures) console.log(`\n${failures} failed call(s) or subject(s): the figures above are not valid (details in the JSON summary: errors, firstFailure).`);
}

// ---- main ----------------------------------------------------------------------------------
const started = performance.now();
const summary = {
  date: new Date().toISOString(),
  quick,
  node: process.version,
  cpus: cpus().length,
  config: CONFIG,
  goPeer: goMissing ? { skipped: goMissing } : { bin: GO_PEER_BIN },
  removedVariables,
  loadavg: { start: loadavg() },
};
try {
  await startOrchestrators();
  if (only.has("throughput")) summary.throughput = await throughputPass();
  if (only.has("start")) summary.start = await startPass();
  if (only.has("heap")) summary.heap = await heapPass();
  if (only.has("datagrams")) summary.datagrams = await datagramPass();
  if (only.has("syscalls")) summary.syscalls = await syscallPass();
} finally {
  await Promise.all(Object.values(orchestrators).map((o) => o.stop()));
  rmSync(work, { recursive: true, force: true });
}
summary.loadavg.end = loadavg();
summary.targets = targets(summary);
summary.context = context(summary);
const rowsOfAllPasses = ["throughput", "start", "heap", "datagrams", "syscalls"].flatMap((k) => summary[k] ?? []);
summary.errors = [
  ...(upstreamFailure ? [{ id: "upstream-orchestrator", error: upstreamFailure }] : []),
  ...rowsOfAllPasses.filter((r) => r.error).map((r) => ({ id: r.id, error: r.error })),
];
summary.failures = summary.errors.length + rowsOfAllPasses.flatMap((r) => r.cases ?? (r.failures !== undefined ? [r] : [])).reduce((s, c) => s + (c.failures ?? 0), 0);
summary.seconds = (performance.now() - started) / 1000;
printReport(summary);
console.log(`\ntotal time ${f(summary.seconds, 1)} s; JSON summary: ${jsonOut}`);
mkdirSync(dirname(jsonOut), { recursive: true });
writeFileSync(jsonOut, JSON.stringify(summary, null, 2));
if (summary.failures) process.exitCode = 1;
