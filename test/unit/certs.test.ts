import { execFileSync, spawnSync } from "node:child_process";
import { X509Certificate, createPrivateKey } from "node:crypto";
import { mkdtemp, readFile, rm, stat, unlink, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { expectSoundStore, opensslEd25519Ca } from "../helpers/cert-store.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BRIDGE_CERT_NAME, CertStoreError, defaultCertsDir, ensureCertStore, ORCHESTRATOR_CERT_NAME } from "../../src/pki/store.js";
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
    expect(leaf.subjectAltName).toBe(`DNS:${ORCHESTRATOR_CERT_NAME}, DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1`);
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

  it("leaves an existing directory's mode alone, warning when group/others can write to it", async () => {
    const { chmod, mkdir, symlink } = await import("node:fs/promises");
    await mkdir(dir, { recursive: true, mode: 0o755 });
    await chmod(dir, 0o755);
    const quiet: string[] = [];
    await ensureCertStore(dir, BRIDGE_CERT_NAME, { warn: (m) => quiet.push(m) });
    expect(await mode(dir)).toBe(0o755);
    expect(quiet).toEqual([]);
    await chmod(dir, 0o777);
    const warnings: string[] = [];
    await ensureCertStore(dir, BRIDGE_CERT_NAME, { warn: (m) => warnings.push(m) });
    expect(await mode(dir)).toBe(0o777);
    expect(warnings).toEqual([expect.stringContaining(`chmod go-w ${dir}`)]);
    // Through a symlink: the target keeps its mode too.
    const link = join(root, "link");
    await symlink(dir, link);
    await ensureCertStore(link, BRIDGE_CERT_NAME, { warn: () => {} });
    expect(await mode(dir)).toBe(0o777);
  });

  it("warns about a private key that group/others can read, naming the chmod", async () => {
    const { chmod } = await import("node:fs/promises");
    await ensureCertStore(dir, BRIDGE_CERT_NAME);
    const key = join(dir, `${BRIDGE_CERT_NAME}.key`);
    await chmod(key, 0o644);
    const warnings: string[] = [];
    await ensureCertStore(dir, BRIDGE_CERT_NAME, { warn: (m) => warnings.push(m) });
    expect(warnings).toEqual([`private key ${key} is accessible by group/others (mode 0644): run chmod 600 ${key}`]);
  });

  it("repairs a pair whose key is not its certificate's (the state a racing writer left) when ca.key is there", async () => {
    const issued: string[] = [];
    const first = await ensureCertStore(dir, BRIDGE_CERT_NAME, { warn: (m) => issued.push(m) });
    expect(issued).toEqual([]);
    const other = await ensureCertStore(join(root, "other"), BRIDGE_CERT_NAME);
    await writeFile(join(dir, `${BRIDGE_CERT_NAME}.key`), other.keyPem, { mode: 0o600 });
    const warnings: string[] = [];
    const repaired = await ensureCertStore(dir, BRIDGE_CERT_NAME, { warn: (m) => warnings.push(m) });
    expect(repaired.created).toEqual({ ca: false, cert: true });
    // The repair is said, naming what was wrong (a first issue, above, is not).
    const [crt, key] = [join(dir, `${BRIDGE_CERT_NAME}.crt`), join(dir, `${BRIDGE_CERT_NAME}.key`)];
    expect(warnings).toEqual([`${crt} / ${key}: the key does not match the certificate; replaced by a new pair issued with ${join(dir, "ca.key")}`]);
    expect(repaired.caPem).toBe(first.caPem);
    const cert = new X509Certificate(await readFile(join(dir, `${BRIDGE_CERT_NAME}.crt`), "utf8"));
    expect(cert.checkPrivateKey(createPrivateKey(await readFile(join(dir, `${BRIDGE_CERT_NAME}.key`), "utf8")))).toBe(true);
  });

  it("reports a mismatched pair it cannot repair (no ca.key) with the fix", async () => {
    await ensureCertStore(dir, BRIDGE_CERT_NAME);
    const other = await ensureCertStore(join(root, "other"), BRIDGE_CERT_NAME);
    await writeFile(join(dir, `${BRIDGE_CERT_NAME}.key`), other.keyPem, { mode: 0o600 });
    await unlink(join(dir, "ca.key"));
    const err = (await ensureCertStore(dir, BRIDGE_CERT_NAME).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(CertStoreError);
    expect(err.message).toContain("the key does not match the certificate");
    expect(err.message).toContain(`copy a matching ${BRIDGE_CERT_NAME}.crt and ${BRIDGE_CERT_NAME}.key`);
  });

  it("50 rounds of concurrent first starts in one process (orchestrator + two bridge clients + a second orchestrator) leave a sound store", async () => {
    for (let round = 0; round < 50; round++) {
      const d = join(root, `round-${round}`);
      const stores = await Promise.all([
        ensureCertStore(d, ORCHESTRATOR_CERT_NAME),
        ensureCertStore(d, BRIDGE_CERT_NAME),
        ensureCertStore(d, BRIDGE_CERT_NAME),
        ensureCertStore(d, ORCHESTRATOR_CERT_NAME),
      ]);
      await expectSoundStore(d, [ORCHESTRATOR_CERT_NAME, BRIDGE_CERT_NAME]);
      for (const st of stores) expect(st.caPem).toBe(stores[0]!.caPem);
      // One creation per name: both callers got the same pair, the one on disk.
      expect(stores[1]!.keyPem).toBe(stores[2]!.keyPem);
      expect(stores[1]!.keyPem).toBe(await readFile(join(d, `${BRIDGE_CERT_NAME}.key`), "utf8"));
    }
  }, 120_000);

  it("takes over a lock left by a process that is gone, and waits for a live one", async () => {
    await ensureCertStore(dir, ORCHESTRATOR_CERT_NAME);
    const lock = join(dir, `.${BRIDGE_CERT_NAME}.lock`);
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    await writeFile(lock, `${dead.stdout} ${hostname()} 0000`);
    await ensureCertStore(dir, BRIDGE_CERT_NAME);
    await expectSoundStore(dir, [ORCHESTRATOR_CERT_NAME, BRIDGE_CERT_NAME]);
    await expect(stat(lock)).rejects.toThrow(/ENOENT/);

    await unlink(join(dir, `${BRIDGE_CERT_NAME}.key`));
    await writeFile(lock, `${process.pid} ${hostname()} 1111`);
    let done = false;
    const p = ensureCertStore(dir, BRIDGE_CERT_NAME).then(() => (done = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(done).toBe(false);
    await unlink(lock);
    await p;
    await expectSoundStore(dir, [ORCHESTRATOR_CERT_NAME, BRIDGE_CERT_NAME]);
  });

  it("a party that may not create the CA waits for the one another live process is creating, and fails at once when its lock is stale", async () => {
    const { copyFile, mkdir } = await import("node:fs/promises");
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const lock = join(dir, ".ca.lock");
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    await writeFile(lock, `${dead.stdout} ${hostname()} 0000`);
    await expect(ensureCertStore(dir, BRIDGE_CERT_NAME, { createCa: false })).rejects.toMatchObject({ code: "no-ca" });

    await writeFile(lock, `${process.pid} ${hostname()} 1111`); // a live process creating the CA
    const waiting = ensureCertStore(dir, BRIDGE_CERT_NAME, { createCa: false });
    const other = join(root, "other");
    await ensureCertStore(other, ORCHESTRATOR_CERT_NAME);
    await copyFile(join(other, "ca.key"), join(dir, "ca.key"));
    await copyFile(join(other, "ca.crt"), join(dir, "ca.crt"));
    await unlink(lock);
    const store = await waiting;
    expect(store.created).toEqual({ ca: false, cert: true });
    expect(store.caPem).toBe(await readFile(join(other, "ca.crt"), "utf8"));
  });

  it("a party that may not create the CA names the lock's live holder after waiting for it in vain", async () => {
    const { mkdir } = await import("node:fs/promises");
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const lock = join(dir, ".ca.lock");
    // A live holder whose lock stays fresh for the whole wait.
    const keepFresh = setInterval(() => void writeFile(lock, `${process.pid} ${hostname()} 2222`), 1_000);
    await writeFile(lock, `${process.pid} ${hostname()} 2222`);
    try {
      await expect(ensureCertStore(dir, BRIDGE_CERT_NAME, { createCa: false })).rejects.toThrow(
        `no CA in ${dir} (${join(dir, "ca.crt")} is missing; process ${process.pid} on ${hostname()} has held ${lock} for over 10 s without writing it (if that process is not running, remove the lock)), so`,
      );
    } finally {
      clearInterval(keepFresh);
    }
  }, 20_000);

  it("two parties racing on an empty directory end up with one CA", async () => {
    const [a, b] = await Promise.all([ensureCertStore(dir, ORCHESTRATOR_CERT_NAME), ensureCertStore(dir, BRIDGE_CERT_NAME)]);
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
    await expect(ensureCertStore(dir, BRIDGE_CERT_NAME)).rejects.toThrow(new RegExp(`${BRIDGE_CERT_NAME.replace(/\./g, "\\.")}\\.crt is not signed by the CA`));
  });

  it("without ca.key, a leaf of another CA gets the advice to copy a pair that CA issued, not to remove it for recreation", async () => {
    const other = join(root, "other");
    const foreign = await ensureCertStore(other, BRIDGE_CERT_NAME);
    await ensureCertStore(dir, ORCHESTRATOR_CERT_NAME);
    await unlink(join(dir, "ca.key"));
    await writeFile(join(dir, `${BRIDGE_CERT_NAME}.crt`), foreign.certPem);
    await writeFile(join(dir, `${BRIDGE_CERT_NAME}.key`), foreign.keyPem, { mode: 0o600 });
    const message = ((await ensureCertStore(dir, BRIDGE_CERT_NAME, { createCa: false }).catch((e: unknown) => e)) as Error).message;
    expect(message).toContain(`${BRIDGE_CERT_NAME}.crt is not signed by the CA`);
    expect(message).not.toContain("to have them recreated");
    expect(message).toContain(`orchestra-stdio certs init --name ${BRIDGE_CERT_NAME} --certs-dir <the orchestrator's cert dir>`);
  });

  it("refuses a ca.crt that is not a CA certificate (a party's certificate copied as ca.crt), naming it, and writes nothing", async () => {
    const source = await ensureCertStore(join(root, "other"), ORCHESTRATOR_CERT_NAME);
    await ensureCertStore(dir, ORCHESTRATOR_CERT_NAME);
    await writeFile(join(dir, "ca.crt"), source.certPem);
    await unlink(join(dir, "ca.key"));
    const message = ((await ensureCertStore(dir, BRIDGE_CERT_NAME, { createCa: false }).catch((e: unknown) => e)) as Error).message;
    expect(message).toBe(
      `${join(dir, "ca.crt")} is not a CA certificate (basicConstraints lacks CA:true, or keyUsage lacks keyCertSign): copy the orchestrator's CA certificate, the ca.crt of its cert store, not a party's certificate`,
    );
    await expect(stat(join(dir, `${BRIDGE_CERT_NAME}.crt`))).rejects.toThrow(/ENOENT/);
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

  it("reads the pair alongside the CA: an unreadable certificate is reported before an unreadable key", async () => {
    const { mkdir } = await import("node:fs/promises");
    await ensureCertStore(dir, ORCHESTRATOR_CERT_NAME);
    await mkdir(join(dir, `${BRIDGE_CERT_NAME}.crt`));
    await mkdir(join(dir, `${BRIDGE_CERT_NAME}.key`));
    for (let round = 0; round < 5; round++) {
      await expect(ensureCertStore(dir, BRIDGE_CERT_NAME)).rejects.toThrow(
        `cannot read ${join(dir, `${BRIDGE_CERT_NAME}.crt`)}: ${join(dir, `${BRIDGE_CERT_NAME}.crt`)} is not a regular file; put the file itself at that path`,
      );
    }
  });

  it("a ca.crt that is no certificate names the fix: another copy of the orchestrator's, or, in a store of our own, the ca.crt of its ca.key", async () => {
    const { mkdir } = await import("node:fs/promises");
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "ca.crt"), "not a certificate\n");
    await expect(ensureCertStore(dir, BRIDGE_CERT_NAME, { createCa: false })).rejects.toThrow(
      new RegExp(
        `^${join(dir, "ca.crt")} is not a PEM certificate \\(.+\\): copy the orchestrator's CA certificate again \\(the ca\\.crt of its cert store, default ~/\\.orchestra/certs on its host\\) into ${dir}$`,
      ),
    );
    await writeFile(join(dir, "ca.key"), "a key\n");
    await expect(ensureCertStore(dir, ORCHESTRATOR_CERT_NAME)).rejects.toThrow(`is not a PEM certificate`);
    await expect(ensureCertStore(dir, ORCHESTRATOR_CERT_NAME)).rejects.toThrow(
      `: restore the ca.crt that belongs to ${join(dir, "ca.key")}, or remove both to have a new CA created`,
    );
  });

  it("a store file that is a directory gets the fix: the file itself at that path", async () => {
    const { mkdir } = await import("node:fs/promises");
    await mkdir(join(dir, "ca.crt"), { recursive: true });
    await expect(ensureCertStore(dir, BRIDGE_CERT_NAME, { createCa: false })).rejects.toThrow(`${join(dir, "ca.crt")} is not a regular file; put the file itself at that path`);
  });

  it.skipIf(process.getuid?.() === 0)(skipTitle("a store file this user may not read names the permissions to check", "running as root, which reads any file"), async () => {
    const { chmod } = await import("node:fs/promises");
    await ensureCertStore(dir, BRIDGE_CERT_NAME);
    await chmod(join(dir, `${BRIDGE_CERT_NAME}.key`), 0o000);
    await expect(ensureCertStore(dir, BRIDGE_CERT_NAME)).rejects.toThrow(
      `this user may not read it: check the permissions of the file and of the directories above it (ls -ld ${dir} ${join(dir, `${BRIDGE_CERT_NAME}.key`)})`,
    );
  });

  it("without a CA, an unreadable pair read alongside it is no unhandled rejection: the missing CA is the error", async () => {
    const { mkdir } = await import("node:fs/promises");
    await mkdir(join(dir, `${BRIDGE_CERT_NAME}.crt`), { recursive: true });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      await expect(ensureCertStore(dir, BRIDGE_CERT_NAME, { createCa: false })).rejects.toThrow(/^no CA in /);
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });

  it("rejects names that cannot be file names or DNS names", async () => {
    for (const bad of ["", "../x", "a/b", "ca", ".hidden", "has space"]) {
      await expect(ensureCertStore(dir, bad)).rejects.toBeInstanceOf(CertStoreError);
    }
  });

  it.skipIf(opensslMissing !== undefined)(
    skipTitle("a pair issued by a CA that expires sooner than a year ends when the CA does (third new-user trial)", opensslMissing),
    async () => {
      await opensslEd25519Ca(dir, { name: "short-lived CA", days: 30, keyUsage: "keyCertSign,cRLSign" });
      const store = await ensureCertStore(dir, BRIDGE_CERT_NAME);
      const ca = new X509Certificate(await readFile(store.paths.ca));
      const leaf = new X509Certificate(await readFile(store.paths.cert));
      expect(leaf.checkIssued(ca)).toBe(true);
      expect(new Date(leaf.validTo).getTime()).toBe(new Date(ca.validTo).getTime());
    },
  );

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
