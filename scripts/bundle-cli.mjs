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
// Each output file (the entry too, dist/cli/chunks/main-<hash>.js) is then made a script for the
// CLI's own loader (toScript below; src/cli/script-loader.ts), which runs it through `vm.Script`
// with V8's code cache (src/cli/code-cache.ts): dist/cli/main.cjs, the package's `bin`, is that
// loader and the bundle's manifest, a CommonJS file (Node's ES module loader is never started
// before the `initialize` answer); dist/cli/main.js becomes an ES module that runs it, for those
// who run that file (docs/startup.md "Code cache").
//
// dist/cli/chunks/inputs.json maps each output file to the dist/ modules and packages in it
// (test/helpers/loaded-modules.ts reads it to tell which modules a process loaded).
import { parse } from "acorn";
import { build, transform } from "esbuild";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DIST = join(ROOT, "dist");
const ENTRY = join(DIST, "cli/main.js");
const LOADER = join(DIST, "cli/main.cjs");
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
  // The entry is a script like the others (dist/cli/chunks/main-<hash>.js); dist/cli/main.js becomes the loader, below.
  entryPoints: { "chunks/main": ENTRY },
  entryNames: "[dir]/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  outdir: join(DIST, "cli"),
  chunkNames: "chunks/[name]-[hash]",
  write: false,
  external: ["@matrixai/quic", "@matrixai/quic/*", "pino-pretty", "@peculiar/x509", "reflect-metadata"],
  plugins: [metaUrlPlugin],
  // __distUrl maps a dist/ path to its URL from the script that runs it (all in dist/cli/chunks/).
  // `require`, `import()` and `import.meta.url` are the loader's once the output is a script (toScript).
  banner: { js: ['const __distUrl = (fromDist) => new URL("../../" + fromDist, import.meta.url).href;'].join("\n") },
  metafile: true,
  legalComments: "none",
  // Less source for V8 to scan at start (identifiers and names are kept: stack traces, `err.name`).
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: "warning",
});

/** Calls `visit` for every node of an acorn AST, with its parent. */
function walk(node, parent, visit) {
  visit(node, parent);
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) {
      for (const v of value) if (v && typeof v.type === "string") walk(v, node, visit);
    } else if (value && typeof value.type === "string") walk(value, node, visit);
  }
}

/**
 * One output file of the build (an ES module) as a script of src/cli/script-loader.ts: `import()`
 * → `__import()`, `import.meta.url` → `__metaUrl`, then esbuild's CommonJS conversion for the static
 * imports (`require()`, live bindings through the namespace objects) and exports (getters on
 * `module.exports`), wrapped in the loader's function expression.
 */
async function toScript(code, file) {
  code = code.replace(/^#!.*\n/, "");
  const edits = [];
  walk(parse(code, { ecmaVersion: "latest", sourceType: "module" }), undefined, (node, parent) => {
    if (node.type === "ImportExpression") edits.push([node.start, node.start + "import".length, "__import"]);
    else if (node.type === "MetaProperty" && node.meta.name === "import") {
      if (parent?.type !== "MemberExpression" || parent.computed || parent.property.name !== "url") throw new Error(`${file}: import.meta other than import.meta.url`);
      edits.push([parent.start, parent.end, "__metaUrl"]);
    }
  });
  edits.sort((a, b) => b[0] - a[0]);
  for (const [from, to, text] of edits) code = code.slice(0, from) + text + code.slice(to);
  const converted = await transform(code, { format: "cjs", platform: "node", target: "node20", minifyWhitespace: true, minifySyntax: true, logLevel: "error" });
  if (converted.warnings.length > 0) throw new Error(`${file}: ${converted.warnings.map((w) => w.text).join("; ")}`);
  return `(function (exports, require, module, __import, __metaUrl) {"use strict";${plainExports(converted.code, file)}\n})`;
}

/**
 * esbuild's CommonJS exports are getters defined before the body runs (`__export(stdin_exports,
 * { name: () => local })`, `module.exports = __toCommonJS(stdin_exports)`): one function per
 * export to compile and call. Scripts form no cycles and a script's exports are read only once
 * its body has run, so they become one object literal at the end of the body: data properties,
 * except for a local assigned anywhere after its declaration (a getter, as before).
 */
function plainExports(code, file) {
  const program = parse(code, { ecmaVersion: "latest", sourceType: "script", allowReturnOutsideFunction: true });
  let exportsMap;
  let toCommonJs;
  const assigned = new Set();
  walk(program, undefined, (node) => {
    if (node.type === "AssignmentExpression" && node.left.type === "Identifier") assigned.add(node.left.name);
    if (node.type === "UpdateExpression" && node.argument.type === "Identifier") assigned.add(node.argument.name);
  });
  for (const statement of program.body) {
    const e = statement.type === "ExpressionStatement" ? statement.expression : undefined;
    if (e?.type === "CallExpression" && e.callee.name === "__export" && e.arguments[0]?.name === "stdin_exports") exportsMap = { statement, object: e.arguments[1] };
    if (e?.type === "AssignmentExpression" && code.slice(e.start, e.end) === "module.exports=__toCommonJS(stdin_exports)") toCommonJs = statement;
  }
  if (!toCommonJs) return code;
  const properties = (exportsMap?.object.properties ?? []).map((p) => {
    const key = p.key.type === "Identifier" ? p.key.name : JSON.stringify(p.key.value);
    const body = p.value.type === "ArrowFunctionExpression" ? p.value.body : undefined;
    // A local of the script, or a re-export of another script's (already run) export.
    if (body?.type === "Identifier") return assigned.has(body.name) ? `get ${key}(){return ${body.name}}` : `${key}:${body.name}`;
    if (body?.type === "MemberExpression" && body.object.type === "Identifier") return `get ${key}(){return ${code.slice(body.start, body.end)}}`;
    throw new Error(`${file}: unexpected export ${code.slice(p.start, p.end)}`);
  });
  const cut = [toCommonJs, exportsMap?.statement].filter(Boolean).sort((x, y) => y.start - x.start);
  for (const c of cut) code = code.slice(0, c.start) + code.slice(c.end);
  return `${code}\nmodule.exports={__esModule:!0,${properties.join(",")}};`;
}

const cliDir = join(DIST, "cli");
const scripts = {};
mkdirSync(CHUNKS, { recursive: true });
for (const output of result.outputFiles) {
  const name = toPosix(relative(cliDir, output.path));
  scripts[name] = await toScript(output.text, name);
  writeFileSync(output.path, scripts[name]);
}

// Per script, the ES modules outside the bundle that it and the scripts it imports statically
// import statically (not Node's own modules): the loader imports them before the script runs.
const outputs = Object.fromEntries(Object.entries(result.metafile.outputs).map(([file, output]) => [toPosix(relative(cliDir, resolve(ROOT, file))), output]));
const externalsOf = (name, seen = new Set()) => {
  if (seen.has(name)) return [];
  seen.add(name);
  const found = [];
  for (const i of outputs[name].imports) {
    if (i.kind !== "import-statement") continue;
    if (!i.external) found.push(...externalsOf(toPosix(relative(cliDir, resolve(ROOT, i.path))), seen));
    else if (!i.path.startsWith("node:")) found.push(i.path);
  }
  return [...new Set(found)];
};
const names = Object.keys(scripts).sort();

// dist/cli/main.cjs: the loader (src/cli/script-loader.ts) and the manifest, one CommonJS file
// (a rejection of runBundle is unhandled: Node prints it and exits 1, as after a top-level await).
const buildLoader = (manifest, write) =>
  build({
    stdin: {
      contents: `import { runBundle } from "./script-loader.js";\nvoid runBundle(import.meta.url, ${JSON.stringify(manifest)});\n`,
      resolveDir: cliDir,
      sourcefile: "cli/main.cjs",
    },
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    outfile: LOADER,
    write,
    // `import.meta.url` of the loader's modules: the loader's own URL, as in an ES module bundle.
    define: { "import.meta.url": "__loaderUrl" },
    banner: { js: `#!/usr/bin/env node\n${MARK}\nconst __loaderUrl = require("node:url").pathToFileURL(__filename).href;` },
    metafile: true,
    legalComments: "none",
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: "warning",
  });
const manifest = {
  entry: names.find((n) => /^chunks\/main-[^/]+\.js$/.test(n)),
  scripts: Object.fromEntries(names.map((n) => [n, externalsOf(n)])),
};
// The code cache's key: the scripts, the loader itself (it reads and writes the cache file), and
// the generated CommonJS modules of dist/gen/ that the loader compiles with the cache too.
const loaderCode = (await buildLoader({ hash: "", ...manifest }, false)).outputFiles[0].text;
const generatedCommonJs = readdirSync(join(DIST, "gen"), { recursive: true })
  .map(toPosix)
  .filter((f) => f.endsWith(".cjs"))
  .sort();
const digest = createHash("sha256").update(loaderCode);
for (const n of names) digest.update(`\0${n}\0${scripts[n]}`);
for (const f of generatedCommonJs) digest.update(`\0gen/${f}\0`).update(readFileSync(join(DIST, "gen", f)));
manifest.hash = digest.digest("hex").slice(0, 16);
const loader = await buildLoader({ hash: manifest.hash, ...manifest }, true);

const inputs = {};
for (const [file, output] of [...Object.entries(loader.metafile.outputs), ...Object.entries(result.metafile.outputs)]) {
  inputs[toPosix(relative(DIST, resolve(ROOT, file)))] = Object.keys(output.inputs).map((i) => toPosix(relative(ROOT, resolve(ROOT, i))));
}
writeFileSync(join(CHUNKS, "inputs.json"), `${JSON.stringify(inputs, null, 1)}\n`);

// dist/cli/main.js (tsc's output of src/cli/main.ts, the bundle's entry above; the `bin` before
// dist/cli/main.cjs) becomes an ES module, the package's type, that runs the loader.
writeFileSync(
  ENTRY,
  `#!/usr/bin/env node\n${MARK}\n// The package's bin is ./main.cjs; this file runs it for those who run this one.\nimport { createRequire } from "node:module";\ncreateRequire(import.meta.url)("./main.cjs");\n`,
);
