/**
 * The CLI's V8 code cache (src/cli/code-cache.ts): a start writes it, the next start's scripts
 * use it, a corrupt or foreign file is ignored and written anew, and a cache directory that cannot
 * be written changes nothing the client or the user sees.
 */
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BRIDGE_CERT_NAME, ensureCertStore } from "../../src/pki/store.js";
import { CLI, cliEnvironment, requireBuiltCli, ROOT, runCli, tempDir } from "../helpers/cli.js";

/** Prints `SCRIPT <cachedData> <url>` on stderr for each script the CLI's loader compiles. */
const SCRIPT_REPORT = `data:text/javascript,${encodeURIComponent(
  'import { subscribe } from "node:diagnostics_channel"; subscribe("orchestra-stdio:script", (m) => process.stderr.write("SCRIPT " + m.cachedData + " " + m.url + "\\n"));',
)}`;

interface Start {
  stdout: string;
  stderr: string;
  /** cachedData use of each script compiled (accepted, rejected, absent, off). */
  uses: string[];
  /** `<use> <url>` of each script compiled. */
  scripts: string[];
  code: number | null;
}

const INITIALIZE = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n`;

/**
 * `serve` answering `initialize` (nothing listens at the address), then stdin EOF (once
 * `beforeEof` has settled, when given).
 */
function serveOnce(cacheHome: string, certsDir: string, env: NodeJS.ProcessEnv = {}, beforeEof?: () => Promise<void>): Promise<Start> {
  return commandOnce(cacheHome, ["serve", "--orchestrator-addr", "127.0.0.1:9", "--certs-dir", certsDir], env, beforeEof);
}

/** A CLI command with the script report, `initialize` on its stdin, which ends after the first line of stdout (or at once when the command writes none before it exits). */
function commandOnce(cacheHome: string, args: string[], env: NodeJS.ProcessEnv = {}, beforeEof?: () => Promise<void>, cli = CLI): Promise<Start> {
  const child = spawn(process.execPath, ["--import", SCRIPT_REPORT, cli, ...args], {
    env: cliEnvironment({ XDG_CACHE_HOME: cacheHome, ORCHESTRA_LOG_LEVEL: "info", ORCHESTRA_LOG_FORMAT: "json", ...env }),
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    const first = !stdout.includes("\n");
    stdout += d;
    if (first && stdout.includes("\n")) void (beforeEof?.() ?? Promise.resolve()).then(() => child.stdin.end());
  });
  child.stdin.on("error", () => {}); // a command that does not read stdin may exit first
  child.stdin.write(
    `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n`,
  );
  return new Promise((resolve) =>
    child.on("close", (code) => {
      const scripts = stderr
        .split("\n")
        .filter((l) => l.startsWith("SCRIPT "))
        .map((l) => l.slice("SCRIPT ".length));
      resolve({ stdout, stderr: stderr.replace(/^SCRIPT .*\n/gm, ""), uses: scripts.map((l) => l.split(" ")[0]!), scripts, code });
    }),
  );
}

const cacheFiles = (cacheHome: string): string[] => {
  const dir = join(cacheHome, "orchestra-stdio", "code-cache");
  return existsSync(dir) ? readdirSync(dir).map((f) => join(dir, f)) : [];
};

/** The stderr lines above debug (`serve` logs JSON; its `info` start line is expected). */
const warnings = (stderr: string): string[] => stderr.split("\n").filter((l) => l.startsWith("{") && (JSON.parse(l) as { level: number }).level > 30);

describe("the CLI's code cache", () => {
  let work: { path: string; remove: () => Promise<void> };
  let certsDir: string;
  beforeAll(async () => {
    requireBuiltCli();
    work = await tempDir("orchestra-code-cache-");
    certsDir = join(work.path, "certs");
    await ensureCertStore(certsDir, BRIDGE_CERT_NAME);
  });
  afterAll(() => work?.remove());

  it("is written by a start and used by the next one", async () => {
    const home = join(work.path, "used");
    const first = await serveOnce(home, certsDir);
    expect(first.stdout).toContain('"id":1');
    expect(first.uses.length).toBeGreaterThan(5);
    expect(new Set(first.uses)).toEqual(new Set(["absent"]));
    expect(cacheFiles(home)).toHaveLength(1);
    const second = await serveOnce(home, certsDir);
    expect(second.stdout).toBe(first.stdout);
    expect(new Set(second.uses)).toEqual(new Set(["accepted"]));
    expect(warnings(second.stderr)).toEqual([]);
    // The generated CommonJS validators of the revision too, not only the bundle's scripts.
    expect(first.scripts.filter((l) => l.endsWith("/dist/gen/mcp/2025-06-18/validators-start.cjs"))).toEqual([expect.stringMatching(/^absent /)]);
    expect(second.scripts.filter((l) => l.endsWith("/dist/gen/mcp/2025-06-18/validators-start.cjs"))).toEqual([expect.stringMatching(/^accepted /)]);
  }, 60_000);

  it("keeps one file per install of a build: V8's data names the paths it was compiled at (stack traces)", async () => {
    const home = join(work.path, "installs");
    // A second install of the same build: a copy of dist/ beside the package's package.json and modules.
    const copy = join(work.path, "copy");
    mkdirSync(copy);
    execFileSync("cp", ["-a", join(ROOT, "dist"), join(ROOT, "package.json"), copy]);
    symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"));
    const serveArgs = ["serve", "--orchestrator-addr", "127.0.0.1:9", "--certs-dir", certsDir];
    const copyCli = join(copy, CLI.slice(ROOT.length));
    for (const cli of [CLI, copyCli]) expect((await commandOnce(home, serveArgs, {}, undefined, cli)).stdout).toContain('"id":1');
    expect(cacheFiles(home)).toHaveLength(2);
    for (const [cli, root] of [
      [CLI, ROOT],
      [copyCli, copy],
    ] as const) {
      const again = await commandOnce(home, serveArgs, {}, undefined, cli);
      expect(new Set(again.uses)).toEqual(new Set(["accepted"]));
      expect(again.scripts.every((s) => s.includes(`${pathToFileURL(join(root, "dist")).href}/`))).toBe(true);
    }
  });

  it("ignores a corrupt or foreign file and writes it anew", async () => {
    const home = join(work.path, "corrupt");
    await serveOnce(home, certsDir);
    const [file] = cacheFiles(home);
    const good = readFileSync(file!);
    // Garbage; then a damaged script's data (its checksum fails); then data that V8 rejects
    // (another build's or Node's: here V8's magic number changed, with a checksum to match).
    writeFileSync(file!, "not a cache");
    const garbage = await serveOnce(home, certsDir);
    expect(garbage.stdout).toContain('"id":1');
    expect(new Set(garbage.uses)).toEqual(new Set(["absent"]));
    expect(warnings(garbage.stderr)).toEqual([]);
    expect(readFileSync(file!).length).toBeGreaterThan(1000);
    expect((await serveOnce(home, certsDir)).uses.every((u) => u === "accepted")).toBe(true);

    const flipped = Buffer.from(good);
    flipped[flipped.length - 100] ^= 0xff;
    writeFileSync(file!, flipped);
    const damaged = await serveOnce(home, certsDir);
    expect(damaged.stdout).toContain('"id":1');
    expect(damaged.uses).toContain("absent");
    expect((await serveOnce(home, certsDir)).uses.every((u) => u === "accepted")).toBe(true);

    const foreign = Buffer.from(good);
    const magic = "orchestra-stdio code cache 1\n".length;
    const indexEnd = magic + 4 + foreign.readUInt32LE(magic);
    const index = JSON.parse(foreign.toString("utf8", magic + 4, indexEnd)) as { scripts: Record<string, [number, number, string]> };
    const [name, [offset, length, sum]] = Object.entries(index.scripts)[0]!;
    foreign[indexEnd + offset] ^= 0xff;
    const newSum = createHash("sha1")
      .update(foreign.subarray(indexEnd + offset, indexEnd + offset + length))
      .digest("hex")
      .slice(0, 16);
    index.scripts[name]![2] = newSum;
    expect(newSum.length).toBe(sum.length);
    const rewritten = Buffer.concat([foreign.subarray(0, magic + 4), Buffer.from(JSON.stringify(index)), foreign.subarray(indexEnd)]);
    writeFileSync(file!, rewritten);
    const rejected = await serveOnce(home, certsDir);
    expect(rejected.stdout).toContain('"id":1');
    expect(rejected.uses).toContain("rejected");
    expect((await serveOnce(home, certsDir)).uses.every((u) => u === "accepted")).toBe(true);
  }, 120_000);

  it("uses no file that others can write", async () => {
    const home = join(work.path, "shared");
    await serveOnce(home, certsDir);
    const [file] = cacheFiles(home);
    chmodSync(file!, 0o666);
    expect(new Set((await serveOnce(home, certsDir)).uses)).toEqual(new Set(["absent"]));
  }, 60_000);

  it("changes nothing visible when its directory cannot be written", async () => {
    const home = join(work.path, "blocked");
    mkdirSync(join(home, "orchestra-stdio"), { recursive: true });
    writeFileSync(join(home, "orchestra-stdio", "code-cache"), "a file where the directory would be");
    const reference = await serveOnce(join(work.path, "reference"), certsDir);
    const blocked = await serveOnce(home, certsDir);
    expect(blocked.code).toBe(0);
    expect(blocked.stdout).toBe(reference.stdout);
    expect(warnings(blocked.stderr)).toEqual([]);
    expect(new Set((await serveOnce(home, certsDir)).uses)).toEqual(new Set(["absent"]));
  }, 60_000);

  it("writes into no directory that others can write, and follows no link planted there", async () => {
    const home = join(work.path, "open-dir");
    const dir = join(home, "orchestra-stdio", "code-cache");
    mkdirSync(dir, { recursive: true });
    chmodSync(join(home, "orchestra-stdio"), 0o777);
    chmodSync(dir, 0o777);
    // What another user of the machine could plant: links from the names a write might use
    // (the cache file and a predictable temporary name) to a file of ours.
    const victim = join(work.path, "victim.txt");
    writeFileSync(victim, "precious data");
    const reference = await serveOnce(join(work.path, "open-dir-reference"), certsDir);
    const [name] = cacheFiles(join(work.path, "open-dir-reference")).map((f) => f.slice(f.lastIndexOf("/") + 1));
    for (const planted of [name!, `${name!}.1.tmp`]) symlinkSync(victim, join(dir, planted));
    const start = await serveOnce(home, certsDir);
    expect(start.stdout).toBe(reference.stdout);
    expect(warnings(start.stderr)).toEqual([]);
    expect(readFileSync(victim, "utf8")).toBe("precious data");
    // Nothing was written there: the planted links are as they were.
    expect(readdirSync(dir).sort()).toEqual([name!, `${name!}.1.tmp`].sort());
    expect(lstatSync(join(dir, name!)).isSymbolicLink()).toBe(true);
  }, 60_000);

  it("writes nothing below a directory that others can write without the sticky bit (they could swap what is in it)", async () => {
    const open = join(work.path, "open-parent");
    mkdirSync(open);
    chmodSync(open, 0o777);
    const start = await serveOnce(open, certsDir);
    expect(start.stdout).toContain('"id":1');
    expect(warnings(start.stderr)).toEqual([]);
    expect(readdirSync(open)).toEqual([]);
    chmodSync(open, 0o1777);
    await serveOnce(open, certsDir);
    expect(cacheFiles(open)).toHaveLength(1);
  }, 60_000);

  it("does not create a missing HOME", async () => {
    const home = join(work.path, "no-such-home");
    const start = await serveOnce(join(home, ".cache-unused"), certsDir, { XDG_CACHE_HOME: "", HOME: home });
    expect(start.stdout).toContain('"id":1');
    expect(existsSync(home)).toBe(false);
    // Nor does the embedded orchestrator's cert store: it uses a throwaway one and says why.
    const embedded = await runCli(["serve", "--log-format", "json"], INITIALIZE, { XDG_CACHE_HOME: "", HOME: home });
    expect(embedded.stdout).toContain('"id":1');
    expect(embedded.stderr).toContain(`${home} does not exist`);
    expect(existsSync(home)).toBe(false);
  }, 60_000);

  it("keeps the data another command of the build wrote while this one ran, also of the scripts both compile under other V8 flags", async () => {
    const home = join(work.path, "merged");
    const certsShow = () => commandOnce(home, ["certs", "show", "--certs-dir", certsDir]);
    // `certs show` runs (and writes the file) after `serve` has read it and before `serve` writes it at its exit.
    let meanwhile: Start | undefined;
    const serve = await serveOnce(home, certsDir, {}, async () => {
      meanwhile = await certsShow();
    });
    expect(serve.stdout).toContain('"id":1');
    expect(meanwhile!.code).toBe(0);
    expect(new Set(meanwhile!.uses)).toEqual(new Set(["absent"]));
    // The file `serve` wrote last still has `certs show`'s data: of the scripts only it compiles,
    // and of those both compile (the cert store's), which `serve` compiles after setting a V8 flag.
    expect(new Set((await certsShow()).uses)).toEqual(new Set(["accepted"]));
  }, 60_000);

  it.skipIf(process.platform === "win32")(
    "ignores a FIFO at the file's path instead of waiting for a writer, and replaces it",
    async () => {
      const home = join(work.path, "fifo");
      const reference = await serveOnce(home, certsDir);
      const [file] = cacheFiles(home);
      rmSync(file!);
      execFileSync("mkfifo", ["-m", "600", file!]);
      const withFifo = await serveOnce(home, certsDir);
      expect(withFifo.code).toBe(0);
      expect(withFifo.stdout).toBe(reference.stdout);
      expect(new Set(withFifo.uses)).toEqual(new Set(["absent"]));
      expect(warnings(withFifo.stderr)).toEqual([]);
      expect(lstatSync(file!).isFile()).toBe(true);
      expect(new Set((await serveOnce(home, certsDir)).uses)).toEqual(new Set(["accepted"]));
    },
    60_000,
  );

  it("keeps at most 8 files: a write removes the least recently written others", async () => {
    const home = join(work.path, "pruned");
    const dir = join(home, "orchestra-stdio", "code-cache");
    mkdirSync(dir, { recursive: true });
    // Ten files of other builds, written 1..10 days ago; and a file that is not the cache's.
    const day = 86_400;
    const now = Date.now() / 1000;
    for (let i = 1; i <= 10; i++) {
      const file = join(dir, `other${i}-node0-x64-00000000.bin`);
      writeFileSync(file, "other build");
      utimesSync(file, now - i * day, now - i * day);
    }
    writeFileSync(join(dir, "notes.txt"), "not a cache file");
    const start = await serveOnce(home, certsDir);
    expect(start.stdout).toContain('"id":1');
    const left = readdirSync(dir).sort();
    expect(left.filter((f) => f.endsWith(".bin"))).toHaveLength(8);
    // This build's file and the seven most recent others stay; the three oldest are gone.
    expect(left).toEqual(expect.arrayContaining(["notes.txt", ...[1, 2, 3, 4, 5, 6, 7].map((i) => `other${i}-node0-x64-00000000.bin`)]));
    for (const i of [8, 9, 10]) expect(left).not.toContain(`other${i}-node0-x64-00000000.bin`);
    expect((await serveOnce(home, certsDir)).uses.every((u) => u === "accepted")).toBe(true);
  }, 60_000);

  it("is not used with ORCHESTRA_NO_CODE_CACHE=1, and the variable draws no warning", async () => {
    const home = join(work.path, "off");
    const off = await serveOnce(home, certsDir, { ORCHESTRA_NO_CODE_CACHE: "1" });
    expect(off.stdout).toContain('"id":1');
    expect(new Set(off.uses)).toEqual(new Set(["off"]));
    expect(cacheFiles(home)).toEqual([]);
    expect(warnings(off.stderr)).toEqual([]);
  }, 60_000);
});
