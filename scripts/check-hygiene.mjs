#!/usr/bin/env node
/**
 * Tree hygiene checks of issue #15 item 6, as lists of offenders.
 *
 *   node scripts/check-hygiene.mjs size      hand-written files under src/ over 600 lines
 *   node scripts/check-hygiene.mjs helpers   test support files outside test/helpers/
 *
 * Exit status 0 when nothing is listed, 1 when something is, 2 on a usage error. Files are the
 * ones git tracks plus the untracked ones it does not ignore. `src/gen/` is generated
 * (codegen/generate.mjs) and not counted. Under test/, a support file is any file that is not a
 * test (`*.test.ts`), not vitest's global setup and not under test/fixtures/.
 *
 * Also importable (test/unit/hygiene.test.ts): `oversizedSources(root, files, maxLines)` and
 * `misplacedTestHelpers(files)`.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Most lines a hand-written file under src/ may have. */
export const MAX_SOURCE_LINES = 600;

const GENERATED = "src/gen/";
const SOURCE = /\.[cm]?[jt]s$/;

/** Repository-relative paths (with `/`) that git tracks or would track under `root`. */
export function repoFiles(root) {
  const out = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: root, encoding: "utf8" });
  return out.split("\0").filter(Boolean);
}

/**
 * Hand-written source files under src/ with more than `maxLines` lines.
 * @param {string} root the repository root
 * @param {string[]} files repository-relative paths
 * @returns {Array<{ file: string, lines: number }>} longest first
 */
export function oversizedSources(root, files, maxLines = MAX_SOURCE_LINES) {
  const found = [];
  for (const file of files) {
    if (!file.startsWith("src/") || file.startsWith(GENERATED) || !SOURCE.test(file)) continue;
    const text = readFileSync(path.join(root, file), "utf8");
    const lines = text.length === 0 ? 0 : text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
    if (lines > maxLines) found.push({ file, lines });
  }
  return found.sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file));
}

/**
 * Test support files (helpers, fakes, sample data builders) that are not under test/helpers/.
 * @param {string[]} files repository-relative paths
 * @returns {string[]} sorted
 */
export function misplacedTestHelpers(files) {
  return files
    .filter((f) => f.startsWith("test/") && SOURCE.test(f))
    .filter((f) => !f.endsWith(".test.ts") && f !== "test/global-setup.ts" && !f.startsWith("test/helpers/") && !f.startsWith("test/fixtures/"))
    .sort();
}

function main(argv) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  const files = repoFiles(root);
  if (argv[0] === "size") {
    const found = oversizedSources(root, files);
    for (const { file, lines } of found) console.log(`${file}: ${lines} lines (at most ${MAX_SOURCE_LINES})`);
    console.error(
      found.length === 0 ? `check:size: no hand-written file under src/ over ${MAX_SOURCE_LINES} lines` : `check:size: ${found.length} file(s) over ${MAX_SOURCE_LINES} lines`,
    );
    return found.length === 0 ? 0 : 1;
  }
  if (argv[0] === "helpers") {
    const found = misplacedTestHelpers(files);
    for (const file of found) console.log(`${file}: a test support file outside test/helpers/`);
    console.error(found.length === 0 ? "check:helpers: every test support file is under test/helpers/" : `check:helpers: ${found.length} file(s) outside test/helpers/`);
    return found.length === 0 ? 0 : 1;
  }
  console.error("usage: node scripts/check-hygiene.mjs size|helpers");
  return 2;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
