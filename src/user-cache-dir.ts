/** The user's cache directory for this package (the embedded cert store, the CLI's code cache). */
import os from "node:os";
import path from "node:path";

/** `$XDG_CACHE_HOME/orchestra-stdio` (XDG Base Directory), else `~/.cache/orchestra-stdio`. */
export function userCacheDir(): string {
  const xdg = process.env["XDG_CACHE_HOME"];
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), ".cache"), "orchestra-stdio");
}
