/**
 * Assertions on a cert store directory (src/pki/store.ts layout) for tests.
 */
import { KeyObject, X509Certificate, createPrivateKey, webcrypto } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect } from "vitest";

/** Every named pair in `d` is usable: key = certificate's, signed by ca.crt, whose key is ca.key. */
export async function expectSoundStore(d: string, names: string[]): Promise<void> {
  const ca = new X509Certificate(await readFile(join(d, "ca.crt"), "utf8"));
  expect(ca.checkPrivateKey(createPrivateKey(await readFile(join(d, "ca.key"), "utf8"))), `${d}: ca.key matches ca.crt`).toBe(true);
  for (const name of names) {
    const cert = new X509Certificate(await readFile(join(d, `${name}.crt`), "utf8"));
    expect(cert.checkPrivateKey(createPrivateKey(await readFile(join(d, `${name}.key`), "utf8"))), `${d}: ${name}.key matches ${name}.crt`).toBe(true);
    expect(cert.verify(ca.publicKey), `${d}: ca.crt signs ${name}.crt`).toBe(true);
  }
}

/**
 * Replaces `<name>.crt`/`.key` in store `d` with a pair signed by `d`'s ca.key that expired a day
 * ago (valid for one day before that).
 */
export async function writeExpiredPair(d: string, name: string): Promise<void> {
  await import("reflect-metadata");
  const x509 = await import("@peculiar/x509");
  x509.cryptoProvider.set(webcrypto as unknown as Crypto);
  const alg = { name: "Ed25519" };
  const caKeyDer = createPrivateKey(await readFile(join(d, "ca.key"), "utf8")).export({ format: "der", type: "pkcs8" });
  const caKey = await webcrypto.subtle.importKey("pkcs8", caKeyDer, alg, false, ["sign"]);
  const ca = new x509.X509Certificate(await readFile(join(d, "ca.crt"), "utf8"));
  const keys = (await webcrypto.subtle.generateKey(alg, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
  const day = 24 * 3600 * 1000;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: "01",
    subject: `CN=${name}`,
    issuer: ca.subjectName,
    notBefore: new Date(Date.now() - 2 * day),
    notAfter: new Date(Date.now() - day),
    publicKey: keys.publicKey as unknown as CryptoKey,
    signingKey: caKey as unknown as CryptoKey,
    signingAlgorithm: alg,
  });
  await writeFile(join(d, `${name}.crt`), cert.toString("pem"));
  await writeFile(join(d, `${name}.key`), KeyObject.from(keys.privateKey).export({ format: "pem", type: "pkcs8" }) as string, { mode: 0o600 });
}
