/**
 * The embedded orchestrator's cached cert store (src/pki/embedded.ts): made once, reused, checked
 * before each use and made anew when it fails a check.
 */
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
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
    ["a ca.crt that is no certificate", (dir: string) => writeFile(path.join(dir, "ca.crt"), "not a certificate\n"), /ca\.crt is not a PEM certificate/],
    [
      "a ca.key that is not the CA's",
      (dir: string) =>
        writeFile(path.join(dir, "ca.key"), "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF\n-----END PRIVATE KEY-----\n"),
      /ca\.key is not the key of ca\.crt/,
    ],
    ["a missing ca.key", (dir: string) => rm(path.join(dir, "ca.key")), /ca\.crt or ca\.key is missing/],
    ["a directory others can read", (dir: string) => chmod(dir, 0o755), /accessible by group\/others/],
  ])("is made anew on %s, with one warning saying what was wrong", async (_what, spoil, reason) => {
    const { dir } = (await openEmbeddedStore(cache))!;
    const ca = await caOf(dir);
    await spoil(dir);
    const warnings: string[] = [];
    expect(await openEmbeddedStore(cache, (m) => warnings.push(m))).toEqual({ dir, createdCa: true });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(dir);
    expect(warnings[0]).toMatch(reason);
    expect(warnings[0]).toMatch(/deleted/);
    expect(await caOf(dir)).not.toBe(ca);
    await expectSoundStore(dir, NAMES);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  });

  it("answers undefined (use a throwaway store) when the cache directory cannot be made", async () => {
    const file = path.join(cache, "a-file");
    await writeFile(file, "");
    const warnings: string[] = [];
    expect(await openEmbeddedStore(path.join(file, "orchestra-stdio"), (m) => warnings.push(m))).toBeUndefined();
    expect(warnings.join("\n")).toMatch(/cannot be kept there: .*a-file is not a directory; a throwaway store .*: remove or rename /);
  });

  it("warns nothing when it makes the store for the first time or reuses it", async () => {
    const warnings: string[] = [];
    await openEmbeddedStore(cache, (m) => warnings.push(m));
    await openEmbeddedStore(cache, (m) => warnings.push(m));
    expect(warnings).toEqual([]);
  });

  it("leaves another user's store alone and warns once that a throwaway store is used", async () => {
    const { dir } = (await openEmbeddedStore(cache))!;
    const ca = await caOf(dir);
    const uid = vi.spyOn(process, "getuid").mockReturnValue((process.getuid?.() ?? 0) + 1);
    try {
      const warnings: string[] = [];
      expect(await openEmbeddedStore(cache, (m) => warnings.push(m))).toBeUndefined();
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(dir);
      expect(warnings[0]).toMatch(/another user.*throwaway.*XDG_CACHE_HOME/);
    } finally {
      uid.mockRestore();
    }
    expect(await caOf(dir)).toBe(ca);
  });

  it("uses no cache directory that others can write, and says so: the directory, chmod go-w, XDG_CACHE_HOME", async () => {
    await chmod(cache, 0o777);
    const warnings: string[] = [];
    expect(await openEmbeddedStore(cache, (m) => warnings.push(m))).toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`cert store ${path.join(cache, "embedded-certs")} cannot be kept there: ${cache} is writable by group/others`);
    expect(warnings[0]).toContain("chmod go-w");
    expect(warnings[0]).toContain("XDG_CACHE_HOME");
    expect(warnings[0]).not.toContain("--certs-dir");
    expect(existsSync(path.join(cache, "embedded-certs"))).toBe(false);
  });

  it("a cache directory that is a file or a link is named as such, with advice that fits (not chmod)", async () => {
    const file = path.join(cache, "a-file");
    await writeFile(file, "not a directory");
    const warnings: string[] = [];
    expect(await openEmbeddedStore(file, (m) => warnings.push(m))).toBeUndefined();
    expect(warnings[0]).toContain(`cannot be kept there: ${file} is not a directory; a throwaway store (a new CA) is made on every start: remove or rename ${file}`);
    expect(warnings[0]).not.toContain("chmod");
    const link = path.join(cache, "a-link");
    const target = path.join(cache, "target");
    await mkdir(target, { mode: 0o700 });
    await symlink(target, link);
    warnings.length = 0;
    expect(await openEmbeddedStore(link, (m) => warnings.push(m))).toBeUndefined();
    expect(warnings[0]).toContain(`${link} is a symbolic link (not followed)`);
    expect(warnings[0]).not.toContain("chmod");
  });

  it("uses no cache directory below one that others can write without the sticky bit", async () => {
    const open = path.join(cache, "open");
    await mkdir(open, { mode: 0o777 });
    await chmod(open, 0o777);
    const below = path.join(open, "orchestra-stdio");
    const warnings: string[] = [];
    expect(await openEmbeddedStore(below, (m) => warnings.push(m))).toBeUndefined();
    expect(warnings[0]).toContain(`${open} is writable by group/others without the sticky bit`);
    expect(existsSync(below)).toBe(false);
    await chmod(open, 0o1777);
    expect(await openEmbeddedStore(below)).toBeDefined();
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
