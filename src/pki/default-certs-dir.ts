/**
 * The cert store's default directory, in a module of its own so that `serve` can name it before
 * it loads the store's code (src/pki/store.ts, which re-exports it; Node's crypto comes with that).
 */
import os from "node:os";
import path from "node:path";

/** `~/.orchestra/certs` for the current user. */
export function defaultCertsDir(): string {
  return path.join(os.homedir(), ".orchestra", "certs");
}
