/**
 * Why a file `validate` was given (an input, `--schema`) could not be opened or read, in words
 * that name the path and what was expected, instead of Node's `ENOENT: no such file or
 * directory, open 'x'`.
 */
import { isAbsolute } from "node:path";

/**
 * @param path the path as given
 * @param err what opening or reading it threw
 * @param expected what the path should have named, e.g. "expected an MCP schema.json file"
 * @returns the reason: an empty name, no such file (with the working directory for a relative
 *   path), a directory, permission denied; Node's message for any other error
 */
export function openFailure(path: string, err: unknown, expected: string): string {
  if (path.trim() === "") return `the file name is empty: ${expected}`;
  const where = isAbsolute(path) ? "" : ` (relative to the working directory ${process.cwd()})`;
  switch ((err as NodeJS.ErrnoException | undefined)?.code) {
    case "ENOENT":
      return `no such file: ${path}${where}`;
    case "ENOTDIR":
      return `no such file: ${path}${where}: a part of the path before the file name is not a directory`;
    case "EACCES":
    case "EPERM":
      return `permission denied: ${path} cannot be read`;
    case "EISDIR":
      return `${path} is a directory: ${expected}`;
    default:
      return err instanceof Error ? err.message : String(err);
  }
}
