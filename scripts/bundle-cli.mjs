// `node scripts/bundle-cli.mjs`: after `tsc -p tsconfig.build.json`, replaces dist/cli/main.js
// (the CLI's entry, the package's `bin`) with an esbuild bundle of it and of everything it imports
// (our code and the pure-JavaScript packages), so that a start loads a few files instead of ~200
// modules (docs/startup.md "One file for the start"). Each dynamic `import()` stays a boundary:
// its code is a chunk in dist/cli/chunks/, loaded only when that import runs, so that what
// `serve` does not need before `initialize` still loads after it (or never).
//
// Left outside the bundle, loaded from node_modules as before: @matrixai/quic (the native quiche
// binding), pino and pino-pretty (src/log.ts loads them with createRequire when the first log record is written), ajv's files that the generated validators
// (src/gen/mcp/<revision>/*.cjs) and the run-time schema compiler require,
// @peculiar/x509 and reflect-metadata (only to create certificates; CommonJS, whose named exports
// a bundle's `import()` would not give as Node does). The rest
// of dist/ stays as tsc wrote it: the generated validators, the `validate` worker thread
// (dist/validate/worker.js), and every module for tests and tools that import them.
//
// `import.meta.url` of each bundled module of dist/ is rewritten to the URL that module has in
// dist/ (`new URL("../../validate/jobs.js", import.meta.url)` from a chunk), so that files found
// next to it (package.json, docs/, the validators, the worker) are found as before.
//
// dist/cli/chunks/inputs.json maps each output file to the dist/ modules and packages in it
// (test/helpers/loaded-modules.ts reads it to tell which modules a process loaded).
import { build } from "esbuild";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DIST = join(ROOT, "dist");
const ENTRY = join(DIST, "cli/main.js");
const CHUNKS = join(DIST, "cli/chunks");
/** First line of the bundle after the shebang: a second run must not bundle the bundle. */
const MARK = "// orchestra-stdio CLI bundle (scripts/bundle-cli.mjs)";

const entrySource = readFileSync(ENTRY, "utf8");
if (entrySource.includes(MARK)) throw new Error(`${ENTRY} is already a bundle: run tsc -p tsconfig.build.json first`);
rmSync(CHUNKS, { recursive: true, force: true });

const toPosix = (p) => p.split(sep).join("/");

/** Rewrites `import.meta.url` in dist/ modules to the module's own URL in dist/ (see above). */
const metaUrlPlugin = {
  name: "dist-import-meta-url",
  setup(b) {
    b.onLoad({ filter: /[\\/]dist[\\/].*\.js$/ }, (args) => {
      const source = readFileSync(args.path, "utf8");
      if (!source.includes("import.meta.url")) return undefined;
      // Every output file is in dist/cli/ (the entry) or dist/cli/chunks/: the chunk depth is
      // fixed per output, so the entry gets its own path and chunks theirs (`__distUrl`, from the banner).
      const fromDist = toPosix(relative(DIST, args.path));
      return { contents: source.replaceAll("import.meta.url", `__distUrl(${JSON.stringify(fromDist)})`), loader: "js" };
    });
  },
};

const result = await build({
  entryPoints: { main: ENTRY },
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  outdir: join(DIST, "cli"),
  chunkNames: "chunks/[name]-[hash]",
  allowOverwrite: true,
  external: ["@matrixai/quic", "@matrixai/quic/*", "pino-pretty", "@peculiar/x509", "reflect-metadata"],
  plugins: [metaUrlPlugin],
  // CommonJS packages in the bundle call require() for Node's modules; __distUrl maps a dist/
  // path to its URL from whichever output file runs it (the entry in dist/cli/, chunks one deeper).
  banner: {
    js: [
      MARK,
      'import { createRequire as __createRequire } from "node:module";',
      "const require = __createRequire(import.meta.url);",
      'const __distUrl = (fromDist) => new URL((/\\/cli\\/chunks\\/[^/]+$/.test(import.meta.url) ? "../../" : "../") + fromDist, import.meta.url).href;',
    ].join("\n"),
  },
  metafile: true,
  legalComments: "none",
  // Less source for V8 to scan at start (identifiers and names are kept: stack traces, `err.name`).
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: "warning",
});

// The entry keeps its shebang (esbuild keeps the first line's `#!`, before the banner).
const inputs = {};
for (const [file, output] of Object.entries(result.metafile.outputs)) {
  inputs[toPosix(relative(DIST, resolve(ROOT, file)))] = Object.keys(output.inputs).map((i) => toPosix(relative(ROOT, resolve(ROOT, i))));
}
writeFileSync(join(CHUNKS, "inputs.json"), `${JSON.stringify(inputs, null, 1)}\n`);
