/**
 * The file mechanics of the cert store (src/pki/store.ts): reading PEM files, atomic writes (a
 * temporary file, fsync, rename), the store directory's creation and mode checks, and the lock
 * files that make creation exclusive across processes.
 */
import { randomBytes } from "node:crypto";
import { promises as fs, constants as fsConstants, statSync, type Stats } from "node:fs";
import os from "node:os";
import path from "node:path";
import { CertStoreError } from "./error.js";
import { readRegularFile } from "../regular-file.js";

/** A lock older than this (ms) is taken over even when its process seems alive. */
export const LOCK_STALE_MS = 10_000;

/** How long to wait for another process's lock before giving up (ms). */
const LOCK_WAIT_MS = 20_000;

/** Warns when a private key file can be read or written by group/others. */
export function checkKeyMode(file: string, warn: (message: string) => void): void {
  let mode: number;
  try {
    mode = statSync(file).mode & 0o777;
  } catch {
    return;
  }
  if ((mode & 0o077) !== 0) {
    warn(`private key ${file} is accessible by group/others (mode ${octal(mode)}): run chmod 600 ${file}`);
  }
}

/**
 * Runs `fn` holding the store's lock `label` (`<dir>/.<label>.lock`, created with O_EXCL and
 * holding `pid host token`). Waits while another holder is alive; takes over a lock whose
 * process no longer exists on this host or that is older than {@link LOCK_STALE_MS}.
 * @throws CertStoreError when the lock cannot be created, or is held for over 20 s
 */
export async function withLock<T>(dir: string, label: string, fn: () => Promise<T>): Promise<T> {
  const file = path.join(dir, `.${label}.lock`);
  const token = `${process.pid} ${os.hostname()} ${randomBytes(8).toString("hex")}`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      await fs.writeFile(file, token, { flag: "wx", mode: 0o600 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new CertStoreError(`cannot create the lock ${file}: ${(err as Error).message}`, { cause: err });
      }
    }
    const holder = await lockHolder(file);
    if (holder === "stale") {
      await fs.rm(file, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new CertStoreError(`${file} has been held for over ${LOCK_WAIT_MS / 1000} s by ${holder}; if that process is not running, remove the file`);
    }
    await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
  }
  try {
    return await fn();
  } finally {
    // Remove it only while it is still ours (a holder taken over as stale must not delete the next one's).
    if ((await readOptional(file).catch(() => undefined)) === token) await fs.rm(file, { force: true });
  }
}

/** How long a party that may not create the CA waits for one that another process is creating (ms). */
export const CA_CREATION_WAIT_MS = 10_000;

/**
 * The CA certificate once another live process creating it (holding `<root>/.ca.lock`) has
 * written it (`caPem`); `caPem` undefined at once when no such process exists, or after
 * {@link CA_CREATION_WAIT_MS}, with `heldBy` then naming the lock's holder (`process 123 on host`).
 */
export async function caBeingCreated(root: string, caPath: string): Promise<{ caPem: string | undefined; heldBy?: string }> {
  const lock = path.join(root, ".ca.lock");
  const deadline = Date.now() + CA_CREATION_WAIT_MS;
  for (;;) {
    const holder = await fs.stat(lock).then(
      () => lockHolder(lock),
      () => "stale",
    );
    const caPem = await readOptional(caPath);
    if (caPem !== undefined || holder === "stale") return { caPem };
    if (Date.now() > deadline) return { caPem, heldBy: holder };
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** `"stale"`, or a description of the live holder of lock `file`. */
async function lockHolder(file: string): Promise<string> {
  let text: string;
  let mtimeMs: number;
  try {
    [text, mtimeMs] = await Promise.all([readRegularFile(file), fs.stat(file).then((st) => st.mtimeMs)]);
  } catch {
    return "another process"; // gone meanwhile (the next attempt will see) or being written
  }
  if (Date.now() - mtimeMs > LOCK_STALE_MS) return "stale";
  const [pidText, host] = text.split(" ");
  const pid = Number(pidText);
  if (host === os.hostname() && Number.isInteger(pid) && pid > 0 && !processAlive(pid)) return "stale";
  return text === "" ? "another process" : `process ${pidText} on ${host}`;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Creates `dir` with mode 0700 when it is missing; an existing directory keeps its mode (a
 * warning when group/others can write to it: they could replace the CA).
 * @param warning what the warning calls `dir` and its remedy (default: a cert store; `chmod go-w`,
 *   or a private `--certs-dir`)
 */
export async function ensureDir(
  dir: string,
  warn: (message: string) => void,
  warning: { what: string; advice: string } = { what: "cert store", advice: `run chmod go-w ${dir} or use a private --certs-dir` },
): Promise<void> {
  // An existing directory (every start after the first) costs one `stat`.
  const existing = await fs.stat(dir).catch(() => undefined);
  if (existing !== undefined) return checkDirStat(dir, existing, warn, warning);
  await fs.mkdir(path.dirname(dir), { recursive: true, mode: 0o700 });
  try {
    await fs.mkdir(dir, { mode: 0o700 });
    await fs.chmod(dir, 0o700); // the umask may have narrowed it
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
      throw new CertStoreError(`cannot create ${dir}: ${(err as Error).message}`, { cause: err });
    }
  }
  checkDirStat(dir, await fs.stat(dir), warn, warning);
}

function checkDirStat(dir: string, st: Stats, warn: (message: string) => void, warning: { what: string; advice: string }): void {
  if (!st.isDirectory()) throw new CertStoreError(`${dir} is not a directory`);
  const mode = st.mode & 0o7777;
  if ((mode & 0o022) !== 0) {
    warn(`${warning.what} ${dir} is writable by group/others (mode ${octal(mode)}): anyone who can write there can replace its CA; ${warning.advice}`);
  }
}

/** What to do about a store file that cannot be read, by the `open`/`read` error code ("" when there is nothing to add). */
function readFix(file: string, code: string | undefined): string {
  if (code === "EACCES" || code === "EPERM")
    return `; this user may not read it: check the permissions of the file and of the directories above it (ls -ld ${path.dirname(file)} ${file})`;
  if (code === "ENOTREG") return "; put the file itself at that path";
  return "";
}

/** The text of store file `file`, undefined when it is missing. @throws CertStoreError when it cannot be read or is not a regular file (a FIFO is not waited on) */
export async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readRegularFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new CertStoreError(`cannot read ${file}: ${(err as Error).message}${readFix(file, (err as NodeJS.ErrnoException).code)}`, { cause: err });
  }
}

export async function readRequired(file: string): Promise<string> {
  const text = await readOptional(file);
  if (text === undefined) throw new CertStoreError(`${file} is missing`);
  return text;
}

async function writeTemp(target: string, text: string, mode: number): Promise<string> {
  const tmp = `${target}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  const handle = await fs.open(tmp, fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_WRONLY, mode);
  try {
    await handle.writeFile(text, "utf8");
    await handle.chmod(mode); // umask may have narrowed or (never) widened it
    await handle.sync();
  } finally {
    await handle.close();
  }
  return tmp;
}

/** Atomically writes (or replaces) `target`. */
export async function replaceFile(target: string, text: string, mode: number): Promise<void> {
  const tmp = await writeTemp(target, text, mode);
  try {
    await fs.rename(tmp, target);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw new CertStoreError(`cannot write ${target}: ${(err as Error).message}`, { cause: err });
  }
}

/** A file mode in octal, e.g. `0600`. */
export function octal(mode: number): string {
  return mode.toString(8).padStart(4, "0");
}
