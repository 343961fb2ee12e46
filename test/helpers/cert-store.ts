/**
 * Assertions on a cert store directory (src/quic/certs.ts layout) for tests.
 */
import { X509Certificate, createPrivateKey } from "node:crypto";
import { readFile } from "node:fs/promises";
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
