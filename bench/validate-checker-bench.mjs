#!/usr/bin/env node
/**
 * CPU time of the validate session checker alone (`SessionChecker`: classification, session state,
 * rule dispatch, schema checks), without reading, splitting or JSON.parse, on a capture file's
 * records parsed once beforehand. On a shared machine the parse stages of validate-bench.mjs vary
 * more than the checker costs; this isolates the checker, so that two builds can be compared.
 *
 *   npm run build && node bench/validate-checker-bench.mjs CAPTURE [--runs R=15] [--dist DIR]...
 *
 * CAPTURE: a `serve --capture` file (e.g. `node bench/validate-bench.mjs 40 --keep --no-cli`
 * leaves one in os.tmpdir()). Each `--dist DIR` is a build to measure (default: this checkout's
 * dist/); with several, they run in turn, round by round (interleaved), each in a process of its
 * own. Reports per build the median and minimum CPU milliseconds (user + system) of one pass
 * over the file, after two unmeasured passes.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const values = (name) => args.flatMap((a, i) => (args[i - 1] === name ? [a] : []));
const file = args.find((a, i) => !a.startsWith("--") && !["--runs", "--dist", "--one"].includes(args[i - 1]));
const runs = Number(values("--runs")[0] ?? 15);
if (file === undefined || !Number.isInteger(runs) || runs < 1) {
  console.error("usage: node bench/validate-checker-bench.mjs CAPTURE [--runs R=15] [--dist DIR]...");
  process.exit(2);
}

const one = values("--one")[0];
if (one !== undefined) {
  // (child: one build, `runs` passes; prints the CPU ms of each as JSON)
  const base = pathToFileURL(resolve(one) + "/");
  const { SessionChecker } = await import(new URL("validate/checker.js", base).href);
  const { prepareValidators } = await import(new URL("validate/setup.js", base).href);
  const setup = await prepareValidators({});
  const records = readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line))
    .filter((r) => r.msg !== undefined);
  const times = [];
  let findings = 0;
  for (let i = 0; i < runs + 2; i++) {
    const start = process.cpuUsage();
    const checker = new SessionChecker({
      file,
      bidirectional: true,
      restartsExpected: false,
      defaultVersion: setup.defaultVersion,
      resolve: setup.resolve,
      maxIssues: 20,
      partial: false,
      emit: () => findings++,
    });
    for (let j = 0; j < records.length; j++) checker.message(records[j].msg, { line: j + 1 }, records[j].dir);
    checker.finish();
    const used = process.cpuUsage(start);
    if (i >= 2) times.push((used.user + used.system) / 1000);
  }
  console.log(JSON.stringify({ times, messages: records.length, findings: findings / (runs + 2) }));
  process.exit(0);
}

const dists = values("--dist");
if (dists.length === 0) dists.push(fileURLToPath(new URL("../dist", import.meta.url)));
const self = fileURLToPath(import.meta.url);
const all = new Map(dists.map((d) => [d, []]));
let shape;
// (interleaved: a few passes per build per round, so that a noisy neighbour hits every build alike)
const rounds = Math.max(1, Math.ceil(runs / 5));
for (let r = 0; r < rounds; r++) {
  for (const d of dists) {
    const out = JSON.parse(execFileSync(process.execPath, [self, file, "--one", d, "--runs", String(Math.ceil(runs / rounds))], { encoding: "utf8" }));
    all.get(d).push(...out.times);
    shape = out;
  }
}
console.log(`${shape.messages.toLocaleString("en-US")} messages, ${shape.findings} findings per pass`);
for (const [d, times] of all) {
  times.sort((a, b) => a - b);
  console.log(`${d}: median ${times[times.length >> 1].toFixed(1)} ms CPU, min ${times[0].toFixed(1)} ms (${times.length} passes)`);
}
