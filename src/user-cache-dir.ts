/** The user's cache directory for this package (the embedded cert store, the CLI's code cache). */
import { existsSync, lstatSync, realpathSync, statSync, type Stats } from "node:fs";
import os from "node:os";
import path from "node:path";

/** `$XDG_CACHE_HOME/orchestra-stdio` (XDG Base Directory), else `~/.cache/orchestra-stdio`. */
export function userCacheDir(): string {
  const xdg = process.env["XDG_CACHE_HOME"];
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), ".cache"), "orchestra-stdio");
}

/**
 * Why this user must not make or write `dir` (a directory of this package's user cache:
 * {@link userCacheDir} or one inside it), or undefined when it may. It may not when:
 * - the directory above the user cache (HOME, or the parent of `$XDG_CACHE_HOME`) does not exist:
 *   a missing HOME is not created;
 * - a directory from the nearest existing one of `dir` and its ancestors up to `/` (links
 *   resolved) is another user's (root's excepted) or writable by group or others without the
 *   sticky bit: someone else could then rename or replace what is below it between a check and a
 *   write;
 * - `dir` exists and is not a directory (a link included), is another user's, or is writable by
 *   group or others.
 * Only on systems with user ids (not Windows, whose ACLs this does not read).
 */
export function cacheDirProblem(dir: string): CacheDirProblem | undefined {
  if (typeof process.getuid !== "function") return undefined;
  const uid = process.getuid();
  const cacheRoot = path.dirname(userCacheDir());
  const own = "use directories of your own";
  if (!existsSync(path.dirname(cacheRoot))) return { reason: `${path.dirname(cacheRoot)} does not exist`, fix: `create it, or set XDG_CACHE_HOME` };
  let nearest = dir;
  while (!existsSync(nearest) && path.dirname(nearest) !== nearest) nearest = path.dirname(nearest);
  try {
    for (let d = realpathSync(nearest); ; d = path.dirname(d)) {
      const st = statSync(d);
      if (st.uid !== uid && st.uid !== 0) return { reason: `${d} belongs to another user (uid ${st.uid})`, fix: own };
      if (!st.isDirectory()) return { reason: `${d} is not a directory`, fix: `remove or rename ${d}` };
      if ((st.mode & 0o022) !== 0 && (st.mode & 0o1000) === 0) {
        return { reason: `${d} is writable by group/others without the sticky bit (others could replace what is below it)`, fix: `run chmod go-w ${d}` };
      }
      if (path.dirname(d) === d) break;
    }
    const st = lstatOrNone(dir);
    if (st !== undefined) {
      if (st.isSymbolicLink()) return { reason: `${dir} is a symbolic link (not followed)`, fix: `replace it with a directory` };
      if (!st.isDirectory()) return { reason: `${dir} is not a directory`, fix: `remove or rename ${dir}` };
      if (st.uid !== uid) return { reason: `${dir} belongs to another user (uid ${st.uid})`, fix: own };
      if ((st.mode & 0o022) !== 0) return { reason: `${dir} is writable by group/others`, fix: `run chmod go-w ${dir}` };
    }
  } catch (err) {
    return { reason: (err as Error).message, fix: own };
  }
  return undefined;
}

/** Why a cache directory is not used ({@link cacheDirProblem}), and what the user can do about it (a clause). */
export interface CacheDirProblem {
  reason: string;
  fix: string;
}

/** `dir` itself (a link not followed), or undefined when it cannot be looked at (missing, or a file on its path): the attempt to make it then says why. */
function lstatOrNone(dir: string): Stats | undefined {
  try {
    return lstatSync(dir);
  } catch {
    return undefined;
  }
}
