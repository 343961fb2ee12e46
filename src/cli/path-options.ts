/**
 * Value checks of the path options of `serve`, `orchestrator` and `certs` (`--tools`,
 * `--certs-dir`, `--capture`): a value that cannot be what the option wants whatever happens
 * later (empty, a directory where a file is wanted, a file where a directory is wanted, a file in
 * a directory that does not exist) is a usage error (exit 2), reported before anything starts.
 * Commander's message names the option, the value as given and its variable when it came from
 * one (`option '--tools <module...>' value '' from env 'ORCHESTRA_TOOLS' is invalid.`); the
 * reason added here names the path (resolved against the working directory) and what is expected.
 * What only the attempt can tell (a module that does not load, a store that is not readable, a
 * capture file that cannot be opened) stays the command's start-up failure (docs/cli.md "Exit status").
 */
import { statSync, type Stats } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { InvalidArgumentError } from "commander";

/** docs/modules.md in the installed package (`docs/` ships with it), for messages that point to it. */
export const MODULES_DOC = fileURLToPath(new URL("../../docs/modules.md", import.meta.url));

/** What a `--tools` value must name. */
const MODULE_FILE = `a JavaScript module file (an ES module exporting tools, prompts or resources: see ${MODULES_DOC})`;

/**
 * The file system entry at `path`: undefined when there is none, null when it cannot be looked at
 * (e.g. EACCES on a parent directory: the command's own attempt then reports it).
 */
function entryAt(path: string): Stats | undefined | null {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    return null;
  }
}

/**
 * One `--tools` value (the option is variadic: `previous` holds the values before it).
 * A `file:` URL is checked as the file it names.
 * @throws InvalidArgumentError for an empty value or one that names a directory
 * @returns the values so far, this one last
 */
export function toolModulePath(value: string, previous: string[] | undefined): string[] {
  if (value.trim() === "") throw new InvalidArgumentError(`the path is empty: expected ${MODULE_FILE}`);
  let file: string | undefined = resolve(value);
  if (value.startsWith("file:")) {
    try {
      file = fileURLToPath(value);
    } catch {
      file = undefined; // not a file: URL Node can load; the loader says why
    }
  }
  if (file !== undefined && entryAt(file)?.isDirectory() === true) throw new InvalidArgumentError(`${file} is a directory: expected ${MODULE_FILE}`);
  return [...(previous ?? []), value];
}

/**
 * A `--certs-dir` value: the cert store directory, which may not exist yet.
 * @throws InvalidArgumentError for an empty value or one that names something other than a directory
 */
export function certsDirPath(value: string): string {
  const expected = "expected the cert store directory (ca.crt, ca.key, <name>.crt/.key), or leave the option out for the default";
  if (value.trim() === "") throw new InvalidArgumentError(`the path is empty: ${expected}`);
  const entry = entryAt(value);
  if (entry && !entry.isDirectory()) throw new InvalidArgumentError(`${resolve(value)} is not a directory: ${expected}`);
  return value;
}

/**
 * A `serve --capture` value: a file to append to, which may not exist yet; its directory must.
 * @throws InvalidArgumentError for an empty value, a directory, or a file whose directory does not exist
 */
export function captureFilePath(value: string): string {
  const expected = "expected a file to append the capture to (created when missing)";
  if (value.trim() === "") throw new InvalidArgumentError(`the path is empty: ${expected}`);
  const file = resolve(value);
  if (entryAt(file)?.isDirectory() === true) throw new InvalidArgumentError(`${file} is a directory: ${expected}`);
  const directory = dirname(file);
  const parent = entryAt(directory);
  if (parent === undefined) throw new InvalidArgumentError(`the directory ${directory} does not exist: create it first, or give a file in an existing directory`);
  if (parent && !parent.isDirectory()) throw new InvalidArgumentError(`${directory} is not a directory: ${expected}, in an existing directory`);
  return value;
}
