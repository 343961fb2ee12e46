/**
 * Faults of the installed package itself, told apart from the user's errors: its dependencies
 * cannot be found (a copy of the package without `node_modules`) or a file of its `dist/` is gone
 * (a damaged install). Such a fault is one line naming the installation and what is missing, and
 * exit status 1 (docs/cli.md "Exit status"), not a stack.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The package's directory: the one holding `package.json`, `dist/` and `node_modules/`, the
 * nearest above this module with a `package.json` (this module runs from `dist/`, from the CLI's
 * loader `dist/cli/main.cjs`, and, in tests, from `src/`).
 */
export function packageRoot(): string {
  if (root !== undefined) return root;
  const from = path.dirname(fileURLToPath(import.meta.url));
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json"))) return (root = dir);
    if (path.dirname(dir) === dir) return (root = path.dirname(from));
  }
}

/** {@link packageRoot}, found when first asked for (a fault), not at every start. */
let root: string | undefined;

function insidePackage(file: string | undefined): boolean {
  if (file === undefined) return false;
  const relative = path.relative(packageRoot(), file.startsWith("file:") ? fileURLToPath(file) : file);
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative);
}

/**
 * What of the package `err` says could not be loaded (`pino`, `dist/cli/chunks/x.js`), or
 * undefined when `err` is no such fault: a module not found by a `require` or `import` of the
 * package's own code (a user's `--tools` module importing a missing package is the user's), or a
 * missing file under its `dist/`.
 */
export function missingPart(err: unknown): string | undefined {
  const e = err as (NodeJS.ErrnoException & { requireStack?: string[] }) | undefined;
  if (e === undefined || e === null || typeof e !== "object") return undefined;
  if (e.code === "MODULE_NOT_FOUND" && insidePackage(e.requireStack?.[0])) return /Cannot find module '([^']+)'/.exec(e.message)?.[1];
  if (e.code === "ERR_MODULE_NOT_FOUND") {
    const found = /Cannot find (?:package|module) '([^']+)' imported from (\S+)/.exec(e.message);
    return found && insidePackage(found[2]) ? found[1] : undefined;
  }
  if (e.code === "ENOENT" && e.path !== undefined && insidePackage(e.path) && path.relative(packageRoot(), e.path).split(path.sep)[0] === "dist") {
    return path.relative(packageRoot(), e.path);
  }
  return undefined;
}

/** The one line for an installation fault (see {@link missingPart}), without a newline, or undefined. */
export function installationFault(err: unknown): string | undefined {
  const part = missingPart(err);
  return part === undefined ? undefined : `orchestra-stdio: the installation at ${packageRoot()} is incomplete: cannot load ${part}; reinstall the package`;
}

/**
 * Ends the process with {@link installationFault}'s line on stderr and exit status 1 when `err`
 * is an installation fault; otherwise returns, and the caller handles `err`.
 */
export function exitOnInstallationFault(err: unknown): void {
  const fault = installationFault(err);
  if (fault === undefined) return;
  process.stderr.write(`${fault}\n`);
  process.exit(1);
}
