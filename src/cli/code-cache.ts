/**
 * V8 code cache of the CLI bundle's scripts (src/cli/script-loader.ts): what Node 22's
 * `module.enableCompileCache` does, for Node 20. A start hands V8 the bytecode an earlier start
 * compiled for each script (`vm.Script` `cachedData`), so that V8 deserializes it instead of
 * parsing and compiling the source again (docs/startup.md "Code cache").
 *
 * One file per bundle and install location, Node and V8 flags: `<user cache>/orchestra-stdio/code-cache/<key>.bin`
 * (`$XDG_CACHE_HOME`, else `~/.cache`). Layout: {@link MAGIC}; the byte length of the index
 * (uint32, little-endian); the index, JSON `{ key, scripts: { <entry>: [offset, length, sha1] } }`
 * (an entry is a script's path relative to dist/cli/, followed by the V8 flags set at run time
 * that were in force when it was compiled, if any: {@link CodeCache.entryName}; offsets from the
 * end of the index, `sha1` the first 16 hex digits of the data's SHA-1); the data of each entry. Read once, when the CLI starts; used only when this user owns the file and
 * nobody else can write it.
 *
 * Written, to a temporary file of a random name created exclusively (a link planted there is not
 * followed) and renamed over the old one, only into a directory this user owns and nobody else
 * can write, {@link WRITE_DELAY_MS} after a script was
 * compiled without usable data (none, rejected by V8, or failing its checksum), or at the
 * process's exit if that comes first: V8's data of every script the process compiled, made then
 * (so that it holds the functions that ran, not only those compiled with the script), and, for
 * the scripts this process did not load, the data of the file as it is at the write (another
 * process of the same bundle, e.g. `orchestrator` beside `serve`, may have written it since this
 * one read it), else as it was read. Never fatal and never reported (stdout
 * may be MCP's, stderr the user's log): a missing, unreadable, corrupt or foreign file, data V8
 * rejects, or a directory that cannot be written leave the scripts compiled from source, as with
 * no cache. `ORCHESTRA_NO_CODE_CACHE=1` (or `true`, `yes`) turns it off (docs/cli.md).
 */
import { createHash } from "node:crypto";
import { channel } from "node:diagnostics_channel";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Script } from "node:vm";
import { userCacheDir } from "../user-cache-dir.js";
import { cachesTurnedOff, pruneFiles, readOwnFile, writeOwnFile } from "../user-cache-file.js";
import { V8_FLAGS_CHANNEL, type V8FlagChange } from "./v8-flags.js";

const MAGIC = Buffer.from("orchestra-stdio code cache 1\n", "latin1");
/**
 * Most cache files kept in the directory (one per bundle, Node and options: installs of several
 * versions, `npx` caches and Node upgrades each add one, 0.3-1.5 MB): a write removes the
 * least recently written files beyond it.
 */
export const MAX_CACHE_FILES = 8;
/** Milliseconds between a script compiled without usable data and the write of the cache. */
export const WRITE_DELAY_MS = 2_000;
/** What happened to a script's cached data: V8 used it, V8 rejected it, or there was none (or none that passed its checksum). */
export type CachedDataUse = "accepted" | "rejected" | "absent";

/** A script's data as read from the file, and the checksum the file gives for it. */
interface Stored {
  readonly data: Buffer;
  readonly sum: unknown;
}

interface Compiled {
  readonly script: Script;
  /** How many announced flag changes were in force when it was compiled. */
  readonly epoch: number;
}

/** First 16 hex digits of the SHA-1 of `data`. */
const digest = (data: Uint8Array): string => createHash("sha1").update(data).digest("hex").slice(0, 16);

/**
 * Short hash of the bundle's location and of the V8 and Node options this process was started
 * with (V8's own flag hash covers the rest). The location: V8 keeps the script name it compiled
 * with in the data, so that two installs of one build sharing a file named each other's paths in
 * stack traces.
 */
function locationAndOptionsHash(location: string): string {
  return createHash("sha1")
    .update(`${location}\n${process.execArgv.join("\0")}\n${process.env["NODE_OPTIONS"] ?? ""}`)
    .digest("hex")
    .slice(0, 8);
}

/** Parses a cache file; undefined when it is not one of ours for `key`. */
function parse(file: Buffer, key: string): Map<string, Stored> | undefined {
  if (file.length < MAGIC.length + 4 || !file.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  const indexLength = file.readUInt32LE(MAGIC.length);
  const dataStart = MAGIC.length + 4 + indexLength;
  if (dataStart > file.length) return undefined;
  let index: { key?: unknown; scripts?: Record<string, [number, number, string]> };
  try {
    index = JSON.parse(file.toString("utf8", MAGIC.length + 4, dataStart)) as typeof index;
  } catch {
    return undefined;
  }
  if (index.key !== key || typeof index.scripts !== "object" || index.scripts === null) return undefined;
  const entries = new Map<string, Stored>();
  for (const [name, entry] of Object.entries(index.scripts)) {
    if (!Array.isArray(entry)) continue;
    const [offset, length, sum] = entry;
    if (!Number.isInteger(offset) || !Number.isInteger(length) || offset < 0 || length <= 0 || dataStart + offset + length > file.length) continue;
    // The checksum is checked when the script is compiled: only the data a start uses is hashed.
    entries.set(name, { data: file.subarray(dataStart + offset, dataStart + offset + length), sum });
  }
  return entries;
}

/** The CLI's code cache for one bundle; {@link CodeCache.open} makes it. */
export class CodeCache {
  /** Data read from the file, by script. */
  private readonly stored: Map<string, Stored>;
  private readonly compiled = new Map<string, Compiled>();
  private readonly flagChanges: V8FlagChange[] = [];
  private writeTimer: NodeJS.Timeout | undefined;
  private writePending = false;

  private constructor(
    private readonly file: string,
    private readonly key: string,
    stored: Map<string, Stored> | undefined,
  ) {
    this.stored = stored ?? new Map();
    channel(V8_FLAGS_CHANNEL).subscribe((message) => this.flagChanges.push(message as V8FlagChange));
    process.once("exit", () => {
      if (this.writePending) this.write();
    });
  }

  /**
   * Opens the cache of the bundle `bundleHash` at `location` (the URL of its dist/cli/) for this
   * Node; undefined when it is turned off (`ORCHESTRA_NO_CODE_CACHE`).
   */
  static open(bundleHash: string, location: string): CodeCache | undefined {
    if (cachesTurnedOff()) return undefined;
    const key = `${bundleHash}-node${process.versions.node}-${process.arch}-${locationAndOptionsHash(location)}`;
    const file = join(userCacheDir(), "code-cache", `${key}.bin`);
    return new CodeCache(file, key, readCacheFile(file, key));
  }

  /** Compiles `source` (the script `name`, a path relative to dist/cli/) with its cached data when there is usable data. */
  compile(name: string, source: string, filename: string): { script: Script; cachedData: CachedDataUse } {
    const epoch = this.flagChanges.length;
    const entry = this.entryName(name, epoch);
    const stored = this.stored.get(entry);
    const cachedData = stored && stored.sum === digest(stored.data) ? stored.data : undefined;
    const script = new Script(source, { filename, ...(cachedData ? { cachedData } : {}) });
    this.compiled.set(entry, { script, epoch });
    const use: CachedDataUse = !cachedData ? "absent" : script.cachedDataRejected === true ? "rejected" : "accepted";
    if (use !== "accepted") this.scheduleWrite();
    return { script, cachedData: use };
  }

  /**
   * The index's name for the data of script `name` made under the first `epoch` announced flag
   * changes: `name`, then each change's flag (`chunks/store-X.js --semi-space-growth-factor=1`).
   * V8 accepts data only under the flags it was made under, and commands set different flags
   * (`serve` sets some, `orchestrator` none) at different times of a start: each flag state a
   * script was compiled under keeps its own data, so that they do not replace each other's.
   */
  private entryName(name: string, epoch: number): string {
    return epoch === 0 ? name : [name, ...this.flagChanges.slice(0, epoch).map((change) => change.set)].join(" ");
  }

  private scheduleWrite(): void {
    this.writePending = true;
    if (this.writeTimer) return;
    this.writeTimer = setTimeout(() => {
      this.writeTimer = undefined;
      this.write();
    }, WRITE_DELAY_MS).unref();
  }

  /** Writes the cache file (see the module's description); failures leave the old file. */
  private write(): void {
    this.writePending = false;
    try {
      // Entries this process did not compile keep their data: as the file is now (another
      // process of this build may have written it since this one read it), else as it was read.
      const data = new Map<string, Buffer>();
      for (const entries of [readCacheFile(this.file, this.key), this.stored]) {
        for (const [name, old] of entries ?? []) if (!this.compiled.has(name) && !data.has(name) && old.sum === digest(old.data)) data.set(name, old.data);
      }
      this.cachedDataByEpoch(data);
      const scripts: Record<string, [number, number, string]> = {};
      let offset = 0;
      for (const [name, d] of data) {
        scripts[name] = [offset, d.length, digest(d)];
        offset += d.length;
      }
      const index = Buffer.from(JSON.stringify({ key: this.key, scripts }), "utf8");
      const length = Buffer.alloc(4);
      length.writeUInt32LE(index.length);
      if (!writeOwnFile(this.file, Buffer.concat([MAGIC, length, index, ...data.values()]))) return;
      pruneFiles(dirname(this.file), ".bin", MAX_CACHE_FILES, this.file);
    } catch {
      // Not writable, no space, V8 refused: the next start compiles from source as this one did.
    }
  }

  /**
   * Adds V8's data for every compiled script to `data`, each made under the flags in force when
   * it was compiled: from the latest flags back to the first, undoing one announced change at a
   * time, then setting them all again.
   */
  private cachedDataByEpoch(data: Map<string, Buffer>): void {
    const changes = this.flagChanges.length;
    const lowest = Math.min(changes, ...[...this.compiled.values()].map((c) => c.epoch));
    const setFlags = lowest < changes ? (createRequire(import.meta.url)("node:v8") as typeof import("node:v8")).setFlagsFromString : undefined;
    try {
      for (let epoch = changes; epoch >= lowest; epoch--) {
        if (epoch < changes) setFlags!(this.flagChanges[epoch]!.before);
        for (const [name, c] of this.compiled) if (c.epoch === epoch) data.set(name, c.script.createCachedData());
      }
    } finally {
      for (let epoch = lowest; epoch < changes; epoch++) setFlags!(this.flagChanges[epoch]!.set);
    }
  }
}

/** The cache file's entries ({@link readOwnFile}: this user's, nobody else's to write), else undefined. */
function readCacheFile(file: string, key: string): Map<string, Stored> | undefined {
  const bytes = readOwnFile(file);
  try {
    return bytes === undefined ? undefined : parse(bytes, key);
  } catch {
    return undefined;
  }
}
