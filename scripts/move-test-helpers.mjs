#!/usr/bin/env node
/**
 * One-time move of the test support files that live beside the tests into test/helpers/ (issue
 * #15 item 6; `npm run check:helpers` lists them), for the lead to run once after merging every
 * branch of the round, so that the move does not conflict with edits made meanwhile.
 *
 * For each move in MOVES: `git mv`, then every relative import of the old path in the code under
 * test/, bench/ and scripts/ (static `from "…"`, bare `import "…"` and `import("…")`) is
 * rewritten to the new path, the moved file's own relative imports are rebased, and mentions of
 * the old repository path in those files and in docs/ become the new one (CHANGELOG.md and
 * README.md are left alone, and so are this script and its test, where the paths are data).
 * Prints what it changed; exit 1 when a source is missing.
 *
 * Usage: node scripts/move-test-helpers.mjs   (from a clean checkout; commit the result alone)
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { repoFiles } from "./check-hygiene.mjs";

/** Old repository path → new one. */
export const MOVES = {
  "test/e2e/helpers.ts": "test/helpers/cli.ts",
  "test/e2e/mcp-lines.ts": "test/helpers/mcp-lines.ts",
  "test/e2e/transport-helpers.ts": "test/helpers/transport.ts",
  "test/fuzz/serve-fuzz.ts": "test/helpers/serve-fuzz.ts",
  "test/unit/bridge-fakes.ts": "test/helpers/bridge-fakes.ts",
  "test/unit/mcp-samples.ts": "test/helpers/mcp-samples.ts",
};

/** This script and its test: the moved paths there are data, not references. */
const SELF = new Set(["scripts/move-test-helpers.mjs", "test/unit/hygiene.test.ts"]);
const CODE = /\.[cm]?[jt]s$/;
/** Relative module specifiers: `from "./x.js"`, `import "./x.js"`, `import("./x.js")`. */
const SPECIFIER = /(\bfrom\s*|\bimport\s*\(?\s*)(["'])(\.{1,2}\/[^"']+)\2/g;

/** The repository path a specifier written in `file` points at (`.js` standing for `.ts`). */
function target(file, specifier) {
  const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier));
  return resolved.endsWith(".js") ? resolved.slice(0, -3) + ".ts" : resolved;
}

/** The specifier `file` uses for repository path `to`, in the `.js` spelling of the sources. */
function specifierFor(file, to) {
  let rel = path.posix.relative(path.posix.dirname(file), to.replace(/\.ts$/, ".js"));
  if (!rel.startsWith(".")) rel = `./${rel}`;
  return rel;
}

/**
 * `text` of the file now at `now` (before the moves at `was`) with its relative imports pointing
 * where the files are after `moves`, and mentions of moved repository paths updated.
 * @param {string} text
 * @param {string} was
 * @param {string} now
 * @param {Record<string, string>} moves
 * @returns {string}
 */
export function rewrite(text, was, now, moves) {
  let out = text;
  if (CODE.test(now)) {
    out = out.replace(SPECIFIER, (whole, lead, quote, specifier) => {
      const old = target(was, specifier);
      const dest = moves[old] ?? old;
      if (dest === old && was === now) return whole;
      return `${lead}${quote}${specifierFor(now, dest)}${quote}`;
    });
  }
  for (const [from, to] of Object.entries(moves)) out = out.split(from).join(to);
  return out;
}

function main() {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  for (const from of Object.keys(MOVES)) {
    if (!existsSync(path.join(root, from))) {
      console.error(`move-test-helpers: ${from} is missing (already moved?)`);
      return 1;
    }
  }
  for (const [from, to] of Object.entries(MOVES)) {
    execFileSync("git", ["mv", from, to], { cwd: root });
    console.log(`moved ${from} → ${to}`);
  }
  const back = Object.fromEntries(Object.entries(MOVES).map(([from, to]) => [to, from]));
  const files = repoFiles(root).filter((f) => (/^(test|bench|scripts)\//.test(f) && CODE.test(f)) || (f.startsWith("docs/") && f.endsWith(".md")));
  for (const file of files) {
    if (SELF.has(file)) continue;
    const text = readFileSync(path.join(root, file), "utf8");
    const updated = rewrite(text, back[file] ?? file, file, MOVES);
    if (updated !== text) {
      writeFileSync(path.join(root, file), updated);
      console.log(`updated ${file}`);
    }
  }
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main();
