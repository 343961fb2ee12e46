// `node bench/memory.mjs [--subjects ours,embedded,bare,sdk] [--calls 1000[,10000...]] [--in-flight N]
//   [--spawns N] [--node-args "--flag ..."] [--env K=V[,K=V]] [--snapshot DIR] [--cpu-calls N] [--json FILE]`
// Where the memory of a Node MCP stdio server goes after 100-byte `echo` calls (issue 16, item 4;
// docs/startup.md "Memory"). Per subject and spawn, after each count of calls in `--calls`
// (cumulative, at `--in-flight`, default 1), through bench/startup/memory-probe.mjs (SIGUSR2):
// - RSS (VmRSS) just before the probe's GC, and after it split by mapping from /proc/<pid>/smaps: the node executable, the native QUIC
//   binding (`*.node`), other shared libraries, malloc's brk heap (`[heap]`), glibc malloc arenas of
//   other threads (64 MiB-aligned anonymous reservations), thread stacks (anonymous mappings behind a
//   guard page), the main stack, and the remaining anonymous memory (V8's heap pages, large malloc
//   blocks, array buffers); KiB;
// - V8's heap spaces after a full GC (committed = physical_space_size, used) and before it,
//   process.memoryUsage() before the GC, heap used after it;
// - with `--snapshot DIR`, a heap snapshot after the GC of the last count (DIR/<subject>-<calls>-<spawn>.heapsnapshot).
// `--cpu-calls N` (default 0: off) then drives N more calls at 64 in flight and reports the
// subject's CPU ms per call (/proc/<pid>/stat utime + stime), so a memory change can be checked
// for its cost in speed. `--node-args` are Node flags put before the script (e.g. V8 flags);
// `--env` adds environment variables (e.g. MALLOC_ARENA_MAX=2). Subjects: `ours` is `serve`
// against our orchestrator (QUIC, its own process), `embedded` is `serve` with the embedded
// orchestrator, `bare` is bench/bare-node-server.mjs (Node's floor), `sdk` bench/baseline-server.mjs;
// `ours@DIR` / `embedded@DIR` run another build (DIR/cli/main.js, e.g. a copy of dist/ under .tmp/).
// Spawns of the subjects are interleaved. Needs `npm run build` first.
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { ROOT, cliOf, cpuMsOf, median, memoryKiBOf, provisionBridgeCert, startOurOrchestrator, tempDir } from "./common.mjs";
import { StdioSession, driveEcho } from "./stdio-session.mjs";

const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const subjectsWanted = option("--subjects", "ours,bare").split(",");
const counts = option("--calls", "1000")
  .split(",")
  .map((n) => Math.trunc(Number(n)));
const inFlight = Math.max(1, Math.trunc(Number(option("--in-flight", 1))) || 1);
const spawns = Math.max(1, Math.trunc(Number(option("--spawns", 1))) || 1);
const nodeArgs = option("--node-args", "").split(" ").filter(Boolean);
const extraEnv = Object.fromEntries(
  option("--env", "")
    .split(",")
    .filter(Boolean)
    .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
);
const snapshotDir = option("--snapshot", undefined);
const cpuCalls = Math.max(0, Math.trunc(Number(option("--cpu-calls", 0))) || 0);
const jsonOut = option("--json", undefined);
const PAYLOAD = 100;
const MAIN = cliOf();
const PROBE = join(ROOT, "bench/startup/memory-probe.mjs");
const log = (line) => process.stderr.write(`${line}\n`);

for (const c of counts) if (!(c > 0)) throw new Error(`--calls: not a positive count: ${option("--calls")}`);
for (let i = 1; i < counts.length; i++) if (counts[i] <= counts[i - 1]) throw new Error("--calls: counts must increase");

const work = tempDir("orchestra-bench-memory-");
let orchestrator;
const SUBJECTS = {
  ours: (main) => [main, "serve", "--orchestrator-addr", `127.0.0.1:${orchestrator.port}`, "--certs-dir", orchestrator.certsDir],
  embedded: (main) => [main, "serve"],
  bare: () => [join(ROOT, "bench/bare-node-server.mjs")],
  sdk: () => [join(ROOT, "bench/baseline-server.mjs")],
};
/** `ours@DIR`: the subject `ours` run from another build (DIR/cli/main.js instead of dist/), to compare builds in one run. */
const subjectOf = (id) => {
  const [kind, dist] = id.split("@");
  return { kind, main: dist ? cliOf(resolve(dist)) : MAIN };
};
for (const s of subjectsWanted.map((id) => subjectOf(id).kind))
  if (!SUBJECTS[s]) throw new Error(`--subjects: unknown subject ${JSON.stringify(s)} (${Object.keys(SUBJECTS).join(", ")})`);

// ---- /proc/<pid>/smaps, grouped ------------------------------------------------------------
const NODE_EXE = realpathSync(process.execPath);
const ARENA = 64 * 1024; // KiB: glibc's HEAP_MAX_SIZE on 64-bit, the size and alignment of a thread arena

/** The mappings of /proc/<pid>/smaps: { start, end (numbers, bytes), perms, path, rss, privateDirty (KiB) }. */
function mappings(pid) {
  const list = [];
  let cur;
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      cur = { start: parseInt(head[1], 16), end: parseInt(head[2], 16), perms: head[3], path: head[4], rss: 0, privateDirty: 0 };
      list.push(cur);
      continue;
    }
    const field = /^(\w+):\s+(\d+) kB/.exec(line);
    if (field && cur) {
      if (field[1] === "Rss") cur.rss = Number(field[2]);
      else if (field[1] === "Private_Dirty") cur.privateDirty = Number(field[2]);
    }
  }
  return list;
}

const GROUPS = [
  "node executable",
  "native QUIC binding (.node)",
  "other shared libraries",
  "malloc brk heap ([heap])",
  "malloc thread arenas",
  "thread stacks",
  "main stack",
  "other anonymous (V8 heap, large malloc blocks, buffers)",
  "other",
];

/** RSS of `pid` by group (KiB), and the count of thread arenas and stacks. */
function smapsAccount(pid) {
  const maps = mappings(pid);
  const groups = Object.fromEntries(GROUPS.map((g) => [g, 0]));
  let arenas = 0;
  let stacks = 0;
  const kib = (m) => (m.end - m.start) / 1024;
  for (let i = 0; i < maps.length; i++) {
    const m = maps[i];
    let g;
    if (m.path === NODE_EXE || m.path.endsWith("/node")) g = "node executable";
    else if (m.path.endsWith(".node")) g = "native QUIC binding (.node)";
    else if (/\.so(\.|$)/.test(m.path)) g = "other shared libraries";
    else if (m.path === "[heap]") g = "malloc brk heap ([heap])";
    else if (m.path === "[stack]") g = "main stack";
    else if (m.path === "") {
      const next = maps[i + 1];
      const prev = maps[i - 1];
      // A thread arena: rw part at a 64 MiB boundary, the rest of the 64 MiB reserved (---p) right after it.
      if ((m.start / 1024) % ARENA === 0 && m.perms.startsWith("rw") && next && next.start === m.end && next.perms === "---p" && next.path === "" && kib(m) + kib(next) === ARENA) {
        g = "malloc thread arenas";
        arenas++;
      } else if ((m.start / 1024) % ARENA === 0 && m.perms === "---p" && kib(m) === ARENA) {
        g = "malloc thread arenas"; // reserved, nothing resident
      } else if (m.perms.startsWith("rw") && prev && prev.end === m.start && prev.perms === "---p" && prev.path === "" && kib(prev) === 4 && kib(m) >= 256 && kib(m) <= 16 * 1024) {
        g = "thread stacks";
        stacks++;
      } else g = "other anonymous (V8 heap, large malloc blocks, buffers)";
    } else g = "other";
    groups[g] += m.rss;
  }
  return { groups, arenas, stacks, total: maps.reduce((a, m) => a + m.rss, 0) };
}

// ---- one spawn -----------------------------------------------------------------------------
async function spawnOnce(id, round) {
  const fileId = id.replace(/[^\w.-]+/g, "_");
  const out = join(work, `probe-${fileId}-${round}.json`);
  const env = { ...process.env, ...extraEnv, MEMORY_PROBE_OUT: out };
  if (snapshotDir) {
    mkdirSync(snapshotDir, { recursive: true });
    Object.assign(env, { MEMORY_PROBE_SNAPSHOT: join(snapshotDir, `${fileId}-${counts.at(-1)}-${round}.heapsnapshot`), MEMORY_PROBE_SNAPSHOT_AT: String(counts.length) });
  }
  const session = new StdioSession(process.execPath, [...nodeArgs, "--import", PROBE, ...SUBJECTS[subjectOf(id).kind](subjectOf(id).main)], { env });
  const points = [];
  try {
    await session.initialize();
    let done = 0;
    for (const target of counts) {
      const r = await driveEcho(session, { payload: PAYLOAD, inFlight, calls: target - done });
      if (r.failures) throw new Error(`${id}: ${r.failures} failed calls, first: ${r.firstFailure}`);
      done = target;
      rmSync(out, { force: true });
      const rssBeforeGcKiB = memoryKiBOf(session.pid).rssKiB;
      process.kill(session.pid, "SIGUSR2");
      for (let waited = 0; !existsSync(out); waited += 20) {
        if (waited > 30_000) throw new Error(`${id}: no memory report 30 s after SIGUSR2`);
        await new Promise((r) => setTimeout(r, 20));
      }
      let probe;
      for (;;) {
        try {
          probe = JSON.parse(readFileSync(out, "utf8"));
          break;
        } catch {
          await new Promise((r) => setTimeout(r, 20)); // still being written
        }
      }
      // RSS is read after the probe's GC, so that it is the same state as the heap figures.
      points.push({ calls: target, rssBeforeGcKiB, smaps: smapsAccount(session.pid), probe });
    }
    let cpuMsPerCall;
    if (cpuCalls > 0) {
      const cpu0 = cpuMsOf(session.pid);
      const r = await driveEcho(session, { payload: PAYLOAD, inFlight: 64, calls: cpuCalls });
      if (r.failures) throw new Error(`${id}: ${r.failures} failed calls at 64 in flight, first: ${r.firstFailure}`);
      cpuMsPerCall = (cpuMsOf(session.pid) - cpu0) / cpuCalls;
    }
    return { points, cpuMsPerCall };
  } finally {
    await session.close();
  }
}

// ---- run -----------------------------------------------------------------------------------
if (subjectsWanted.some((id) => subjectOf(id).kind === "ours")) {
  const certsDir = join(work, "certs");
  orchestrator = { ...(await startOurOrchestrator({ transport: "quic", certsDir })), certsDir };
  await provisionBridgeCert(certsDir);
}
const results = Object.fromEntries(subjectsWanted.map((s) => [s, []]));
try {
  for (let round = 1; round <= spawns; round++) {
    const order = round % 2 ? subjectsWanted : [...subjectsWanted].reverse();
    for (const id of order) {
      const r = await spawnOnce(id, round);
      results[id].push(r);
      const p = r.points.at(-1);
      log(
        `${id} spawn ${round}/${spawns}: after ${p.calls} calls RSS ${(p.smaps.total / 1024).toFixed(1)} MiB, heap used after GC ${(p.probe.heapUsedAfterGc / 2 ** 20).toFixed(1)} MiB${r.cpuMsPerCall !== undefined ? `, CPU ${r.cpuMsPerCall.toFixed(3)} ms/call at 64 in flight` : ""}`,
      );
    }
  }
} finally {
  await orchestrator?.stop();
  rmSync(work, { recursive: true, force: true });
}

// ---- report (medians over spawns) ----------------------------------------------------------
const mib = (kib) => (kib / 1024).toFixed(1);
const bmib = (b) => (b / 2 ** 20).toFixed(1);
console.log(
  `# bench/memory.mjs, ${new Date().toISOString()}, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
console.log(
  `# ${PAYLOAD}-byte echo calls at ${inFlight} in flight; medians of ${spawns} spawn(s)${nodeArgs.length ? `; node flags: ${nodeArgs.join(" ")}` : ""}${Object.keys(extraEnv).length ? `; env: ${JSON.stringify(extraEnv)}` : ""}`,
);
for (const [ci, calls] of counts.entries()) {
  const med = (id, f) => median(results[id].map((r) => f(r.points[ci])));
  console.log(`\nRSS by mapping after ${calls} calls (after a full GC), MiB:`);
  console.log(`| mapping | ${subjectsWanted.join(" | ")} |`);
  console.log(`| --- |${subjectsWanted.map(() => " ---: |").join("")}`);
  for (const g of GROUPS) {
    if (subjectsWanted.every((id) => med(id, (p) => p.smaps.groups[g]) === 0)) continue;
    console.log(`| ${g} | ${subjectsWanted.map((id) => mib(med(id, (p) => p.smaps.groups[g]))).join(" | ")} |`);
  }
  console.log(`| RSS before the GC (VmRSS, as bench/anchors.mjs reads it) | ${subjectsWanted.map((id) => mib(med(id, (p) => p.rssBeforeGcKiB))).join(" | ")} |`);
  console.log(`| **total (RSS)** | ${subjectsWanted.map((id) => mib(med(id, (p) => p.smaps.total))).join(" | ")} |`);
  console.log(`| thread arenas / thread stacks (count) | ${subjectsWanted.map((id) => `${med(id, (p) => p.smaps.arenas)} / ${med(id, (p) => p.smaps.stacks)}`).join(" | ")} |`);
  console.log(`\nV8 heap after ${calls} calls, MiB (committed / used, after a full GC; committed before it in brackets):`);
  console.log(`| space | ${subjectsWanted.join(" | ")} |`);
  console.log(`| --- |${subjectsWanted.map(() => " ---: |").join("")}`);
  const spaceNames = results[subjectsWanted[0]][0].points[ci].probe.spaces.map((s) => s.name);
  for (const name of spaceNames) {
    const cell = (id) => {
      const sp = (p, key) => p.probe[key].find((s) => s.name === name) ?? { physical: 0, used: 0 };
      return `${bmib(med(id, (p) => sp(p, "spaces").physical))} / ${bmib(med(id, (p) => sp(p, "spaces").used))} [${bmib(med(id, (p) => sp(p, "spacesBeforeGc").physical))}]`;
    };
    console.log(`| ${name} | ${subjectsWanted.map(cell).join(" | ")} |`);
  }
  console.log(
    `| total physical / used after GC | ${subjectsWanted.map((id) => `${bmib(med(id, (p) => p.probe.heap.total_physical_size))} / ${bmib(med(id, (p) => p.probe.heapUsedAfterGc))}`).join(" | ")} |`,
  );
  console.log(`| V8 malloced memory (outside the heap) | ${subjectsWanted.map((id) => bmib(med(id, (p) => p.probe.heap.malloced_memory))).join(" | ")} |`);
  console.log(
    `| memoryUsage() before GC: heapTotal / external / arrayBuffers | ${subjectsWanted.map((id) => `${bmib(med(id, (p) => p.probe.heapTotal))} / ${bmib(med(id, (p) => p.probe.external))} / ${bmib(med(id, (p) => p.probe.arrayBuffers))}`).join(" | ")} |`,
  );
}
if (cpuCalls > 0) {
  console.log(
    `\nCPU ms per call at 64 in flight (${cpuCalls} calls after the last count): ${subjectsWanted.map((id) => `${id} ${median(results[id].map((r) => r.cpuMsPerCall)).toFixed(3)}`).join(", ")}`,
  );
}
if (jsonOut) {
  mkdirSync(dirname(jsonOut), { recursive: true });
  writeFileSync(jsonOut, JSON.stringify({ counts, inFlight, spawns, nodeArgs, extraEnv, results }, null, 2));
}
