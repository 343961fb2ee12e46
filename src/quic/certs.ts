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
 * Files are published with `link()` (fails if the name exists), so two parties starting at the
 * same time on one directory never overwrite each other's CA: the loser reads the winner's.
 */
import type * as X509 from "@peculiar/x509";
import { createPrivateKey, createPublicKey, KeyObject, webcrypto, randomBytes, X509Certificate as NodeX509Certificate } from "node:crypto";
import { promises as fs, constants as fsConstants } from "node:fs";
import os from "node:os";
import path from "node:path";

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

/**
 * Opens (creating as needed) the cert store in `dir` for party `name`.
 *
 * - Creates `dir` with mode 0700 (and tightens an existing one to 0700).
 * - No `ca.crt`: creates an Ed25519 CA (`ca.crt`, `ca.key` 0600).
 * - No `<name>.crt`/`<name>.key`, or an expired one: creates an Ed25519 key and a leaf signed by
 *   the CA (needs `ca.key`). A leaf created before the CA in this call is always replaced.
 * - An existing leaf that the CA did not sign is an error (it would be rejected by every peer).
 * - A `ca.key` whose public key is not `ca.crt`'s is an error ("ca.key does not match ca.crt").
 *
 * @param dir store directory (e.g. {@link defaultCertsDir}())
 * @param name party name, e.g. {@link BRIDGE_CERT_NAME}; see {@link validatePartyName}
 * @throws CertStoreError on unreadable/invalid files, a missing `ca.key` when signing is needed,
 *   a `ca.key` that is not the key of `ca.crt` (checked before signing, and when a leaf fails
 *   verification), or a leaf not signed by the CA
 */
export async function ensureCertStore(dir: string, name: string): Promise<CertStore> {
  validatePartyName(name);
  const root = path.resolve(dir);
  await ensureDir(root);
  const paths = {
    ca: path.join(root, "ca.crt"),
    caKey: path.join(root, "ca.key"),
    cert: path.join(root, `${name}.crt`),
    key: path.join(root, `${name}.key`),
  };

  let createdCa = false;
  let caPem = await readOptional(paths.ca);
  if (caPem === undefined) {
    createdCa = await createCa(paths.ca, paths.caKey);
    caPem = await readRequired(paths.ca);
  }
  const caCert = parseCert(caPem, paths.ca);

  let createdCert = false;
  let certPem = await readOptional(paths.cert);
  let keyPem = await readOptional(paths.key);
  const usable =
    certPem !== undefined && keyPem !== undefined && !createdCa && !isExpired(parseCert(certPem, paths.cert));
  if (!usable) {
    const caKeyPem = await readOptional(paths.caKey);
    if (caKeyPem === undefined) {
      throw new CertStoreError(
        `cannot create a certificate for ${JSON.stringify(name)}: ${paths.caKey} is missing (only the CA's owner can sign)`,
      );
    }
    assertCaKeyMatches(caCert, caKeyPem, paths);
    const caKey = await importPrivateKey(caKeyPem, paths.caKey);
    const leaf = await createLeaf(name, new (await loadX509()).X509Certificate(caPem), caKey);
    await replaceFile(paths.key, leaf.keyPem, 0o600);
    await replaceFile(paths.cert, leaf.certPem, 0o644);
    certPem = leaf.certPem;
    keyPem = leaf.keyPem;
    createdCert = true;
  }
  const leafCert = parseCert(certPem!, paths.cert);
  if (!leafCert.verify(caCert.publicKey)) {
    // A leaf signed with a ca.key that is not ca.crt's key can never verify: recreating it
    // would not help, so name the real fault.
    const caKeyPem = await readOptional(paths.caKey);
    if (caKeyPem !== undefined) assertCaKeyMatches(caCert, caKeyPem, paths);
    throw new CertStoreError(`${paths.cert} is not signed by the CA in ${paths.ca}; remove it to have it recreated`);
  }
  return { caPem, certPem: certPem!, keyPem: keyPem!, dir: root, paths, created: { ca: createdCa, cert: createdCert } };
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

async function ensureDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const st = await fs.stat(dir);
  if (!st.isDirectory()) throw new CertStoreError(`${dir} is not a directory`);
  if ((st.mode & 0o777) !== 0o700) {
    try {
      await fs.chmod(dir, 0o700);
    } catch (err) {
      throw new CertStoreError(`cannot set mode 0700 on ${dir}: ${(err as Error).message}`, { cause: err });
    }
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

/** Creates the CA unless another party publishes one first; returns true when ours won. */
async function createCa(certFile: string, keyFile: string): Promise<boolean> {
  const ca = await buildCa();
  const keyPem = await exportKeyPem(ca.keys.privateKey);
  const certPem = ca.cert.toString("pem");
  // Publish the key first: whoever links ca.key owns the CA and then publishes ca.crt.
  const wonKey = await publishExclusive(keyFile, keyPem, 0o600);
  if (wonKey) {
    if (!(await publishExclusive(certFile, certPem, 0o644))) {
      throw new CertStoreError(`${certFile} appeared while creating a new CA; remove ${keyFile} and retry`);
    }
    return true;
  }
  // Someone else holds ca.key: wait briefly for their ca.crt.
  for (let i = 0; i < 50; i++) {
    if ((await readOptional(certFile)) !== undefined) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new CertStoreError(`${keyFile} exists but ${certFile} is missing; restore ca.crt or remove ca.key`);
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

/** Writes `text` to `target` only if `target` does not exist; returns false if it did. */
async function publishExclusive(target: string, text: string, mode: number): Promise<boolean> {
  const tmp = await writeTemp(target, text, mode);
  try {
    await fs.link(tmp, target);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw new CertStoreError(`cannot create ${target}: ${(err as Error).message}`, { cause: err });
  } finally {
    await fs.rm(tmp, { force: true });
  }
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
