/**
 * Compiled tool argument validators kept between processes, as the code cache keeps the CLI's
 * scripts: a tool's `inputSchema` compiled by ajv is written as ajv's standalone code to
 * `<user cache>/orchestra-stdio/tool-validators/<key>.cjs`, and a later `serve` that meets the
 * same schema runs that file instead of loading ajv and compiling (docs/startup.md). The key
 * covers the schema (its JSON text, `$id` left out as when compiling), its dialect and the versions
 * of ajv, ajv-formats and this package; ajv's standalone code is the validator ajv compiled, so a
 * cached one gives the same verdicts and errors.
 *
 * Files are read and written as src/user-cache-file.ts says (this user's only, created
 * exclusively and renamed); a file that cannot be read, does not run or exports no function is a
 * miss, and the schema is compiled again. At most {@link MAX_VALIDATOR_FILES} files are kept (the
 * least recently written go). `ORCHESTRA_NO_CODE_CACHE=1` turns this cache off with the code cache.
 */
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { join } from "node:path";
import { userCacheDir } from "../user-cache-dir.js";
import type { CompiledSchema } from "./tool-args.js";
import { PACKAGE_VERSION } from "../version.js";
import { cachesTurnedOff, pruneFiles, readOwnFile, writeOwnFile } from "../user-cache-file.js";

/** Most validator files kept (a few KB each): one per distinct tool schema called. */
export const MAX_VALIDATOR_FILES = 512;

const require = createRequire(import.meta.url);
const FILE_SUFFIX = ".cjs";

/** The file name stem of a schema's validator: SHA-256 of the versions, the dialect and the schema's JSON text. */
export function validatorKey(dialect: string, schemaJson: string): string {
  const versions = ["ajv", "ajv-formats"].map((name) => `${name}@${(require(`${name}/package.json`) as { version: string }).version}`);
  return createHash("sha256")
    .update(JSON.stringify([PACKAGE_VERSION, ...versions, dialect, schemaJson]))
    .digest("hex");
}

/** The validators kept in one directory (normally {@link ToolValidatorCache.forUser}'s). */
export class ToolValidatorCache {
  /** @param dir the directory of the files (`<user cache>/orchestra-stdio/tool-validators` for users) */
  constructor(readonly dir: string) {}

  /** The user's cache, or undefined when the user turned it off (`ORCHESTRA_NO_CODE_CACHE`). */
  static forUser(): ToolValidatorCache | undefined {
    return cachesTurnedOff() ? undefined : new ToolValidatorCache(join(userCacheDir(), "tool-validators"));
  }

  private fileOf(key: string): string {
    return join(this.dir, `${key}${FILE_SUFFIX}`);
  }

  /** The validator kept for `key`, or undefined (none, or unusable). */
  read(key: string): CompiledSchema | undefined {
    const source = readOwnFile(this.fileOf(key));
    if (source === undefined) return undefined;
    try {
      const module = { exports: {} as unknown };
      // ajv's standalone code is a CommonJS module requiring ajv's run-time helpers and ajv-formats' formats.
      new Function("require", "module", "exports", source.toString("utf8"))(require, module, module.exports);
      const validate = (module.exports as { default?: unknown }).default ?? module.exports;
      return typeof validate === "function" ? (validate as CompiledSchema) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Keeps `source` (ajv's standalone code of a validator) for `key`; a failure is a later miss. */
  write(key: string, source: string): void {
    const file = this.fileOf(key);
    if (writeOwnFile(file, Buffer.from(source, "utf8"))) pruneFiles(this.dir, FILE_SUFFIX, MAX_VALIDATOR_FILES, file);
  }
}
