/**
 * Files in a directory of this package's user cache (`<user cache>/orchestra-stdio/<name>/`,
 * src/user-cache-dir.ts) that a later process trusts: the CLI's code cache (src/cli/code-cache.ts)
 * and the compiled tool validators (src/bridge/tool-validator-cache.ts). Read only when the file
 * is regular, this user's and nobody else's to write; written only into directories that pass
 * {@link cacheDirProblem}, to a temporary file of a random name created exclusively (a link
 * planted there is not followed) and renamed over the old one. Never fatal and never reported:
 * a cache that cannot be read or written is a cache miss.
 */
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { READ_WITHOUT_BLOCKING } from "./regular-file.js";
import { cacheDirProblem } from "./user-cache-dir.js";

/** Whether the user turned the caches off: `ORCHESTRA_NO_CODE_CACHE=1` (or `true`, `yes`; docs/cli.md). */
export function cachesTurnedOff(): boolean {
  return /^(1|true|yes)$/i.test(process.env["ORCHESTRA_NO_CODE_CACHE"] ?? "");
}

/**
 * The bytes of `file` when it is a regular file that this user owns and nobody else can write,
 * else undefined. Opened without blocking, so that a FIFO (or another special file) at its path is
 * seen by `fstat` and ignored instead of waiting for a writer.
 */
export function readOwnFile(file: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, READ_WITHOUT_BLOCKING);
    const stat = fstatSync(fd);
    if (!stat.isFile() || (process.getuid !== undefined && (stat.uid !== process.getuid() || (stat.mode & 0o022) !== 0))) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Writes `bytes` to `file` (in `<user cache>/orchestra-stdio/<name>/`, mode 0600) as the module's
 * description says, making the directories when missing.
 * @returns whether the file was written
 */
export function writeOwnFile(file: string, bytes: Uint8Array): boolean {
  if (!privateDirectory(dirname(file))) return false;
  const temporary = `${file}.${randomBytes(8).toString("hex")}.tmp`;
  try {
    writeFileSync(temporary, bytes, { mode: 0o600, flag: "wx" });
    renameSync(temporary, file);
    return true;
  } catch {
    rmSync(temporary, { force: true });
    return false;
  }
}

/**
 * Makes `dir` (`<user cache>/orchestra-stdio/<name>`) and the directories above it up to the
 * user cache (`~/.cache` or `$XDG_CACHE_HOME`, only when missing) and tells whether files may be
 * written there: only when each passes {@link cacheDirProblem} before and after (this user's,
 * nobody else's to write, nor anything above them; never by creating a missing HOME).
 */
function privateDirectory(dir: string): boolean {
  const cacheRoot = dirname(dirname(dir));
  for (const d of existsSync(cacheRoot) ? [dirname(dir), dir] : [cacheRoot, dirname(dir), dir]) {
    if (cacheDirProblem(d) !== undefined) return false;
    try {
      mkdirSync(d, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") return false;
    }
    // Made by this process or found: checked again, as a directory made meanwhile by someone else.
    if (cacheDirProblem(d) !== undefined) return false;
  }
  return true;
}

/** Removes the least recently written files of `dir` ending in `suffix` beyond the `max` newest, never `keep`. */
export function pruneFiles(dir: string, suffix: string, max: number, keep: string): void {
  const files: { path: string; mtimeMs: number }[] = [];
  try {
    for (const name of readdirSync(dir)) {
      if (!name.endsWith(suffix)) continue;
      const path = join(dir, name);
      try {
        files.push({ path, mtimeMs: statSync(path).mtimeMs });
      } catch {
        // removed meanwhile by another process
      }
    }
  } catch {
    return;
  }
  files.sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const { path } of files.slice(max)) if (path !== keep) rmSync(path, { force: true });
}
