/**
 * Which modules a Node process loads: `node --import LOADED_MODULES_HOOK …` makes the process
 * print one line on stderr for every ES module it resolves (`RESOLVED <url>`, loader hooks from
 * `node:module` `register`) and every CommonJS module it compiles (`REQUIRED <path>`, e.g. a file
 * loaded with `createRequire`, which the ES loader hooks do not see); {@link loadedModules} reads
 * them back from the process's stderr.
 */

/** Loader hooks printing every resolved URL on stderr. */
const HOOKS = 'export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write("RESOLVED " + r.url + "\\n"); return r; }';
const PRELOAD = [
  'import Module, { register } from "node:module";',
  `register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});`,
  "const compile = Module.prototype._compile;",
  'Module.prototype._compile = function (content, filename) { process.stderr.write("REQUIRED " + filename + "\\n"); return compile.call(this, content, filename); };',
].join("\n");

/** The `--import` argument that makes a process report its modules. */
export const LOADED_MODULES_HOOK = `data:text/javascript,${encodeURIComponent(PRELOAD)}`;

/** The modules reported in `stderr` (URLs of ES modules, file paths of CommonJS ones), in order. */
export function loadedModules(stderr: string): string[] {
  return stderr
    .split("\n")
    .filter((l) => l.startsWith("RESOLVED ") || l.startsWith("REQUIRED "))
    .map((l) => l.slice(9));
}
