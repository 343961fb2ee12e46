/**
 * The embedded orchestrator's cached cert store (src/pki/embedded.ts): made once, reused, checked
 * before each use and made anew when it fails a check.
 */
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openEmbeddedStore, userCacheDir } from "../../src/pki/embedded.js";
import { BRIDGE_CERT_NAME, ORCHESTRATOR_CERT_NAME } from "../../src/pki/store.js";
import { expectSoundStore, writeExpiredPair } from "../helpers/cert-store.js";

const NAMES = [ORCHESTRATOR_CERT_NAME, BRIDGE_CERT_NAME];

describe("embedded cert store", () => {
  let cache: string;
  beforeEach(async () => {
    cache = await mkdtemp(path.join(tmpdir(), "orchestra-embedded-"));
  });
  afterEach(() => rm(cache, { recursive: true, force: true }));

  const caOf = (dir: string) => readFile(path.join(dir, "ca.crt"), "utf8");

  it("is made once, private, with a CA and both pairs, and then reused as it is", async () => {
    const first = await openEmbeddedStore(cache);
    expect(first).toEqual({ dir: path.join(cache, "embedded-certs"), createdCa: true });
    await expectSoundStore(first!.dir, NAMES);
    expect((await stat(first!.dir)).mode & 0o777).toBe(0o700);
    const ca = await caOf(first!.dir);
    const keyMtime = (await stat(path.join(first!.dir, `${BRIDGE_CERT_NAME}.key`))).mtimeMs;
    const again = await openEmbeddedStore(cache);
    expect(again).toEqual({ dir: first!.dir, createdCa: false });
    expect(await caOf(again!.dir)).toBe(ca);
    expect((await stat(path.join(again!.dir, `${BRIDGE_CERT_NAME}.key`))).mtimeMs).toBe(keyMtime);
  });

  it("bridges starting together make one CA", async () => {
    const stores = await Promise.all([1, 2, 3, 4].map(() => openEmbeddedStore(cache)));
    expect(new Set(stores.map((s) => s?.dir)).size).toBe(1);
    await expectSoundStore(stores[0]!.dir, NAMES);
    expect(await openEmbeddedStore(cache)).toEqual({ dir: stores[0]!.dir, createdCa: false });
  });

  it("issues an expired pair again under the same CA", async () => {
    const { dir } = (await openEmbeddedStore(cache))!;
    const ca = await caOf(dir);
    await writeExpiredPair(dir, BRIDGE_CERT_NAME);
    expect(await openEmbeddedStore(cache)).toEqual({ dir, createdCa: false });
    expect(await caOf(dir)).toBe(ca);
    await expectSoundStore(dir, NAMES);
  });

  it.each([
    ["a ca.crt that is no certificate", (dir: string) => writeFile(path.join(dir, "ca.crt"), "not a certificate\n")],
    ["a ca.key that is not the CA's", (dir: string) => writeFile(path.join(dir, "ca.key"), "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF\n-----END PRIVATE KEY-----\n")],
    ["a missing ca.key", (dir: string) => rm(path.join(dir, "ca.key"))],
    ["a directory others can read", (dir: string) => chmod(dir, 0o755)],
  ])("is made anew on %s", async (_what, spoil) => {
    const { dir } = (await openEmbeddedStore(cache))!;
    const ca = await caOf(dir);
    await spoil(dir);
    expect(await openEmbeddedStore(cache)).toEqual({ dir, createdCa: true });
    expect(await caOf(dir)).not.toBe(ca);
    await expectSoundStore(dir, NAMES);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  });

  it("answers undefined (use a throwaway store) when the cache directory cannot be made", async () => {
    const file = path.join(cache, "a-file");
    await writeFile(file, "");
    const warnings: string[] = [];
    expect(await openEmbeddedStore(path.join(file, "orchestra-stdio"), (m) => warnings.push(m))).toBeUndefined();
    expect(warnings.join("\n")).toMatch(/cannot be used .*throwaway/);
  });

  it("lives under $XDG_CACHE_HOME, else ~/.cache", () => {
    const saved = process.env["XDG_CACHE_HOME"];
    try {
      process.env["XDG_CACHE_HOME"] = "/x/cache";
      expect(userCacheDir()).toBe("/x/cache/orchestra-stdio");
      process.env["XDG_CACHE_HOME"] = "relative";
      expect(userCacheDir()).toMatch(/\/\.cache\/orchestra-stdio$/);
    } finally {
      if (saved === undefined) delete process.env["XDG_CACHE_HOME"];
      else process.env["XDG_CACHE_HOME"] = saved;
    }
  });
});
