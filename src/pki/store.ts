/**
 * The Orchestra certificate store (orchestra-protocol.md, "Transport", row "cert store layout").
 *
 * A directory (default `~/.orchestra/certs`, mode 0700) holding PEM files:
 * `ca.crt`, `ca.key`, `<name>.crt`, `<name>.key` (keys PKCS#8, mode 0600). One private CA signs
 * every party's certificate. A party that finds no CA creates one; a party that finds no
 * certificate for its name creates a key pair and has the CA sign it. All keys are Ed25519.
 * Leaf certificates carry SAN DNS `<name>` and `localhost`, IP `127.0.0.1` and `::1`,
 * extKeyUsage serverAuth + clientAuth, and are valid for 365 days.
 *
 * Files are written to a temporary name and renamed into place, under a per-file-pair lock
 * (see {@link ensureCertStore}), so parties starting together on one directory create each
 * pair once and never leave a key that is not its certificate's.
 */

import { createPrivateKey, createPublicKey, X509Certificate as NodeX509Certificate } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { childLogger } from "../log.js";
import { CertStoreError } from "./error.js";
import { CA_CREATION_WAIT_MS, caBeingCreated, checkKeyMode, ensureDir, readOptional, readRequired, replaceFile, withLock } from "./files.js";
import { buildCa, createLeaf, exportKeyPem, importPrivateKey, loadX509 } from "./x509.js";

export { CertStoreError } from "./error.js";
export { LOCK_STALE_MS } from "./files.js";
export { CA_VALIDITY_DAYS, LEAF_VALIDITY_DAYS } from "./x509.js";
export { inspectCertStore, type CertReport, type CertStoreReport } from "./inspect.js";

/** The stdio bridge's party name. */
export const BRIDGE_CERT_NAME = "transport.stdio-client";

/** The reference orchestrator's party name. */
export const ORCHESTRATOR_CERT_NAME = "orchestrator";

/** The PEM material a party needs for mutual TLS. */
export interface TlsMaterial {
  /** The CA certificate (PEM) used to verify the peer. */
  caPem: string;
  /** This party's certificate (PEM), signed by the CA. */
  certPem: string;
  /** This party's private key (PKCS#8 PEM). */
  keyPem: string;
}

/** Result of {@link ensureCertStore}. */
export interface CertStore extends TlsMaterial {
  /** Absolute path of the store directory. */
  dir: string;
  /** Absolute paths of the files used. */
  paths: { ca: string; caKey: string; cert: string; key: string };
  /** What this call created (false = reused from disk). */
  created: { ca: boolean; cert: boolean };
}

/**
 * Absolute path of this guide (docs/certificates.md) in the installed package (`docs/` ships with
 * it), for messages that point to it.
 */
export const CERTIFICATES_DOC = fileURLToPath(new URL("../../docs/certificates.md", import.meta.url));

/**
 * The next step when party `name` needs a (new) pair in store `root`: with `ca.key` there it is
 * issued at the next start; without it only the CA's owner can sign, so the fix is on the
 * orchestrator's side.
 */
export function issueHint(root: string, name: string, haveCaKey: boolean): string {
  return haveCaKey
    ? `the next start (or orchestra-stdio certs init --name ${name} --certs-dir ${root}) issues a new pair with ${path.join(root, "ca.key")}`
    : `${path.join(root, "ca.key")} is missing, so it cannot be issued here: issue the pair where the CA's key is ` +
        `(orchestra-stdio certs init --name ${name} --certs-dir <the orchestrator's cert dir>) and copy ${name}.crt and ${name}.key into ${root}, ` +
        `or copy the orchestrator's ca.key into ${root}`;
}

/**
 * The fix for party `name`'s certificate in store `root` that the store's CA did not sign: with
 * `ca.key` there, removing the pair has it issued again; without, a pair that CA issued must be
 * copied in. Either way, copying the CA that signed it also fixes it.
 */
export function notSignedFix(root: string, name: string, haveCaKey: boolean): string {
  const fix = haveCaKey ? `remove it and ${path.join(root, `${name}.key`)} to have them recreated` : `replace both with a pair that CA issued: ${issueHint(root, name, false)}`;
  return `${fix}; or copy the CA that signed it`;
}

/**
 * The refusal of a `ca.key` that is not the key of `ca.crt` in store `root`. Which of the two was
 * replaced cannot be told (a party's certificate copied as `ca.crt`, or another CA's key), so the
 * fix is the pair that belongs together.
 */
export function caKeyMismatch(root: string): string {
  return (
    `ca.key does not match ca.crt: the public key of ${path.join(root, "ca.key")} is not the one in ${path.join(root, "ca.crt")}; ` +
    "copy the CA's ca.crt and ca.key together from the cert store that issues the certificates (the orchestrator's), " +
    `or, for a deployment of your own, move both out of ${root} and run orchestra-stdio certs init --certs-dir ${root} (a new CA: every party then needs a new certificate)`
  );
}

/** Curve names as Node reports them (`asymmetricKeyDetails.namedCurve`) and as people know them. */
const CURVE_NAMES: Readonly<Record<string, string>> = { prime256v1: "P-256", secp384r1: "P-384", secp521r1: "P-521" };

/**
 * Why the CA of store `root` cannot issue certificates here, or undefined: orchestra-stdio signs
 * only with an Ed25519 `ca.key` (the key type of the protocol's parties, orchestra-protocol.md
 * "Transport"). A CA of another key type (e.g. an openssl ECDSA P-256 or RSA CA) can still be
 * trusted: pairs it issued elsewhere verify against it.
 * @param caCert the store's `ca.crt` (its public key is `ca.key`'s)
 */
export function caKeyTypeProblem(caCert: NodeX509Certificate, root: string): string | undefined {
  const key = caCert.publicKey;
  if (key.asymmetricKeyType === "ed25519") return undefined;
  const curve = key.asymmetricKeyDetails?.namedCurve;
  const bits = key.asymmetricKeyDetails?.modulusLength;
  const described =
    key.asymmetricKeyType === "ec"
      ? `an ECDSA ${curve === undefined ? "" : `${CURVE_NAMES[curve] ?? curve} `}key`
      : key.asymmetricKeyType === "rsa"
        ? `an RSA${bits === undefined ? "" : ` ${bits}-bit`} key`
        : `a ${key.asymmetricKeyType ?? "unknown"} key`;
  return (
    `${path.join(root, "ca.crt")} has ${described}, and orchestra-stdio issues certificates only with an Ed25519 CA key, so ${path.join(root, "ca.key")} cannot sign here: ` +
    `make an Ed25519 CA (move ca.crt and ca.key out of ${root}, run orchestra-stdio certs init --certs-dir ${root}, then give every party a certificate of the new CA; ` +
    `with openssl: openssl genpkey -algorithm ed25519), or issue the pairs with the tool that made this CA and copy them into ${root}. See ${CERTIFICATES_DOC}`
  );
}

/** How to fill a store that has no `ca.crt` (or does not exist): trust the orchestrator's CA first. */
export function noCaHint(root: string, given: string): string {
  const dir = advisedDir(root, given);
  return (
    `${tildeHint(given)}to connect to an existing orchestrator, copy its ca.crt (from its cert store, default ~/.orchestra/certs on its host) into ${dir} ` +
    `(mkdir -m 700 ${dir} first if needed), with its ca.key or a transport.stdio-client pair issued there; ` +
    `only for a deployment of your own, run orchestra-stdio certs init --certs-dir ${dir}. See ${CERTIFICATES_DOC}`
  );
}

/** Whether a store path was given with a literal `~` (no shell expanded it). */
function hasLiteralTilde(given: string): boolean {
  return given === "~" || given.startsWith("~/");
}

/** The sentence for a store path given with a literal `~` (no shell expanded it), else `""`; no final full stop. */
export function tildeSentence(given: string): string {
  return hasLiteralTilde(given)
    ? `the path was given as ${JSON.stringify(given)} and "~" is not expanded here (only a shell expands it, at the start of an unquoted word): use $HOME or an absolute path`
    : "";
}

/** {@link tildeSentence} as the start of a message that goes on with the other advice ("Otherwise, "), else `""`. */
export function tildeHint(given: string): string {
  return hasLiteralTilde(given) ? `${tildeSentence(given)}. Otherwise, ` : "";
}

/**
 * Why a command that creates a store (`certs init`, `orchestrator`) refuses the store path
 * `given`, or undefined: a literal `~` would make the store under `./~` in the working directory.
 * The message names the directory meant and that nothing was created; the command exits 2.
 */
export function literalTildeRefusal(given: string): string | undefined {
  return hasLiteralTilde(given) ? `${tildeSentence(given)} (meant: --certs-dir ${advisedDir(given, given)}); nothing was created` : undefined;
}

/**
 * The store directory to name in advice: for a path given with a literal `~`, the directory under
 * the home directory it was meant as; else `root` (the path resolved).
 */
export function advisedDir(root: string, given: string): string {
  return hasLiteralTilde(given) ? path.join(os.homedir(), given.slice(1)) : root;
}

export { defaultCertsDir } from "./default-certs-dir.js";

/**
 * A party name must be usable both as a file name and as a DNS SAN:
 * letters, digits, `.`, `-`, `_`; starts with a letter or digit; not `ca`.
 */
export function validatePartyName(name: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/.test(name) || name === "ca") {
    throw new CertStoreError(`invalid certificate name ${JSON.stringify(name)}: use letters, digits, '.', '-', '_' (not "ca")`);
  }
}

/** Options of {@link ensureCertStore}. */
export interface CertStoreOptions {
  /**
   * Receives each warning, one sentence naming the file: a group/world-writable store directory
   * or a private key readable by group/others (with the `chmod` that fixes it), a pair replaced
   * by a new one issued with `ca.key` (what was wrong with it: expired, key not the
   * certificate's, …). Default: logged at `warn` by the `certs` component.
   */
  warn?: (message: string) => void;
  /**
   * Whether a missing `ca.crt` makes a new CA (default true). With false it is a
   * {@link CertStoreError} whose `code` is `"no-ca"`: a party that must trust an existing
   * orchestrator's CA cannot use a CA of its own.
   */
  createCa?: boolean;
}

/** Concurrent {@link ensureCertStore} calls for one directory and name share one promise. */
const opening = new Map<string, Promise<CertStore>>();

/**
 * Opens (creating as needed) the cert store in `dir` for party `name`.
 *
 * - A missing `dir` is created with mode 0700; an existing one is used as it is (a warning
 *   when group/others can write to it).
 * - No `ca.crt`: creates an Ed25519 CA (`ca.crt`, `ca.key` 0600).
 * - No `<name>.crt`/`<name>.key`, only one of them, an expired certificate, or a key that is
 *   not the certificate's: creates an Ed25519 key and a leaf signed by the CA (needs `ca.key`,
 *   which the store's own CA has). A leaf older than a CA created in this call is replaced.
 * - Creation is exclusive across processes (a lock file `.<name>.lock` / `.ca.lock`, created
 *   with O_EXCL, in `dir`; waiters re-read the finished files; a lock whose process is gone, or
 *   older than {@link LOCK_STALE_MS}, is taken over) and shared within one process (one promise
 *   per directory and name). A pair read while another process writes it is re-read under the lock.
 * - Every pair returned was checked: the key is the certificate's, and the CA signed it.
 * - A private key readable by group/others gets a warning naming the `chmod`.
 *
 * @param dir store directory (e.g. {@link defaultCertsDir}())
 * @param name party name, e.g. {@link BRIDGE_CERT_NAME}; see {@link validatePartyName}
 * @throws CertStoreError on unreadable/invalid files, a missing `ca.key` when signing is needed,
 *   a `ca.key` that is not the key of `ca.crt` or not Ed25519 (when signing is needed; a valid pair
 *   does not read it), a leaf not signed by the CA, a key/cert mismatch
 *   that cannot be repaired here (no `ca.key`), or a lock held too long; each message names the
 *   file and the fix
 */
export async function ensureCertStore(dir: string, name: string, options: CertStoreOptions = {}): Promise<CertStore> {
  validatePartyName(name);
  const root = path.resolve(dir);
  const key = `${root}\0${name}\0${options.createCa ?? true}`;
  let p = opening.get(key);
  if (p === undefined) {
    p = openStore(root, dir, name, options.warn ?? defaultWarn, options.createCa ?? true).finally(() => opening.delete(key));
    opening.set(key, p);
  }
  return p;
}

function defaultWarn(message: string): void {
  childLogger("certs").warn(message);
}

async function openStore(root: string, given: string, name: string, warn: (message: string) => void, mayCreateCa: boolean): Promise<CertStore> {
  const paths = {
    ca: path.join(root, "ca.crt"),
    caKey: path.join(root, "ca.key"),
    cert: path.join(root, `${name}.crt`),
    key: path.join(root, `${name}.key`),
  };
  // The pair is read alongside the CA (each read is several round trips to the thread pool); it is
  // used only when the CA was there at the first look, and its fault, if any, is reported where it was read before.
  const pairAtStart = readPair(paths);
  pairAtStart.catch(() => {});
  let caPem = await readOptional(paths.ca);
  const caAtStart = caPem !== undefined;
  // Without a CA to trust, nothing is created, not even the directory.
  if (mayCreateCa || caPem !== undefined) await ensureDir(root, warn);

  let createdCa = false;
  let creator: string | undefined;
  if (caPem === undefined && !mayCreateCa) ({ caPem, heldBy: creator } = await caBeingCreated(root, paths.ca));
  if (caPem === undefined && !mayCreateCa) {
    const waited =
      creator === undefined
        ? ""
        : `; ${creator} has held ${path.join(root, ".ca.lock")} for over ${CA_CREATION_WAIT_MS / 1000} s without writing it (if that process is not running, remove the lock)`;
    const err = new CertStoreError(
      `no CA in ${root} (${paths.ca} is missing${waited}), so the orchestrator's certificate cannot be verified: ${tildeHint(given)}` +
        `copy ca.crt from the orchestrator's cert store (its --certs-dir; default ~/.orchestra/certs on its host) into ${advisedDir(root, given)}, ` +
        `with either its ca.key (then a ${name} certificate is issued here) or a ${name}.crt/.key pair issued there ` +
        `(orchestra-stdio certs init --name ${name} --certs-dir <its cert dir>); or point --certs-dir (or ORCHESTRA_CERTS_DIR) at that store. See ${CERTIFICATES_DOC}`,
    );
    err.code = "no-ca";
    throw err;
  }
  if (caPem === undefined) {
    await withLock(root, "ca", async () => {
      caPem = await readOptional(paths.ca);
      if (caPem !== undefined) return;
      if ((await readOptional(paths.caKey)) !== undefined) {
        throw new CertStoreError(`${paths.caKey} exists but ${paths.ca} is missing: restore the ca.crt that belongs to it, or remove ca.key to have a new CA created`);
      }
      const ca = await buildCa();
      // Key first: a reader that finds ca.crt always finds its key.
      await replaceFile(paths.caKey, await exportKeyPem(ca.keys.privateKey), 0o600);
      caPem = ca.cert.toString("pem");
      await replaceFile(paths.ca, caPem, 0o644);
      createdCa = true;
    });
  }
  const caCert = parseCert(
    caPem!,
    paths.ca,
    createdCa
      ? "report this: the CA was created just now"
      : mayCreateCa
        ? `restore the ca.crt that belongs to ${paths.caKey}, or remove both to have a new CA created (every party's certificate must then be issued anew)`
        : `copy the orchestrator's CA certificate again (the ca.crt of its cert store, default ~/.orchestra/certs on its host) into ${advisedDir(root, given)}`,
  );
  const notCa = caFlagProblem(caCert);
  if (notCa !== undefined) {
    throw new CertStoreError(`${paths.ca} is not a CA certificate (${notCa}): copy the orchestrator's CA certificate, the ca.crt of its cert store, not a party's certificate`);
  }

  let pair = caAtStart ? await pairAtStart : await readPair(paths);
  // A leaf older than a CA created just now fails the signature check (new CA key).
  let problem = pairProblem(pair, caCert);
  let createdCert = false;
  if (problem !== undefined) {
    await withLock(root, name, async () => {
      // Another process may have finished the pair while we waited, or was writing it as we read.
      pair = await readPair(paths);
      problem = pairProblem(pair, caCert);
      if (problem === undefined) return;
      if (problem === NOT_SIGNED && !createdCa) {
        // A certificate of another CA is not ours to replace; name the real fault.
        const caKeyPem = await readOptional(paths.caKey);
        if (caKeyPem !== undefined) assertCaKeyMatches(caCert, caKeyPem, paths);
        throw new CertStoreError(`${paths.cert} is not signed by the CA in ${paths.ca}; ${notSignedFix(root, name, caKeyPem !== undefined)}`);
      }
      const caKeyPem = await readOptional(paths.caKey);
      if (caKeyPem === undefined) {
        throw new CertStoreError(
          pair.certPem === undefined && pair.keyPem === undefined
            ? `cannot create a certificate for ${JSON.stringify(name)}: ${issueHint(root, name, false)}`
            : `${paths.cert} / ${paths.key}: ${problem}, and ${issueHint(root, name, false)}; or copy a matching ${name}.crt and ${name}.key`,
        );
      }
      assertCaKeyMatches(caCert, caKeyPem, paths);
      const keyType = caKeyTypeProblem(caCert, root);
      if (keyType !== undefined) throw new CertStoreError(keyType);
      checkKeyMode(paths.caKey, warn);
      const caKey = await importPrivateKey(caKeyPem, paths.caKey);
      const leaf = await createLeaf(name, new (await loadX509()).X509Certificate(caPem!), caKey);
      await replaceFile(paths.key, leaf.keyPem, 0o600);
      await replaceFile(paths.cert, leaf.certPem, 0o644);
      if (pair.certPem !== undefined || pair.keyPem !== undefined) warn(`${paths.cert} / ${paths.key}: ${problem}; replaced by a new pair issued with ${paths.caKey}`);
      pair = leaf;
      createdCert = true;
    });
    // Checked again only when the lock's holder (this process or another) made the pair.
    const final = pairProblem(pair, caCert);
    if (final !== undefined) throw new CertStoreError(`${paths.cert} / ${paths.key}: ${final}`);
  }
  if (!createdCert) checkKeyMode(paths.key, warn);
  return { caPem: caPem!, certPem: pair.certPem!, keyPem: pair.keyPem!, dir: root, paths, created: { ca: createdCa, cert: createdCert } };
}

const NOT_SIGNED = "the certificate is not signed by the CA";

interface Pair {
  certPem?: string | undefined;
  keyPem?: string | undefined;
}

/** Both files of a pair, read at once; a fault of the certificate's file is reported before one of the key's. */
async function readPair(paths: { cert: string; key: string }): Promise<Pair> {
  const [cert, key] = await Promise.allSettled([readOptional(paths.cert), readOptional(paths.key)]);
  if (cert.status === "rejected") throw cert.reason;
  if (key.status === "rejected") throw key.reason;
  return { certPem: cert.value, keyPem: key.value };
}

/**
 * What is wrong with a leaf pair, or `undefined` when it is usable: both files present and
 * parsable, not expired, the key is the certificate's, the CA signed the certificate.
 */
function pairProblem(pair: Pair, caCert: NodeX509Certificate): string | undefined {
  if (pair.certPem === undefined && pair.keyPem === undefined) return "missing";
  if (pair.certPem === undefined) return "the certificate is missing";
  if (pair.keyPem === undefined) return "the key is missing";
  let cert: NodeX509Certificate;
  try {
    cert = new NodeX509Certificate(pair.certPem);
  } catch {
    return "the certificate is not a PEM certificate";
  }
  if (isExpired(cert)) return `the certificate expired on ${notAfterOf(cert)}`;
  let matches: boolean;
  try {
    matches = cert.checkPrivateKey(createPrivateKey(pair.keyPem));
  } catch {
    return "the key is not a PEM private key";
  }
  if (!matches) return "the key does not match the certificate";
  if (!cert.verify(caCert.publicKey)) return NOT_SIGNED;
  return undefined;
}

/**
 * Loads existing material without creating anything.
 * @param paths PEM file paths
 * @throws CertStoreError when a file is missing or unreadable
 */
export async function loadTlsMaterial(paths: { ca: string; cert: string; key: string }): Promise<TlsMaterial> {
  return {
    caPem: await readRequired(paths.ca),
    certPem: await readRequired(paths.cert),
    keyPem: await readRequired(paths.key),
  };
}

/**
 * A fresh, self-contained CA plus one signed leaf, in memory (nothing written). For tests and
 * tools that need a throw-away identity; same profile as {@link ensureCertStore}.
 * @param names leaf party names to issue
 */
export async function createEphemeralPki(names: string[]): Promise<{ caPem: string; caKeyPem: string; leaves: Record<string, { certPem: string; keyPem: string }> }> {
  const ca = await buildCa();
  const leaves: Record<string, { certPem: string; keyPem: string }> = {};
  for (const name of names) {
    validatePartyName(name);
    leaves[name] = await createLeaf(name, ca.cert, ca.keys.privateKey);
  }
  return { caPem: ca.cert.toString("pem"), caKeyPem: await exportKeyPem(ca.keys.privateKey), leaves };
}

/** @param fix what the user can do when `pem` is not a certificate, appended to the error */
function parseCert(pem: string, file: string, fix: string): NodeX509Certificate {
  try {
    return new NodeX509Certificate(pem);
  } catch (err) {
    throw new CertStoreError(`${file} is not a PEM certificate (${(err as Error).message}): ${fix}`, { cause: err });
  }
}

/**
 * Refuses a `ca.key` whose public key is not the one in `ca.crt`: every certificate signed with
 * it would fail verification at every peer.
 */
function assertCaKeyMatches(caCert: NodeX509Certificate, caKeyPem: string, paths: { ca: string; caKey: string }): void {
  let keyPublic: Buffer;
  try {
    keyPublic = createPublicKey(caKeyPem).export({ format: "der", type: "spki" });
  } catch (err) {
    throw new CertStoreError(`${paths.caKey} is not a private key: ${(err as Error).message}`, { cause: err });
  }
  const certPublic = caCert.publicKey.export({ format: "der", type: "spki" });
  if (!keyPublic.equals(certPublic)) throw new CertStoreError(caKeyMismatch(path.dirname(paths.caKey)));
}

/**
 * Why `cert` cannot be a CA certificate, or undefined: OpenSSL's check (Node's `ca`) fails for a
 * basicConstraints without CA:true (RFC 5280 §4.2.1.9) and for a keyUsage without keyCertSign
 * (§4.2.1.3), and does not say which; `certs show` names the one (src/pki/inspect.ts).
 */
export function caFlagProblem(cert: NodeX509Certificate): string | undefined {
  return cert.ca ? undefined : "basicConstraints lacks CA:true, or keyUsage lacks keyCertSign";
}

/** The certificate's notAfter as ISO 8601 (the one date format of every message and report). */
export function notAfterOf(cert: NodeX509Certificate): string {
  return new Date(cert.validTo).toISOString();
}

/** Whether the certificate's notAfter is past. */
export function isExpired(cert: NodeX509Certificate): boolean {
  return Date.parse(cert.validTo) <= Date.now();
}
