/**
 * The cert store of the embedded orchestrator (`serve` without `--orchestrator-addr`): one per
 * user, in the user's cache directory (`$XDG_CACHE_HOME/orchestra-stdio/embedded-certs`, else
 * `~/.cache/…`), created once and reused, so that a launch reads four PEM files instead of creating
 * a CA and two certificates. Its CA signs only the embedded orchestrator and the bridge of the same
 * user, which talk over loopback; it is no store a user named (those `serve` never fills with a CA).
 *
 * Before each use the store is checked: a directory (not a link) owned by this user with no
 * group/other access, a CA certificate that is valid for at least {@link CA_MIN_REMAINING_DAYS}
 * more days and whose key is `ca.key`, and both parties' pairs (issued again by
 * {@link ensureCertStore} when missing or expired). A store that fails is deleted and created
 * anew (one warning naming what was wrong), under a lock beside it (`.embedded-certs.lock`), so
 * that bridges starting together replace it once. A store that belongs to another user is never
 * touched: {@link openEmbeddedStore} warns and answers undefined, and the caller uses a throwaway
 * store of its own.
 */
import { createPublicKey, randomBytes, X509Certificate } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { CertStoreError } from "./error.js";
import { ensureDir, readOptional, withLock } from "./files.js";
import { BRIDGE_CERT_NAME, ensureCertStore, ORCHESTRATOR_CERT_NAME } from "./store.js";
import { cacheDirProblem, userCacheDir } from "../user-cache-dir.js";

/** A CA with fewer days left than this is replaced (a leaf it signs is valid for up to 365). */
export const CA_MIN_REMAINING_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;

export { userCacheDir };

/** What {@link openEmbeddedStore} did. */
export interface EmbeddedStore {
  /** The store directory, holding the CA and both parties' pairs. */
  dir: string;
  /** Whether this call (re)created the CA. */
  createdCa: boolean;
}

/**
 * The embedded orchestrator's store, checked and, when missing or unusable, (re)created.
 * @param cacheDir where it lives (default {@link userCacheDir}); the store is `<cacheDir>/embedded-certs`
 * @param warn called once for each fallback (another user's store, an unusable cache directory)
 *   and each replacement (with what was wrong)
 * @returns the store, or undefined when it cannot be used here (another user's directory, or a
 *   cache directory that cannot be created or written): the caller then uses a throwaway store
 */
export async function openEmbeddedStore(cacheDir: string = userCacheDir(), warn: (message: string) => void = () => {}): Promise<EmbeddedStore | undefined> {
  const dir = path.join(cacheDir, "embedded-certs");
  const foreign = async () => {
    const owner = (await fs.lstat(dir)).uid;
    warn(
      `the embedded orchestrator's cert store ${dir} belongs to another user (uid ${owner}), so it is left alone and a throwaway store (a new CA) is made on every start: ` +
        `remove it, or set XDG_CACHE_HOME to a directory of your own`,
    );
    return undefined;
  };
  const unsafe = cacheDirProblem(cacheDir);
  if (unsafe !== undefined) {
    warn(
      `the embedded orchestrator's cert store ${dir} cannot be kept there: ${unsafe.reason}; a throwaway store (a new CA) is made on every start: ` +
        `${unsafe.fix}, or set XDG_CACHE_HOME to a directory of your own that nobody else can write`,
    );
    return undefined;
  }
  try {
    await ensureDir(cacheDir, warn, {
      what: `the cache directory of the embedded orchestrator's cert store ${dir},`,
      advice: `run chmod go-w ${cacheDir}, or set XDG_CACHE_HOME to a private directory`,
    });
    const problem = await storeProblem(dir);
    if (problem === "foreign") return await foreign();
    if (problem === undefined) {
      const opened = await openPairs(dir);
      if (typeof opened === "boolean") return { dir, createdCa: opened };
    }
    // Replaced under a lock beside it: the first bridge replaces it, the others find it sound.
    return await withLock(cacheDir, "embedded-certs", async () => {
      let again = await storeProblem(dir);
      if (again === "foreign") return await foreign();
      if (again === undefined) {
        const opened = await openPairs(dir);
        if (typeof opened === "boolean") return { dir, createdCa: opened };
        again = opened;
      }
      await removeStore(dir);
      warn(`the embedded orchestrator's cert store ${dir} was unusable (${again}): it was deleted and a new one with a new CA is made`);
      const created = await openPairs(dir);
      return typeof created === "boolean" ? { dir, createdCa: created } : undefined;
    });
  } catch (err) {
    if (err instanceof CertStoreError || isFsError(err)) {
      warn(`the embedded orchestrator's cert store ${dir} cannot be used (${(err as Error).message}); using a throwaway one`);
      return undefined;
    }
    throw err;
  }
}

/**
 * Why the store in `dir` must be replaced (a description), `"foreign"` when it is another user's
 * (not ours to touch), or undefined when it may be used (or does not exist yet).
 */
async function storeProblem(dir: string): Promise<string | "foreign" | undefined> {
  let st;
  try {
    st = await fs.lstat(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  if (typeof process.getuid === "function" && st.uid !== process.getuid()) return "foreign";
  if (!st.isDirectory()) return "not a directory";
  if ((st.mode & 0o077) !== 0) return "accessible by group/others";
  const caPem = await readOptional(path.join(dir, "ca.crt"));
  const caKeyPem = await readOptional(path.join(dir, "ca.key"));
  if (caPem === undefined && caKeyPem === undefined) return undefined; // created below
  if (caPem === undefined || caKeyPem === undefined) return "ca.crt or ca.key is missing";
  let ca: X509Certificate;
  try {
    ca = new X509Certificate(caPem);
  } catch {
    return "ca.crt is not a PEM certificate";
  }
  if (Date.parse(ca.validTo) - Date.now() < CA_MIN_REMAINING_DAYS * DAY_MS) return `the CA expires on ${new Date(ca.validTo).toISOString()}`;
  try {
    const keyPublic = createPublicKey(caKeyPem).export({ format: "der", type: "spki" });
    if (!keyPublic.equals(ca.publicKey.export({ format: "der", type: "spki" }))) return "ca.key is not the key of ca.crt";
  } catch {
    return "ca.key is not a private key";
  }
  return undefined;
}

/**
 * Opens both parties' pairs (creating the CA and the pairs as needed, issuing expired or missing
 * pairs again). Resolves with whether the CA was created, or with why the store is unusable
 * (a pair the CA did not sign, unreadable files): it is then replaced.
 */
async function openPairs(dir: string): Promise<boolean | string> {
  try {
    const orchestrator = await ensureCertStore(dir, ORCHESTRATOR_CERT_NAME);
    await ensureCertStore(dir, BRIDGE_CERT_NAME);
    return orchestrator.created.ca;
  } catch (err) {
    if (err instanceof CertStoreError) return err.message;
    throw err;
  }
}

/** Renames `dir` out of the way (atomic: no reader sees half a store) and deletes it. */
async function removeStore(dir: string): Promise<void> {
  const aside = `${dir}.stale-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    await fs.rename(dir, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  await fs.rm(aside, { recursive: true, force: true });
}

function isFsError(err: unknown): boolean {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === "string" && /^E[A-Z]+$/.test((err as NodeJS.ErrnoException).code!);
}
