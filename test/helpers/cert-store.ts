/**
 * Assertions on a cert store directory (src/pki/store.ts layout) for tests.
 */
import { execFileSync } from "node:child_process";
import { KeyObject, X509Certificate, createPrivateKey, webcrypto } from "node:crypto";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
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

/**
 * Makes `dir` (0700) hold a self-signed Ed25519 CA made with openssl: `ca.key` (PKCS#8, 0600) and
 * `ca.crt` with subject `CN=<name>`, valid `days`, basicConstraints CA:true and `keyUsage`
 * (critical). Needs openssl on PATH.
 */
export async function opensslEd25519Ca(dir: string, { name, days, keyUsage }: { name: string; days: number; keyUsage: string }): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  execFileSync("openssl", ["genpkey", "-algorithm", "ed25519", "-out", join(dir, "ca.key")]);
  await chmod(join(dir, "ca.key"), 0o600);
  const extensions = ["basicConstraints=critical,CA:true", `keyUsage=critical,${keyUsage}`].flatMap((e) => ["-addext", e]);
  execFileSync("openssl", ["req", "-x509", "-key", join(dir, "ca.key"), "-out", join(dir, "ca.crt"), "-subj", `/CN=${name}`, "-days", String(days), ...extensions]);
}
