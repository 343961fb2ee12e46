// `node bench/startup-profile.mjs [--runs N] [--keep DIR]`: where `orchestra-stdio serve` spends
// its start-up, spawn → `initialize` answered (issue 16, item 3), for the bridge dialling our
// orchestrator (a separate process) and with the embedded orchestrator. Per mode, N spawns (default 3):
// - spawn → initialize answered and → first tools/call answered, measured from outside, once
//   plain and once under the probes (their cost shows as the difference);
// - under `--import bench/startup/probe.cjs`: Node's bootstrap, the modules loaded before the
//   first response (count, source bytes, grouped by package / dist folder, when the group started
//   loading; the files of the CLI bundle count as "dist/cli", and the modules inside them are
//   listed by group after the table, from dist/cli/chunks/inputs.json);
// - under `--cpu-prof`: CPU self time before the first response, by the same groups;
// and, in fresh processes, the cost of the cert store: importing dist/pki/store.js and creating a
// throwaway store (CA + orchestrator + bridge certificates), what embedded mode did every launch before it kept a store per user (src/pki/embedded.ts), and reusing one.
// Figures are medians over the spawns. --keep DIR keeps the .cpuprofile files (Chrome DevTools).
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT, cliOf, measuredEnvironment, median, provisionBridgeCert, startOurOrchestrator, tempDir } from "./common.mjs";
import { StdioSession } from "./stdio-session.mjs";

const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const runs = Number(option("--runs", 3));
const keep = option("--keep", undefined);
const MAIN = cliOf();
const PROBE = join(ROOT, "bench/startup/probe.cjs");
const work = tempDir("orchestra-bench-startup-");

/** Group of a module URL or profile call frame: npm package, dist folder, Node internals. */
function groupOf(url) {
  if (!url) return "(no script)";
  if (url.startsWith("node:")) return "node internals";
  const nm = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (nm) return `npm ${nm[1]}`;
  const dist = /\/dist\/(gen\/mcp\/[^/]+|gen\/proto|[^/]+)\//.exec(url) ?? /\/dist\/([^/]+)$/.exec(url);
  if (dist) return `dist/${dist[1].replace(/\.js$/, "")}`;
  if (url.includes("/bench/startup/")) return "probe (bench/startup)";
  return url;
}

/**
 * CPU profile → Map group → self ms of the samples taken before `untilMonoUs`. A sample goes to
 * the group of the innermost frame of its stack that has a script outside Node (so a native call
 * or Node's loader working for a package counts for that package); a stack of Node frames only
 * goes to "node internals"; (program), (garbage collector) and (idle) stay themselves.
 */
function profileSelfMs(profile, untilMonoUs) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const groupOfNode = new Map();
  const classify = (id) => {
    const leaf = byId.get(id).callFrame;
    if (!leaf.url && /^\((program|garbage collector|idle|root)\)$/.test(leaf.functionName)) return leaf.functionName;
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const url = byId.get(at).callFrame.url;
      if (url && !url.startsWith("node:")) return groupOf(url);
    }
    return "node internals";
  };
  const out = new Map();
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i];
    if (untilMonoUs !== undefined && t > untilMonoUs) break;
    const id = profile.samples[i];
    if (!groupOfNode.has(id)) groupOfNode.set(id, classify(id));
    const group = groupOfNode.get(id);
    out.set(group, (out.get(group) ?? 0) + (profile.timeDeltas[i + 1] ?? 0) / 1000);
  }
  return out;
}

/**
 * One spawn of `serve`: initialize, one tools/call, stdin closed. `mode`: "plain" (outside
 * timings only), "modules" (the probe with loader hooks: what loads before the first response),
 * "cpu" (--cpu-prof and the probe without hooks: CPU before the first response).
 */
async function spawnOnce(serveArgs, mode) {
  const dir = join(work, `run-${Math.random().toString(36).slice(2)}`);
  mkdirSync(dir);
  // The module listing needs loader hooks, which run only with Node's ES module loader (--import);
  // the CPU profile's probe records the answer alone (--require: no ES module loader).
  const nodeArgs = { plain: [], modules: ["--import", PROBE], cpu: ["--cpu-prof", "--cpu-prof-dir", dir, "--require", PROBE] }[mode];
  const session = new StdioSession(process.execPath, [...nodeArgs, MAIN, "serve", ...serveArgs], {
    env: { ...measuredEnvironment().env, STARTUP_PROBE_OUT: join(dir, "probe.json"), ...(mode === "modules" ? { STARTUP_PROBE_MODULES: "1" } : {}) },
  });
  const initAt = await session.initialize();
  const first = await session.echo("x".repeat(100));
  if (!first.ok) throw new Error(`first tools/call failed: ${JSON.stringify(first.message)}`);
  await session.close();
  const result = { initializeMs: initAt - session.spawnedAt, firstCallMs: first.at - session.spawnedAt };
  if (mode === "plain") return result;
  const record = JSON.parse(readFileSync(join(dir, "probe.json"), "utf8"));
  result.firstLineMs = record.firstLineMs;
  if (mode === "cpu") {
    const profileFile = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
    if (keep) {
      mkdirSync(keep, { recursive: true });
      copyFileSync(join(dir, profileFile), join(keep, `${serveArgs.includes("--orchestrator-addr") ? "remote" : "embedded"}-${profileFile}`));
    }
    return { ...result, bootstrapMs: record.bootstrapMs, cpu: profileSelfMs(JSON.parse(readFileSync(join(dir, profileFile), "utf8")), record.firstLineMonoUs) };
  }
  const before = record.modules.filter((m) => m.at <= record.firstLineMs);
  // The CLI bundle (scripts/bundle-cli.mjs): each of its files stands for the modules in it.
  const bundled = new Map();
  for (const m of before)
    for (const input of bundleInputs[m.url.slice(m.url.lastIndexOf("/dist/") + "/dist/".length)] ?? [])
      bundled.set(groupOf(`file:///${input}`), (bundled.get(groupOf(`file:///${input}`)) ?? 0) + 1);
  const groups = new Map();
  for (const m of before) {
    const g = groups.get(groupOf(m.url)) ?? { modules: 0, bytes: 0, firstAt: m.at };
    g.modules++;
    g.bytes += m.bytes;
    g.firstAt = Math.min(g.firstAt, m.at);
    groups.set(groupOf(m.url), g);
  }
  return {
    ...result,
    mainAt: record.modules.find((m) => /\/dist\/cli\/main\.c?js$/.test(m.url))?.at,
    modulesBefore: before.length,
    bytesBefore: before.reduce((s, m) => s + m.bytes, 0),
    modulesAfter: record.modules.length - before.length,
    groups,
    bundled,
  };
}

/** Fresh processes: import of the cert store module, then a throwaway store (CA + 2 leaves). */
function certStoreCost() {
  const script = `
    const t0 = performance.now();
    const { ensureCertStore } = await import(${JSON.stringify(join(ROOT, "dist/pki/store.js"))});
    const t1 = performance.now();
    const dir = ${JSON.stringify(join(work, "certs-"))} + process.pid;
    await ensureCertStore(dir, "orchestrator");
    const t2 = performance.now();
    await ensureCertStore(dir, "transport.stdio-client");
    const t3 = performance.now();
    await ensureCertStore(dir, "transport.stdio-client");
    const t4 = performance.now();
    console.log(JSON.stringify({ importMs: t1 - t0, caAndOrchestratorMs: t2 - t1, bridgeLeafMs: t3 - t2, reuseMs: t4 - t3 }));`;
  const samples = [];
  for (let i = 0; i < runs; i++) {
    samples.push(JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" })));
  }
  return Object.fromEntries(Object.keys(samples[0]).map((k) => [k, median(samples.map((s) => s[k]))]));
}

/**
 * Each entry imported alone in a fresh process (cwd: the project root; an entry of several
 * modules imports them in order), ms from the first `import()` to the last one settling; medians. What a lazy or per-version load would save, before overlaps between them.
 */
function importCosts() {
  const versions = readdirSync(join(ROOT, "dist/gen/mcp")).filter((d) => /^\d{4}-\d\d-\d\d$/.test(d));
  const file = (rel) => JSON.stringify(pathToFileURL(join(ROOT, rel)).href);
  const entries = [
    [`MCP validators, one version (${versions.at(-2)}; module loaded, validators not built)`, [file(`dist/gen/mcp/${versions.at(-2)}/validators.cjs`)]],
    [`MCP validators, all ${versions.length} versions`, versions.map((v) => file(`dist/gen/mcp/${v}/validators.cjs`))],
    ["dist/validate/index.js (the validate command's code)", [file("dist/validate/index.js")]],
    ["protobuf messages (dist/gen/proto/.../plugin_pb.js)", [file("dist/gen/proto/orchestra/plugin/v1/plugin_pb.js")]],
    ["@matrixai/quic (JS layer and native binding)", ['"@matrixai/quic"']],
    ["@peculiar/x509 (after reflect-metadata, as dist/pki/x509.js loads it)", ['"reflect-metadata"', '"@peculiar/x509"']],
    ["pino", ['"pino"']],
    ["commander", ['"commander"']],
    ["cli-progress", ['"cli-progress"']],
  ];
  return entries.map(([what, specs]) => {
    const script = `const t0 = performance.now(); for (const s of [${specs.join(", ")}]) await import(s); console.log(performance.now() - t0);`;
    const ms = [];
    for (let i = 0; i < runs; i++) ms.push(Number(execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: ROOT, encoding: "utf8" })));
    return { what, ms: median(ms) };
  });
}

/** dist/cli/chunks/inputs.json: output file of the CLI bundle → the modules in it ({} without a bundle). */
const bundleInputs = existsSync(join(ROOT, "dist/cli/chunks/inputs.json")) ? JSON.parse(readFileSync(join(ROOT, "dist/cli/chunks/inputs.json"), "utf8")) : {};

const f = (n, d = 1) => (n === undefined || Number.isNaN(n) ? "–" : n.toFixed(d));
const orch = await startOurOrchestrator({ certsDir: join(work, "certs") });
await provisionBridgeCert(join(work, "certs"));
try {
  const modes = [
    ["remote (our orchestrator, separate process)", ["--orchestrator-addr", `127.0.0.1:${orch.port}`, "--certs-dir", join(work, "certs")]],
    ["embedded (the per-user cert store, in-process orchestrator)", []],
  ];
  for (const [label, serveArgs] of modes) {
    await spawnOnce(serveArgs, "plain"); // unmeasured: page cache, client certificate
    const plain = [];
    const modules = [];
    const cpu = [];
    for (let i = 0; i < runs; i++) {
      plain.push(await spawnOnce(serveArgs, "plain"));
      modules.push(await spawnOnce(serveArgs, "modules"));
      cpu.push(await spawnOnce(serveArgs, "cpu"));
    }
    const m = (list, key) => median(list.map((r) => r[key]));
    console.log(`\n## serve, ${label}: medians of ${runs} spawns`);
    console.log(
      `spawn → initialize answered ${f(m(plain, "initializeMs"))} ms, → first tools/call ${f(m(plain, "firstCallMs"))} ms (under --cpu-prof: ${f(m(cpu, "initializeMs"))} / ${f(m(cpu, "firstCallMs"))} ms; with the loader hooks: ${f(m(modules, "initializeMs"))} / ${f(m(modules, "firstCallMs"))} ms)`,
    );
    console.log(`inside the process (--cpu-prof run): Node bootstrap until --import ${f(m(cpu, "bootstrapMs"))} ms, first response written at ${f(m(cpu, "firstLineMs"))} ms`);
    console.log(
      `modules loaded before the first response (loader-hook run; main.js at ${f(m(modules, "mainAt"))} ms, first response at ${f(m(modules, "firstLineMs"))} ms): ${f(m(modules, "modulesBefore"), 0)} (${f(m(modules, "bytesBefore") / 1024 / 1024, 2)} MiB of source); after it, up to the exit: ${f(m(modules, "modulesAfter"), 0)}`,
    );
    const groupNames = [...new Set([...modules.flatMap((r) => [...r.groups.keys()]), ...cpu.flatMap((r) => [...r.cpu.keys()])])];
    const rows = groupNames.map((g) => ({
      g,
      modules: median(modules.map((r) => r.groups.get(g)?.modules ?? 0)),
      kib: median(modules.map((r) => (r.groups.get(g)?.bytes ?? 0) / 1024)),
      firstAt: median(modules.map((r) => r.groups.get(g)?.firstAt).filter((v) => v !== undefined)),
      cpuMs: median(cpu.map((r) => r.cpu.get(g) ?? 0)),
    }));
    rows.sort((a, b) => b.cpuMs - a.cpuMs || b.kib - a.kib);
    console.log("| group | modules | source KiB | first loaded at ms (hook run) | CPU ms before the first response |");
    console.log("| --- | --- | --- | --- | --- |");
    for (const r of rows) console.log(`| ${r.g} | ${f(r.modules, 0)} | ${f(r.kib, 0)} | ${f(r.firstAt)} | ${f(r.cpuMs)} |`);
    const bundledGroups = [...new Set(modules.flatMap((r) => [...r.bundled.keys()]))];
    if (bundledGroups.length > 0) {
      const counts = bundledGroups.map((g) => [g, median(modules.map((r) => r.bundled.get(g) ?? 0))]).sort((a, b) => b[1] - a[1]);
      console.log(
        `modules inside the bundle's files loaded before the first response: ${counts.reduce((n, [, c]) => n + c, 0)}: ${counts.map(([g, c]) => `${g} ${c}`).join(", ")}`,
      );
    }
  }
  console.log(`\n## imports alone (fresh process each, medians of ${runs})`);
  console.log("| import | ms |");
  console.log("| --- | --- |");
  for (const c of importCosts()) console.log(`| ${c.what} | ${f(c.ms)} |`);
  const certs = certStoreCost();
  console.log(
    `\n## cert store (fresh process, medians of ${runs}): import dist/pki/store.js ${f(certs.importMs)} ms; CA + orchestrator certificate ${f(certs.caAndOrchestratorMs)} ms; bridge certificate ${f(certs.bridgeLeafMs)} ms; reusing the store ${f(certs.reuseMs)} ms`,
  );
} finally {
  await orch.stop();
  rmSync(work, { recursive: true, force: true });
}
