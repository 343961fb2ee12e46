/**
 * Which modules a Node process loads: `node --import LOADED_MODULES_HOOK …` makes the process
 * print one line on stderr for every ES module it resolves (`RESOLVED <url>`, loader hooks from
 * `node:module` `register`; the CLI bundle's scripts through the diagnostics channel its loader
 * announces them on, src/cli/script-loader.ts) and every CommonJS module it compiles (`REQUIRED <path>`, e.g. a file
 * loaded with `createRequire`, which the ES loader hooks do not see), and `FIRST-STDOUT` when it
 * first writes to stdout (an MCP server's first response); {@link loadedModules} reads them back
 * from the process's stderr. A file of the CLI bundle (dist/cli/main.cjs and dist/cli/chunks/, made
 * by scripts/bundle-cli.mjs) stands for the modules bundled in it (dist/cli/chunks/inputs.json).
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Loader hooks printing every resolved URL on stderr. */
const HOOKS = 'export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write("RESOLVED " + r.url + "\\n"); return r; }';
const PRELOAD = [
  'import Module, { register } from "node:module";',
  'import { subscribe } from "node:diagnostics_channel";',
  // The CLI bundle's scripts, run by its own loader (src/cli/script-loader.ts), not Node's.
  'subscribe("orchestra-stdio:script", (m) => process.stderr.write("RESOLVED " + m.url + "\\n"));',
  `register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});`,
  "const compile = Module.prototype._compile;",
  'Module.prototype._compile = function (content, filename) { process.stderr.write("REQUIRED " + filename + "\\n"); return compile.call(this, content, filename); };',
  "const write = process.stdout.write;",
  "let written = false;",
  'process.stdout.write = function (...args) { if (!written) process.stderr.write("FIRST-STDOUT\\n"); written = true; return write.apply(this, args); };',
].join("\n");

/** The `--import` argument that makes a process report its modules. */
export const LOADED_MODULES_HOOK = `data:text/javascript,${encodeURIComponent(PRELOAD)}`;

const bundleInputs = new Map<string, Readonly<Record<string, readonly string[]>> | undefined>();

/** The modules in a file of the CLI bundle (as `${root}/<path>`), or the module itself. */
function unbundled(module: string): string[] {
  const path = module.startsWith("file:") ? fileURLToPath(module) : module;
  const at = path.lastIndexOf("/dist/cli/");
  if (at < 0) return [module];
  const root = path.slice(0, at);
  if (!bundleInputs.has(root)) {
    const file = `${root}/dist/cli/chunks/inputs.json`;
    bundleInputs.set(root, existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, string[]>) : undefined);
  }
  const inputs = bundleInputs.get(root)?.[path.slice(at + "/dist/".length)];
  return inputs ? inputs.map((input) => `${root}/${input}`) : [module];
}

/**
 * The modules reported in `stderr` (URLs of ES modules, file paths of CommonJS ones, the modules
 * of a bundle file in its place), in order.
 * @param options `beforeFirstStdout`: only those loaded before the process first wrote to stdout
 */
export function loadedModules(stderr: string, options: { beforeFirstStdout?: boolean } = {}): string[] {
  const lines = stderr.split("\n");
  const end = options.beforeFirstStdout ? lines.indexOf("FIRST-STDOUT") : -1;
  return (end < 0 ? lines : lines.slice(0, end)).filter((l) => l.startsWith("RESOLVED ") || l.startsWith("REQUIRED ")).flatMap((l) => unbundled(l.slice(9)));
}
