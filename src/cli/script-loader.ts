/**
 * Runs the CLI bundle (scripts/bundle-cli.mjs): the package's `bin`, dist/cli/main.cjs, is this
 * loader and the bundle's manifest, a CommonJS file (a start runs no ES module through Node's
 * ES module loader, docs/startup.md); the bundle's code is in dist/cli/chunks/, one script per
 * output file of esbuild. Loaded through `vm.Script` rather than Node's ES module loader so that
 * V8's code cache (src/cli/code-cache.ts) applies: Node 20 compiles every ES module from source
 * at every start (docs/startup.md "Code cache").
 *
 * Each script is an ES module of the bundle turned into a function expression,
 * `(function (exports, require, module, __import, __metaUrl) { "use strict"; … })`: its static
 * imports are `require()` calls at its top, run before its body as ES imports are; its dynamic
 * `import()`s are `__import()` calls; `import.meta.url` is `__metaUrl`.
 * - `require(specifier)`: a script of the bundle (specifier relative to the calling script), an
 *   ES module outside the bundle that the bundle imports statically (imported before the script
 *   that needs it runs: {@link BundleManifest.scripts}), else Node's `require` (Node's modules).
 * - `__import(specifier)`: a script of the bundle, else Node's `import()` (packages left outside
 *   the bundle, the modules `--tools` names), relative specifiers resolved against the script's URL.
 * Every script runs once per process, as an ES module does; one that threw throws the same error
 * to every later import. Each script compiled is announced on {@link SCRIPT_CHANNEL}.
 */
import { channel } from "node:diagnostics_channel";
import { readFileSync } from "node:fs";
import Module, { createRequire } from "node:module";
import { dirname, posix } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Script } from "node:vm";
import { exitOnInstallationFault } from "../installation.js";
import { type CachedDataUse, CodeCache } from "./code-cache.js";

/** diagnostics_channel name: `{ url, cachedData }` for each script compiled (`cachedData`: a {@link CachedDataUse}, or `off`). */
export const SCRIPT_CHANNEL = "orchestra-stdio:script";

/** What scripts/bundle-cli.mjs writes into dist/cli/main.cjs. */
export interface BundleManifest {
  /** Digest of the bundle's scripts (hex): part of the code cache's key. */
  readonly hash: string;
  /** The script that runs the CLI (path relative to dist/cli/). */
  readonly entry: string;
  /** Each script (path relative to dist/cli/) → the ES modules outside the bundle that it and the scripts it requires import statically. */
  readonly scripts: Readonly<Record<string, readonly string[]>>;
}

type ScriptFunction = (
  exports: object,
  require: (specifier: string) => unknown,
  module: { exports: object },
  importer: (specifier: string) => Promise<unknown>,
  metaUrl: string,
) => void;

interface Instance {
  readonly module: { exports: object };
  failed?: { error: unknown };
}

const isRelative = (specifier: string): boolean => specifier.startsWith("./") || specifier.startsWith("../");

class Bundle {
  /** dist/cli/ as a URL: script names are URL paths relative to it, on every platform. */
  private readonly cliUrl: URL;
  private readonly cache: CodeCache | undefined;
  private readonly nodeRequire: NodeJS.Require;
  private readonly instances = new Map<string, Instance>();
  /** Namespaces of the ES modules outside the bundle that scripts import statically. */
  private readonly externals = new Map<string, unknown>();
  private readonly announce = channel(SCRIPT_CHANNEL);

  constructor(
    private readonly mainUrl: string,
    private readonly manifest: BundleManifest,
  ) {
    this.cliUrl = new URL(".", mainUrl);
    this.cache = CodeCache.open(manifest.hash, this.cliUrl.href);
    this.nodeRequire = createRequire(mainUrl);
    if (this.cache) this.cacheGeneratedCommonJs(this.cache);
  }

  /**
   * Has the generated CommonJS modules of dist/gen/ (`*.cjs`: the MCP validators of each
   * revision, the JSON Schema dialects' meta-schema validators; 30-800 KB each, required
   * synchronously when first used) compiled with the code cache as well, as CommonJS runs them
   * (the same wrapper and arguments); every other CommonJS module is left to Node. Their content
   * is part of the bundle's digest (scripts/bundle-cli.mjs). Each is announced on
   * {@link SCRIPT_CHANNEL} like a script of the bundle.
   */
  private cacheGeneratedCommonJs(cache: CodeCache): void {
    const genUrl = new URL("../gen/", this.cliUrl).href;
    const announce = this.announce;
    type Compile = (this: Module, content: string, filename: string) => unknown;
    const prototype = Module.prototype as unknown as { _compile: Compile };
    const nodeCompile = prototype._compile;
    prototype._compile = function (content, filename) {
      const url = filename.endsWith(".cjs") ? pathToFileURL(filename).href : "";
      if (!url.startsWith(genUrl)) return nodeCompile.call(this, content, filename);
      const wrapped = `(function (exports, require, module, __filename, __dirname) { ${content}\n})`;
      const { script, cachedData } = cache.compile(`../gen/${url.slice(genUrl.length)}`, wrapped, filename);
      if (announce.hasSubscribers) announce.publish({ url, cachedData });
      const run = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: Module, filename: string, dirname: string) => unknown;
      return run.call(this.exports, this.exports, createRequire(filename), this, filename, dirname(filename));
    };
  }

  /** The script `name` and what it needs, as `import()` gives them. */
  async importScript(name: string): Promise<unknown> {
    // As Node's loader does (it reads files first), the script runs in a later turn, not within
    // the `import()` call: what the caller does next (e.g. writing an answer) goes first.
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (const specifier of this.manifest.scripts[name] ?? []) {
      if (!this.externals.has(specifier)) {
        const namespace = (await import(specifier).catch((error: unknown) => {
          exitOnInstallationFault(error);
          throw error;
        })) as Record<string, unknown>;
        // As esbuild's interop reads an ES module: named exports, `default` the default export.
        this.externals.set(specifier, { __esModule: true, ...namespace });
      }
    }
    return this.requireScript(name);
  }

  private requireScript(name: string): unknown {
    const known = this.instances.get(name);
    if (known) {
      if (known.failed) throw known.failed.error;
      return known.module.exports;
    }
    const instance: Instance = { module: { exports: {} } };
    this.instances.set(name, instance);
    const url = new URL(name, this.cliUrl).href;
    const filename = fileURLToPath(url);
    try {
      // esbuild writes ASCII (non-ASCII characters escaped): latin1 is exact and the cheapest decoding.
      const source = readFileSync(filename, "latin1");
      const { script, cachedData } = this.cache ? this.cache.compile(name, source, filename) : { script: new Script(source, { filename }), cachedData: "off" as const };
      if (this.announce.hasSubscribers) this.announce.publish({ url, cachedData: cachedData satisfies CachedDataUse | "off" });
      const run = script.runInThisContext() as ScriptFunction;
      run.call(
        undefined,
        instance.module.exports,
        (specifier) => this.require(name, specifier),
        instance.module,
        (specifier) => this.import(name, url, specifier),
        url,
      );
    } catch (error) {
      // A script of the bundle that is gone, or a dependency it cannot find: the installation's
      // one-line fault and exit 1, wherever in a session it happens (docs/cli.md "Exit status").
      exitOnInstallationFault(error);
      instance.failed = { error };
      throw error;
    }
    return instance.module.exports;
  }

  /** The script a specifier names from the script `from`, if it is one. */
  private scriptNamed(from: string, specifier: string): string | undefined {
    if (!isRelative(specifier)) return undefined;
    const name = posix.join(posix.dirname(from), specifier);
    return Object.hasOwn(this.manifest.scripts, name) ? name : undefined;
  }

  private require(from: string, specifier: string): unknown {
    const name = this.scriptNamed(from, specifier);
    if (name !== undefined) return this.requireScript(name);
    if (this.externals.has(specifier)) return this.externals.get(specifier);
    return this.nodeRequire(specifier);
  }

  private import(from: string, fromUrl: string, specifier: string): Promise<unknown> {
    const name = this.scriptNamed(from, specifier);
    if (name !== undefined) return this.importScript(name);
    return import(isRelative(specifier) ? new URL(specifier, fromUrl).href : specifier);
  }
}

/**
 * Runs the CLI: the bundle's entry script (src/cli/main.ts), once the ES modules it needs are
 * imported; settles when its `finished` export does.
 */
export async function runBundle(mainUrl: string, manifest: BundleManifest): Promise<void> {
  const entry = (await new Bundle(mainUrl, manifest).importScript(manifest.entry)) as { finished?: Promise<void> };
  await entry.finished;
}
