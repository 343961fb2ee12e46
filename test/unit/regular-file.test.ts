/** Store files and the code cache are read without waiting on a special file at their path (src/regular-file.ts). */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BRIDGE_CERT_NAME, CertStoreError, ensureCertStore } from "../../src/pki/store.js";
import { readRegularFile } from "../../src/regular-file.js";

const mkfifo = (path: string) => execFileSync("mkfifo", ["-m", "600", path]);

describe.skipIf(process.platform === "win32")("reading a file that must be regular", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "orchestra-regular-file-"));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("reads a regular file, and rejects a missing one with ENOENT, a FIFO or a directory with ENOTREG at once", async () => {
    await writeFile(join(dir, "plain"), "text é");
    expect(await readRegularFile(join(dir, "plain"))).toBe("text é");
    await expect(readRegularFile(join(dir, "missing"))).rejects.toMatchObject({ code: "ENOENT" });
    mkfifo(join(dir, "fifo"));
    await expect(readRegularFile(join(dir, "fifo"))).rejects.toMatchObject({ code: "ENOTREG" });
    await expect(readRegularFile(dir)).rejects.toMatchObject({ code: "ENOTREG" });
  });

  it("a FIFO in place of a cert store file is a CertStoreError naming it, not a wait for a writer", async () => {
    const store = join(dir, "certs");
    await ensureCertStore(store, BRIDGE_CERT_NAME);
    for (const name of ["ca.crt", `${BRIDGE_CERT_NAME}.key`]) {
      const file = join(store, name);
      await unlink(file);
      mkfifo(file);
      const attempt = ensureCertStore(store, BRIDGE_CERT_NAME, { createCa: false });
      await expect(attempt).rejects.toBeInstanceOf(CertStoreError);
      await expect(attempt).rejects.toThrow(`${file} is not a regular file`);
      await unlink(file);
      await rm(store, { recursive: true, force: true });
      await ensureCertStore(store, BRIDGE_CERT_NAME);
    }
  });
});
