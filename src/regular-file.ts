/**
 * Reading files that must be regular files (cert stores, the code cache) without waiting on a
 * special file at their path: a FIFO opened for reading blocks until a writer comes, and a
 * terminal until input arrives. Opened with `O_NONBLOCK` (no effect on a regular file), then
 * `fstat` decides.
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";

/** `open(2)` flags for a read that does not wait on a FIFO or a device (POSIX; plain read-only where `O_NONBLOCK` is not defined). */
export const READ_WITHOUT_BLOCKING = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * The text (UTF-8) of `file`.
 * @throws the `open` error (`ENOENT` and the like, `code` set), or an Error with `code`
 *   `"ENOTREG"` when `file` is not a regular file (a FIFO, a socket, a device, a directory)
 */
export async function readRegularFile(file: string): Promise<string> {
  const handle = await open(file, READ_WITHOUT_BLOCKING);
  try {
    if (!(await handle.stat()).isFile()) throw Object.assign(new Error(`${file} is not a regular file`), { code: "ENOTREG" });
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}
