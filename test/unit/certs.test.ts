import { execFileSync } from "node:child_process";
import { X509Certificate, createPrivateKey } from "node:crypto";
import { mkdtemp, readFile, rm, stat, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  BRIDGE_CERT_NAME,
  CertStoreError,
  defaultCertsDir,
  ensureCertStore,
  ORCHESTRATOR_CERT_NAME,
} from "../../src/quic/certs.js";
import { requireCommand, skipTitle } from "../helpers/requires.js";

const opensslMissing = requireCommand("openssl", ["version"]);

let root: string;
let dir: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "orchestra-certs-"));
  dir = join(root, "nested", "certs");
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const mode = async (p: string): Promise<number> => (await stat(p)).mode & 0o777;

describe("ensureCertStore", () => {
  it("defaults to ~/.orchestra/certs", () => {
    expect(defaultCertsDir()).toMatch(/[/\\]\.orchestra[/\\]certs$/);
  });

  it("creates the directory (0700), the CA and the party cert, keys 0600 in PKCS#8 PEM", async () => {
    const store = await ensureCertStore(dir, BRIDGE_CERT_NAME);
    expect(store.created).toEqual({ ca: true, cert: true });
    expect(store.dir).toBe(dir);
    expect(await mode(dir)).toBe(0o700);
    for (const f of ["ca.key", `${BRIDGE_CERT_NAME}.key`]) {
      expect(await mode(join(dir, f))).toBe(0o600);
      const pem = await readFile(join(dir, f), "utf8");
      expect(pem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
      expect(createPrivateKey(pem).asymmetricKeyType).toBe("ed25519");
    }
    expect(await readFile(join(dir, "ca.crt"), "utf8")).toBe(store.caPem);
    expect(await readFile(join(dir, `${BRIDGE_CERT_NAME}.crt`), "utf8")).toBe(store.certPem);
  });

  it("issues a leaf with the protocol's profile, signed by the CA", async () => {
    const store = await ensureCertStore(dir, ORCHESTRATOR_CERT_NAME);
    const ca = new X509Certificate(store.caPem);
    const leaf = new X509Certificate(store.certPem);
    expect(ca.ca).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(leaf.checkIssued(ca)).toBe(true);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.publicKey.asymmetricKeyType).toBe("ed25519");
    expect(leaf.subjectAltName).toBe(
      `DNS:${ORCHESTRATOR_CERT_NAME}, DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1`,
    );
    expect(leaf.keyUsage).toEqual(expect.arrayContaining(["1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2"]));
    const days = (Date.parse(leaf.validTo) - Date.parse(leaf.validFrom)) / 86_400_000;
    expect(Math.round(days)).toBe(365);
    expect(leaf.checkPrivateKey(createPrivateKey(store.keyPem))).toBe(true);
  });

  it("reuses an existing CA and signs a second party with it; a second call reuses everything", async () => {
    const first = await ensureCertStore(dir, ORCHESTRATOR_CERT_NAME);
    const caKeyBefore = await readFile(join(dir, "ca.key"), "utf8");
    const second = await ensureCertStore(dir, BRIDGE_CERT_NAME);
    expect(second.created).toEqual({ ca: false, cert: true });
    expect(second.caPem).toBe(first.caPem);
    expect(await readFile(join(dir, "ca.key"), "utf8")).toBe(caKeyBefore);
    expect(new X509Certificate(second.certPem).checkIssued(new X509Certificate(first.caPem))).toBe(true);

    const again = await ensureCertStore(dir, BRIDGE_CERT_NAME);
    expect(again.created).toEqual({ ca: false, cert: false });
    expect(again.certPem).toBe(second.certPem);
    expect(again.keyPem).toBe(second.keyPem);
  });

  it("tightens an existing directory to 0700", async () => {
    await ensureCertStore(dir, BRIDGE_CERT_NAME);
    const { chmod } = await import("node:fs/promises");
    await chmod(dir, 0o755);
    await ensureCertStore(dir, BRIDGE_CERT_NAME);
    expect(await mode(dir)).toBe(0o700);
  });

  it("two parties racing on an empty directory end up with one CA", async () => {
    const [a, b] = await Promise.all([
      ensureCertStore(dir, ORCHESTRATOR_CERT_NAME),
      ensureCertStore(dir, BRIDGE_CERT_NAME),
    ]);
    expect(a.caPem).toBe(b.caPem);
    const ca = new X509Certificate(a.caPem);
    expect(new X509Certificate(a.certPem).checkIssued(ca)).toBe(true);
    expect(new X509Certificate(b.certPem).checkIssued(ca)).toBe(true);
  });

  it("refuses a leaf signed by another CA, naming the file", async () => {
    const other = join(root, "other");
    const foreign = await ensureCertStore(other, BRIDGE_CERT_NAME);
    await ensureCertStore(dir, ORCHESTRATOR_CERT_NAME);
    await writeFile(join(dir, `${BRIDGE_CERT_NAME}.crt`), foreign.certPem);
    await writeFile(join(dir, `${BRIDGE_CERT_NAME}.key`), foreign.keyPem, { mode: 0o600 });
    await expect(ensureCertStore(dir, BRIDGE_CERT_NAME)).rejects.toThrow(
      new RegExp(`${BRIDGE_CERT_NAME.replace(/\./g, "\\.")}\\.crt is not signed by the CA`),
    );
  });

  it("refuses a ca.key that does not match ca.crt before issuing a cert with it", async () => {
    const foreign = join(root, "other");
    await ensureCertStore(foreign, ORCHESTRATOR_CERT_NAME);
    await ensureCertStore(dir, ORCHESTRATOR_CERT_NAME);
    await writeFile(join(dir, "ca.key"), await readFile(join(foreign, "ca.key")), { mode: 0o600 });
    const err = await ensureCertStore(dir, BRIDGE_CERT_NAME).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CertStoreError);
    expect((err as Error).message).toMatch(/^ca\.key does not match ca\.crt: /);
    expect((err as Error).message).toContain(join(dir, "ca.key"));
    expect((err as Error).message).not.toMatch(/remove it/);
    // Nothing was issued with the wrong key.
    await expect(stat(join(dir, `${BRIDGE_CERT_NAME}.crt`))).rejects.toThrow(/ENOENT/);
  });

  it("names a mismatched ca.key, not the leaf, when a leaf it signed fails verification", async () => {
    // The state an earlier version left behind: a leaf signed with a ca.key foreign to ca.crt.
    const foreign = join(root, "other");
    const other = await ensureCertStore(foreign, BRIDGE_CERT_NAME);
    await ensureCertStore(dir, ORCHESTRATOR_CERT_NAME);
    await writeFile(join(dir, "ca.key"), await readFile(join(foreign, "ca.key")), { mode: 0o600 });
    await writeFile(join(dir, `${BRIDGE_CERT_NAME}.crt`), other.certPem);
    await writeFile(join(dir, `${BRIDGE_CERT_NAME}.key`), other.keyPem, { mode: 0o600 });
    await expect(ensureCertStore(dir, BRIDGE_CERT_NAME)).rejects.toThrow(/^ca\.key does not match ca\.crt: /);
  });

  it("cannot issue a party cert without ca.key, and says so", async () => {
    await ensureCertStore(dir, ORCHESTRATOR_CERT_NAME);
    await unlink(join(dir, "ca.key"));
    await expect(ensureCertStore(dir, BRIDGE_CERT_NAME)).rejects.toThrow(/ca\.key is missing/);
    // An existing party cert still loads without the CA key.
    await expect(ensureCertStore(dir, ORCHESTRATOR_CERT_NAME)).resolves.toMatchObject({
      created: { ca: false, cert: false },
    });
  });

  it("rejects names that cannot be file names or DNS names", async () => {
    for (const bad of ["", "../x", "a/b", "ca", ".hidden", "has space"]) {
      await expect(ensureCertStore(dir, bad)).rejects.toBeInstanceOf(CertStoreError);
    }
  });

  it.skipIf(opensslMissing !== undefined)(skipTitle("openssl reads the certs as ED25519 with the SANs and verifies the chain", opensslMissing), async () => {
    const store = await ensureCertStore(dir, BRIDGE_CERT_NAME);
    const text = execFileSync("openssl", ["x509", "-noout", "-text", "-in", store.paths.cert], { encoding: "utf8" });
    expect(text).toMatch(/Signature Algorithm: ED25519/);
    expect(text).toMatch(/Public Key Algorithm: ED25519/);
    expect(text).toContain(`DNS:${BRIDGE_CERT_NAME}`);
    expect(text).toContain("DNS:localhost");
    expect(text).toContain("IP Address:127.0.0.1");
    expect(text).toMatch(/IP Address:0:0:0:0:0:0:0:1|IP Address:::1/);
    expect(text).toMatch(/TLS Web Server Authentication, TLS Web Client Authentication/);
    const verify = execFileSync("openssl", ["verify", "-CAfile", store.paths.ca, store.paths.cert], {
      encoding: "utf8",
    });
    expect(verify).toContain(": OK");
    const caText = execFileSync("openssl", ["x509", "-noout", "-text", "-in", store.paths.ca], { encoding: "utf8" });
    expect(caText).toMatch(/CA:TRUE/);
  });
});
