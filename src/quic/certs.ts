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
import type * as X509 from "@peculiar/x509";
import { createPrivateKey, createPublicKey, KeyObject, webcrypto, randomBytes, X509Certificate as NodeX509Certificate } from "node:crypto";
import { promises as fs, constants as fsConstants, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { childLogger } from "../log.js";

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

let x509Module: Promise<typeof X509> | undefined;

/**
 * Loads @peculiar/x509 on first use: only creating certificates needs it, and it costs about a
 * third of a second of start-up, which `serve` with an existing store should not pay.
 */
function loadX509(): Promise<typeof X509> {
  x509Module ??= (async () => {
    await import("reflect-metadata");
    const x509 = await import("@peculiar/x509");
    // @peculiar/x509 is typed against the DOM `Crypto`; Node's webcrypto is that object at runtime.
    x509.cryptoProvider.set(webcrypto);
    return x509;
  })();
  return x509Module;
}

/** The stdio bridge's party name. */
export const BRIDGE_CERT_NAME = "transport.stdio-client";
/** The reference orchestrator's party name. */
export const ORCHESTRATOR_CERT_NAME = "orchestrator";

/** Validity of a leaf certificate, in days (orchestra-protocol.md). */
export const LEAF_VALIDITY_DAYS = 365;
/** Validity of a CA this store creates, in days (not fixed by the protocol; 10 years). */
export const CA_VALIDITY_DAYS = 3650;

const ED25519 = { name: "Ed25519" } as const;
const DAY_MS = 24 * 60 * 60 * 1000;

/** A failure to read, create or validate the store; the message names the file involved. */
export class CertStoreError extends Error {
  override readonly name = "CertStoreError";
  /** `"no-ca"`: the store has no `ca.crt` and was not allowed to create one. */
  code: "no-ca" | undefined;
}

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
function issueHint(root: string, name: string, haveCaKey: boolean): string {
  return haveCaKey
    ? `the next start (or orchestra-stdio certs init --name ${name} --certs-dir ${root}) issues a new pair with ${path.join(root, "ca.key")}`
    : `${path.join(root, "ca.key")} is missing, so it cannot be issued here: issue the pair where the CA's key is ` +
        `(orchestra-stdio certs init --name ${name} --certs-dir <the orchestrator's cert dir>) and copy ${name}.crt and ${name}.key into ${root}, ` +
        `or copy the orchestrator's ca.key into ${root}`;
}

/** How to fill a store that has no `ca.crt` (or does not exist): trust the orchestrator's CA first. */
function noCaHint(root: string, given: string): string {
  return (
    `${tildeHint(given)}to connect to an existing orchestrator, copy its ca.crt (from its cert store, default ~/.orchestra/certs on its host) into ${root} ` +
    `(mkdir -m 700 ${root} first if needed), with its ca.key or a transport.stdio-client pair issued there; ` +
    `only for a deployment of your own, run orchestra-stdio certs init --certs-dir ${root}. See ${CERTIFICATES_DOC}`
  );
}

/** A sentence for a store path given with a literal `~` (no shell expanded it), else `""`. */
function tildeHint(given: string): string {
  return given === "~" || given.startsWith("~/")
    ? `the path was given as ${JSON.stringify(given)} and "~" is not expanded here (only a shell expands it, at the start of an unquoted word): use $HOME or an absolute path. Otherwise, `
    : "";
}

/** `~/.orchestra/certs` for the current user. */
export function defaultCertsDir(): string {
  return path.join(os.homedir(), ".orchestra", "certs");
}

/**
 * A party name must be usable both as a file name and as a DNS SAN:
 * letters, digits, `.`, `-`, `_`; starts with a letter or digit; not `ca`.
 */
export function validatePartyName(name: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/.test(name) || name === "ca") {
    throw new CertStoreError(
      `invalid certificate name ${JSON.stringify(name)}: use letters, digits, '.', '-', '_' (not "ca")`,
    );
  }
}

/** Options of {@link ensureCertStore}. */
export interface CertStoreOptions {
  /**
   * Receives each warning (a group/world-writable store directory, a private key readable by
   * group/others), one sentence naming the file and the `chmod` that fixes it. Default: logged
   * at `warn` by the `certs` component.
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
 *   a `ca.key` that is not the key of `ca.crt`, a leaf not signed by the CA, a key/cert mismatch
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

/** A lock older than this (ms) is taken over even when its process seems alive. */
export const LOCK_STALE_MS = 10_000;
/** How long to wait for another process's lock before giving up (ms). */
const LOCK_WAIT_MS = 20_000;

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
  // Without a CA to trust, nothing is created, not even the directory.
  if (mayCreateCa || (await readOptional(paths.ca)) !== undefined) await ensureDir(root, warn);

  let createdCa = false;
  let caPem = await readOptional(paths.ca);
  if (caPem === undefined && !mayCreateCa) caPem = await caBeingCreated(root, paths.ca);
  if (caPem === undefined && !mayCreateCa) {
    const err = new CertStoreError(
      `no CA in ${root} (${paths.ca} is missing), so the orchestrator's certificate cannot be verified. ${tildeHint(given)}` +
        `Copy ca.crt from the orchestrator's cert store (its --certs-dir; default ~/.orchestra/certs on its host) into ${root}, ` +
        `with either its ca.key (then a ${name} certificate is issued here) or a ${name}.crt/.key pair issued there ` +
        `(orchestra-stdio certs init --name ${name} --certs-dir <its cert dir>); or point --certs-dir at that store. See ${CERTIFICATES_DOC}`,
    );
    err.code = "no-ca";
    throw err;
  }
  if (caPem === undefined) {
    await withLock(root, "ca", async () => {
      caPem = await readOptional(paths.ca);
      if (caPem !== undefined) return;
      if ((await readOptional(paths.caKey)) !== undefined) {
        throw new CertStoreError(
          `${paths.caKey} exists but ${paths.ca} is missing: restore the ca.crt that belongs to it, or remove ca.key to have a new CA created`,
        );
      }
      const ca = await buildCa();
      // Key first: a reader that finds ca.crt always finds its key.
      await replaceFile(paths.caKey, await exportKeyPem(ca.keys.privateKey), 0o600);
      caPem = ca.cert.toString("pem");
      await replaceFile(paths.ca, caPem, 0o644);
      createdCa = true;
    });
  }
  const caCert = parseCert(caPem!, paths.ca);

  let pair = await readPair(paths);
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
        throw new CertStoreError(`${paths.cert} is not signed by the CA in ${paths.ca}; remove it and ${paths.key} to have them recreated, or copy the CA that signed it`);
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
      checkKeyMode(paths.caKey, warn);
      const caKey = await importPrivateKey(caKeyPem, paths.caKey);
      const leaf = await createLeaf(name, new (await loadX509()).X509Certificate(caPem!), caKey);
      await replaceFile(paths.key, leaf.keyPem, 0o600);
      await replaceFile(paths.cert, leaf.certPem, 0o644);
      pair = leaf;
      createdCert = true;
    });
  }
  const final = pairProblem(pair, caCert);
  if (final !== undefined) throw new CertStoreError(`${paths.cert} / ${paths.key}: ${final}`);
  if (!createdCert) checkKeyMode(paths.key, warn);
  return { caPem: caPem!, certPem: pair.certPem!, keyPem: pair.keyPem!, dir: root, paths, created: { ca: createdCa, cert: createdCert } };
}

const NOT_SIGNED = "the certificate is not signed by the CA";

interface Pair {
  certPem?: string | undefined;
  keyPem?: string | undefined;
}

async function readPair(paths: { cert: string; key: string }): Promise<Pair> {
  return { certPem: await readOptional(paths.cert), keyPem: await readOptional(paths.key) };
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

/** Warns when a private key file can be read or written by group/others. */
function checkKeyMode(file: string, warn: (message: string) => void): void {
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
async function withLock<T>(dir: string, label: string, fn: () => Promise<T>): Promise<T> {
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
const CA_CREATION_WAIT_MS = 10_000;

/**
 * The CA certificate once another live process creating it (holding `<root>/.ca.lock`) has
 * written it; undefined at once when no such process exists, or after {@link CA_CREATION_WAIT_MS}.
 */
async function caBeingCreated(root: string, caPath: string): Promise<string | undefined> {
  const lock = path.join(root, ".ca.lock");
  const deadline = Date.now() + CA_CREATION_WAIT_MS;
  for (;;) {
    const held = await fs.stat(lock).then(
      async () => (await lockHolder(lock)) !== "stale",
      () => false,
    );
    const caPem = await readOptional(caPath);
    if (caPem !== undefined || !held || Date.now() > deadline) return caPem;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** `"stale"`, or a description of the live holder of lock `file`. */
async function lockHolder(file: string): Promise<string> {
  let text: string;
  let mtimeMs: number;
  try {
    [text, mtimeMs] = await Promise.all([fs.readFile(file, "utf8"), fs.stat(file).then((st) => st.mtimeMs)]);
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
export async function createEphemeralPki(
  names: string[],
): Promise<{ caPem: string; caKeyPem: string; leaves: Record<string, { certPem: string; keyPem: string }> }> {
  const ca = await buildCa();
  const leaves: Record<string, { certPem: string; keyPem: string }> = {};
  for (const name of names) {
    validatePartyName(name);
    leaves[name] = await createLeaf(name, ca.cert, ca.keys.privateKey);
  }
  return { caPem: ca.cert.toString("pem"), caKeyPem: await exportKeyPem(ca.keys.privateKey), leaves };
}

// ---------------------------------------------------------------------------------------------

/**
 * Creates `dir` with mode 0700 when it is missing; an existing directory keeps its mode (a
 * warning when group/others can write to it: they could replace the CA).
 */
async function ensureDir(dir: string, warn: (message: string) => void): Promise<void> {
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
  const st = await fs.stat(dir);
  if (!st.isDirectory()) throw new CertStoreError(`${dir} is not a directory`);
  const mode = st.mode & 0o7777;
  if ((mode & 0o022) !== 0) {
    warn(`cert store ${dir} is writable by group/others (mode ${octal(mode)}): anyone who can write there can replace its CA; run chmod go-w ${dir} or use a private --certs-dir`);
  }
}

async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new CertStoreError(`cannot read ${file}: ${(err as Error).message}`, { cause: err });
  }
}

async function readRequired(file: string): Promise<string> {
  const text = await readOptional(file);
  if (text === undefined) throw new CertStoreError(`${file} is missing`);
  return text;
}

function parseCert(pem: string, file: string): NodeX509Certificate {
  try {
    return new NodeX509Certificate(pem);
  } catch (err) {
    throw new CertStoreError(`${file} is not a PEM certificate: ${(err as Error).message}`, { cause: err });
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
  if (!keyPublic.equals(certPublic)) {
    throw new CertStoreError(
      `ca.key does not match ca.crt: the public key of ${paths.caKey} is not the one in ${paths.ca}; ` +
        "restore the ca.key that belongs to this ca.crt (or replace both, then every party's certificate)",
    );
  }
}

/** The certificate's notAfter as ISO 8601 (the one date format of every message and report). */
function notAfterOf(cert: NodeX509Certificate): string {
  return new Date(cert.validTo).toISOString();
}

function isExpired(cert: NodeX509Certificate): boolean {
  return Date.parse(cert.validTo) <= Date.now();
}

async function importPrivateKey(pem: string, file: string): Promise<CryptoKey> {
  try {
    const der = createPrivateKey(pem).export({ format: "der", type: "pkcs8" });
    return await webcrypto.subtle.importKey("pkcs8", der, ED25519, false, ["sign"]);
  } catch (err) {
    throw new CertStoreError(`${file} is not a PKCS#8 Ed25519 private key: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

async function exportKeyPem(key: CryptoKey): Promise<string> {
  return KeyObject.from(key).export({ format: "pem", type: "pkcs8" }) as string;
}

async function generateKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ED25519, true, ["sign", "verify"])) as CryptoKeyPair;
}

function serial(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f; // positive INTEGER
  if (bytes[0] === 0) bytes[0] = 1; // no leading zero byte
  return bytes.toString("hex");
}

function validity(days: number): { notBefore: Date; notAfter: Date } {
  const now = Date.now();
  // Back-date by a minute to tolerate small clock differences between parties.
  return { notBefore: new Date(now - 60_000), notAfter: new Date(now + days * DAY_MS) };
}

async function buildCa(): Promise<{ cert: X509.X509Certificate; keys: CryptoKeyPair }> {
  const x509 = await loadX509();
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: "CN=Orchestra CA",
    ...validity(CA_VALIDITY_DAYS),
    keys,
    signingAlgorithm: ED25519,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert, keys };
}

async function createLeaf(
  name: string,
  ca: X509.X509Certificate,
  caKey: CryptoKey,
): Promise<{ certPem: string; keyPem: string }> {
  const x509 = await loadX509();
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${name}`,
    issuer: ca.subjectName,
    ...validity(LEAF_VALIDITY_DAYS),
    publicKey: keys.publicKey,
    signingKey: caKey,
    signingAlgorithm: ED25519,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: "dns", value: name },
        { type: "dns", value: "localhost" },
        { type: "ip", value: "127.0.0.1" },
        { type: "ip", value: "::1" },
      ]),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(ca.publicKey),
    ],
  });
  // Sanity check with Node's own X.509 parser: the chain must verify.
  const nodeLeaf = new NodeX509Certificate(cert.toString("pem"));
  if (!nodeLeaf.checkIssued(new NodeX509Certificate(ca.toString("pem")))) {
    throw new CertStoreError(`internal error: the certificate created for ${name} does not chain to the CA`);
  }
  return { certPem: cert.toString("pem"), keyPem: await exportKeyPem(keys.privateKey) };
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
async function replaceFile(target: string, text: string, mode: number): Promise<void> {
  const tmp = await writeTemp(target, text, mode);
  try {
    await fs.rename(tmp, target);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw new CertStoreError(`cannot write ${target}: ${(err as Error).message}`, { cause: err });
  }
}

/** One certificate of a store as {@link inspectCertStore} reports it. */
export interface CertReport {
  /** `ca` for the CA, else the party name (the file's base name). */
  name: string;
  /** Absolute paths of the certificate and its key. */
  certFile: string;
  keyFile: string;
  /** Subject (RFC 4514 string as Node prints it), or undefined when the file is unreadable. */
  subject?: string;
  /** Expiry (ISO 8601), and whether it is past. */
  notAfter?: string;
  expired?: boolean;
  /** Key file present; its mode (e.g. `0600`); whether it is the certificate's key. */
  keyPresent: boolean;
  keyMode?: string;
  keyMatches?: boolean;
  /** Leaves only: whether the store's CA signed it. */
  signedByCa?: boolean;
  /** What is wrong (empty: usable), each with the fix. */
  problems: string[];
}

/** What {@link inspectCertStore} found. */
export interface CertStoreReport {
  dir: string;
  /** Directory mode (e.g. `0700`), undefined when it does not exist. */
  mode?: string;
  /** The CA (`ca.crt`/`ca.key`), undefined without `ca.crt`. */
  ca?: CertReport;
  /** Every `<name>.crt` other than `ca.crt`, by name. */
  leaves: CertReport[];
  /**
   * Store-wide problems (missing directory or CA, permissions, no `transport.stdio-client` pair
   * and no `ca.key` to issue one), each with the fix.
   */
  problems: string[];
}

/**
 * Reads a cert store without changing anything: the CA (and whether `ca.crt` is a CA
 * certificate: basicConstraints CA:true and, when it has keyUsage, keyCertSign; RFC 5280
 * §4.2.1.9, §4.2.1.3), every leaf (`*.crt`), expiry, whether each key matches its certificate and
 * the CA signed it, the permissions, and whether `serve` could open it (a
 * `transport.stdio-client` pair, or `ca.key` to issue one). Each problem names its fix, which
 * depends on whether `ca.key` is there.
 * @throws CertStoreError when the directory exists but cannot be listed
 */
export async function inspectCertStore(dir: string): Promise<CertStoreReport> {
  const root = path.resolve(dir);
  const report: CertStoreReport = { dir: root, leaves: [], problems: [] };
  let st;
  try {
    st = await fs.stat(root);
  } catch {
    report.problems.push(`${root} does not exist: ${noCaHint(root, dir)}`);
    return report;
  }
  report.mode = octal(st.mode & 0o7777);
  if ((st.mode & 0o022) !== 0) report.problems.push(`${root} is writable by group/others: run chmod go-w ${root}`);
  let names: string[];
  try {
    names = (await fs.readdir(root)).filter((f) => f.endsWith(".crt") && !f.startsWith(".")).map((f) => f.slice(0, -4)).sort();
  } catch (err) {
    throw new CertStoreError(`cannot list ${root}: ${(err as Error).message}`, { cause: err });
  }
  const haveCaKey = await fs.access(path.join(root, "ca.key")).then(
    () => true,
    () => false,
  );
  let caCert: NodeX509Certificate | undefined;
  if (names.includes("ca")) {
    report.ca = await inspectOne(root, "ca", undefined, haveCaKey);
    try {
      caCert = new NodeX509Certificate(await fs.readFile(path.join(root, "ca.crt"), "utf8"));
    } catch {
      caCert = undefined;
    }
    if (caCert) {
      const notCa = await notCaReason(caCert);
      if (notCa) report.ca.problems.push(`${path.join(root, "ca.crt")} is not a CA certificate (${notCa}): peers cannot verify certificates against it; copy the orchestrator's ca.crt, not its own certificate`);
    }
  } else {
    report.problems.push(`no ${path.join(root, "ca.crt")}: ${noCaHint(root, dir)}`);
  }
  for (const name of names) if (name !== "ca") report.leaves.push(await inspectOne(root, name, caCert ?? null, haveCaKey));
  if (!haveCaKey && !names.includes(BRIDGE_CERT_NAME)) {
    report.problems.push(`no ${BRIDGE_CERT_NAME} pair and no ca.key to issue one, so serve cannot start with this store: ${issueHint(root, BRIDGE_CERT_NAME, false)}`);
  }
  return report;
}

/** Why `cert` cannot sign certificates (RFC 5280 §4.2.1.9 basicConstraints, §4.2.1.3 keyUsage), or undefined. */
async function notCaReason(cert: NodeX509Certificate): Promise<string | undefined> {
  if (!cert.ca) return "basicConstraints lacks CA:true";
  const x509 = await loadX509();
  const usages = new x509.X509Certificate(cert.raw).getExtension(x509.KeyUsagesExtension);
  if (usages && (usages.usages & x509.KeyUsageFlags.keyCertSign) === 0) return "keyUsage lacks keyCertSign";
  return undefined;
}

async function inspectOne(root: string, name: string, ca: NodeX509Certificate | null | undefined, haveCaKey: boolean): Promise<CertReport> {
  const certFile = path.join(root, `${name}.crt`);
  const keyFile = path.join(root, `${name}.key`);
  const r: CertReport = { name, certFile, keyFile, keyPresent: false, problems: [] };
  let cert: NodeX509Certificate | undefined;
  try {
    cert = new NodeX509Certificate(await fs.readFile(certFile, "utf8"));
    r.subject = cert.subject.replace(/\n/g, ", ");
    r.notAfter = notAfterOf(cert);
    r.expired = isExpired(cert);
    if (r.expired) {
      r.problems.push(
        name === "ca"
          ? `${certFile} expired on ${r.notAfter}: no party can be verified against it; replace it with the orchestrator's current ca.crt (a new CA means new certificates for every party)`
          : `${certFile} expired on ${r.notAfter}: ${issueHint(root, name, haveCaKey)}`,
      );
    }
  } catch (err) {
    r.problems.push(`${certFile} is not a readable PEM certificate (${(err as Error).message})`);
  }
  try {
    const keyPem = await fs.readFile(keyFile, "utf8");
    r.keyPresent = true;
    r.keyMode = octal(statSync(keyFile).mode & 0o777);
    if ((statSync(keyFile).mode & 0o077) !== 0) r.problems.push(`${keyFile} is accessible by group/others: run chmod 600 ${keyFile}`);
    if (cert) {
      try {
        r.keyMatches = cert.checkPrivateKey(createPrivateKey(keyPem));
      } catch {
        r.keyMatches = false;
      }
      if (!r.keyMatches) r.problems.push(`${keyFile} is not the key of ${certFile}: copy the matching pair, or ${issueHint(root, name, haveCaKey)}`);
    }
  } catch {
    // A CA without its key is normal for a party that only trusts it.
    if (name !== "ca") r.problems.push(`${keyFile} is missing: copy the key that belongs to ${certFile}, or ${issueHint(root, name, haveCaKey)}`);
  }
  if (ca !== undefined && cert) {
    r.signedByCa = ca !== null && cert.verify(ca.publicKey);
    if (!r.signedByCa) r.problems.push(`${certFile} is not signed by ${path.join(root, "ca.crt")}: peers that trust this CA will refuse it`);
  }
  return r;
}

function octal(mode: number): string {
  return mode.toString(8).padStart(4, "0");
}
