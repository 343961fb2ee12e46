// `node bench/callgrind-diff.mjs A.out B.out CALLS [--top N] [--inclusive]`: per-call instructions
// by function, from two callgrind output files of the same subject that differ only in the number
// of calls (B made CALLS more than A; bench/call-instructions.mjs --keep DIR writes such pairs).
// Each function's self cost (inclusive with --inclusive) in B minus A, divided by CALLS, largest
// first, with the total. JIT-compiled JavaScript has no symbols under valgrind: it shows as `???`
// (V8's builtins, Node, libuv, quiche and libc are named).
import { execFileSync } from "node:child_process";

const argv = process.argv.slice(2);
const topAt = argv.indexOf("--top");
const top = topAt >= 0 ? Number(argv[topAt + 1]) : 40;
const [a, b, callsText] = argv.filter((x, i) => !x.startsWith("--") && (topAt < 0 || i !== topAt + 1));
const inclusive = argv.includes("--inclusive");
const calls = Number(callsText);
if (!a || !b || !(calls > 0)) {
  console.error("usage: node bench/callgrind-diff.mjs A.out B.out CALLS [--top N] [--inclusive]");
  process.exit(2);
}

/** Function name → Ir, from callgrind_annotate's table. */
function costs(file) {
  const text = execFileSync("callgrind_annotate", ["--threshold=100", "--auto=no", "--show-percs=no", `--inclusive=${inclusive ? "yes" : "no"}`, file], {
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  const map = new Map();
  for (const line of text.split("\n")) {
    const m = /^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*)$/.exec(line);
    if (!m) continue;
    const name = m[2].replace(/ \[[^\]]*\]$/, "");
    if (name.startsWith("PROGRAM TOTALS") || name === "Ir") continue;
    map.set(name, (map.get(name) ?? 0) + Number(m[1].replaceAll(",", "")));
  }
  return map;
}

const ca = costs(a);
const cb = costs(b);
const rows = [];
for (const name of new Set([...ca.keys(), ...cb.keys()])) rows.push({ name, perCall: ((cb.get(name) ?? 0) - (ca.get(name) ?? 0)) / calls });
rows.sort((x, y) => y.perCall - x.perCall);
const total = rows.reduce((s, r) => s + r.perCall, 0);
console.log(`${inclusive ? "inclusive" : "self"} instructions per call, total ${Math.round(total)}`);
for (const r of rows.slice(0, top)) console.log(`${String(Math.round(r.perCall)).padStart(9)}  ${r.name}`);
