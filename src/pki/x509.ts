/**
 * Creating keys and certificates for the cert store (src/pki/store.ts): Ed25519 keys (WebCrypto),
 * the CA and leaf certificates (@peculiar/x509, loaded on first use), PKCS#8 PEM export/import.
 * Profile: orchestra-protocol.md, "Transport", row "cert store layout".
 */
import type * as X509 from "@peculiar/x509";
import { createPrivateKey, KeyObject, webcrypto, randomBytes, X509Certificate as NodeX509Certificate } from "node:crypto";
import { CertStoreError } from "./error.js";

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

let x509Module: Promise<typeof X509> | undefined;

/**
 * Loads @peculiar/x509 on first use: only creating certificates needs it, and it costs about a
 * third of a second of start-up, which `serve` with an existing store should not pay.
 */
export function loadX509(): Promise<typeof X509> {
  x509Module ??= (async () => {
    await import("reflect-metadata");
    const x509 = await import("@peculiar/x509");
    // @peculiar/x509 is typed against the DOM `Crypto`; Node's webcrypto is that object at runtime.
    x509.cryptoProvider.set(webcrypto);
    return x509;
  })();
  return x509Module;
}

/** Validity of a leaf certificate, in days (orchestra-protocol.md). */
export const LEAF_VALIDITY_DAYS = 365;

/** Validity of a CA this store creates, in days (not fixed by the protocol; 10 years). */
export const CA_VALIDITY_DAYS = 3650;

const ED25519 = { name: "Ed25519" } as const;

const DAY_MS = 24 * 60 * 60 * 1000;

export async function importPrivateKey(pem: string, file: string): Promise<CryptoKey> {
  try {
    const der = createPrivateKey(pem).export({ format: "der", type: "pkcs8" });
    return await webcrypto.subtle.importKey("pkcs8", der, ED25519, false, ["sign"]);
  } catch (err) {
    throw new CertStoreError(`${file} is not a PKCS#8 Ed25519 private key: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

export async function exportKeyPem(key: CryptoKey): Promise<string> {
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

/**
 * A leaf's validity: {@link LEAF_VALIDITY_DAYS} days, but never past its CA's `notAfter` (a
 * certificate cannot be verified once its issuer has expired, RFC 5280 §6.1.3).
 */
function leafValidity(caNotAfter: Date): { notBefore: Date; notAfter: Date } {
  const v = validity(LEAF_VALIDITY_DAYS);
  return v.notAfter.getTime() <= caNotAfter.getTime() ? v : { notBefore: v.notBefore, notAfter: caNotAfter };
}

export async function buildCa(): Promise<{ cert: X509.X509Certificate; keys: CryptoKeyPair }> {
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

export async function createLeaf(name: string, ca: X509.X509Certificate, caKey: CryptoKey): Promise<{ certPem: string; keyPem: string }> {
  const x509 = await loadX509();
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${name}`,
    issuer: ca.subjectName,
    ...leafValidity(ca.notAfter),
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
