/**
 * The package as users get it: `npm pack`, then `npm install` of the tarball into a new project
 * with `CI=true` (dependencies from the npm registry, through the npm cache), then the installed
 * copy runs the README's quick start on the embedded orchestrator, and an `orchestrator` +
 * `serve --orchestrator-addr ... --certs-dir ...` pair. Install scripts would fail or be skipped
 * there, so the package must not need any.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QUICK_START_ANSWERS, quickStart, quickStartAnswers } from "../helpers/readme.js";
import { PROJECT_ROOT } from "../helpers/requires.js";
import { requireBuiltCli, tempDir } from "../helpers/cli.js";

const run = promisify(execFile);
/** npm on a shared, loaded machine, fetching from the registry: minutes, not seconds. */
const INSTALL_MS = 8 * 60_000;

describe("the packed package installed into a new project", () => {
  let work: Awaited<ReturnType<typeof tempDir>>;
  let project: string;
  /** The environment of a user's shell in `project` (no ORCHESTRA_ settings of ours). */
  let env: NodeJS.ProcessEnv;
  /** What `npm install` of the tarball printed on stderr (npm's warnings). */
  let installStderr: string;

  beforeAll(async () => {
    requireBuiltCli();
    work = await tempDir("orchestra-package-");
    // dist/ is already built by the global setup: pack it as is (the `prepare` script would rebuild it).
    const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work.path], { cwd: PROJECT_ROOT, maxBuffer: 64 * 1024 * 1024 });
    const tarball = join(work.path, (JSON.parse(stdout) as Array<{ filename: string }>)[0]!.filename);
    project = join(work.path, "project");
    await run("mkdir", [project]);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "uses-orchestra-stdio", version: "1.0.0", private: true }));
    env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("ORCHESTRA_") && !k.startsWith("npm_")));
    ({ stderr: installStderr } = await run("npm", ["install", tarball, "--no-audit", "--no-fund", "--prefer-offline"], {
      cwd: project,
      env: { ...env, CI: "true" },
      timeout: INSTALL_MS,
    }));
  }, INSTALL_MS + 60_000);
  afterAll(async () => {
    await work?.remove();
  });

  it("has no install scripts, no patch-package and no source maps", () => {
    const installed = join(project, "node_modules/orchestra-stdio");
    const pkg = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as { scripts?: Record<string, string>; dependencies?: Record<string, string> };
    // The scripts npm runs (or, for `prepare`, warns about: "install-scripts ... not yet covered by allowScripts") for a dependency.
    for (const hook of ["preinstall", "install", "postinstall", "prepare"]) expect(pkg.scripts?.[hook]).toBeUndefined();
    expect(installStderr.split("\n").filter((l) => l.includes("orchestra-stdio@"))).toEqual([]);
    expect(Object.keys(pkg.dependencies ?? {})).not.toContain("patch-package");
    expect(existsSync(join(project, "node_modules/patch-package"))).toBe(false);
    expect(existsSync(join(installed, "dist/cli/main.js.map"))).toBe(false);
    expect(existsSync(join(installed, "docs/cli.md"))).toBe(true);
    // What the README links to from the installed package.
    expect(existsSync(join(installed, "examples/image-tool.mjs"))).toBe(true);
    expect(existsSync(join(installed, "LICENSE"))).toBe(true);
  });

  it("npx orchestra-stdio serve answers the quick start's three requests", async () => {
    const { stdout } = await run("sh", ["-c", quickStart("serve")], { cwd: project, env, timeout: 120_000 });
    expect(quickStartAnswers(stdout)).toEqual(QUICK_START_ANSWERS);
  }, 180_000);

  it("the installed orchestrator, then npx orchestra-stdio serve --orchestrator-addr ... --certs-dir ... against it", async () => {
    const certs = join(work.path, "certs");
    // The installed bin itself, not through npx: npx does not pass SIGTERM on to it.
    const bin = join(project, "node_modules/.bin/orchestra-stdio");
    const orchestrator = spawn(bin, ["orchestrator", "--listen", "127.0.0.1:0", "--certs-dir", certs], { cwd: project, env, stdio: ["ignore", "ignore", "pipe"] });
    try {
      const address = await new Promise<string>((resolve, reject) => {
        let stderr = "";
        orchestrator.stderr.setEncoding("utf8").on("data", (d: string) => {
          stderr += d;
          const m = /READY (\S+)/.exec(stderr);
          if (m) resolve(m[1]!);
        });
        orchestrator.on("exit", (code) => reject(new Error(`orchestrator exited with ${code}: ${stderr}`)));
      });
      const input = /printf '%s\\n' (.*) \| npx -y orchestra-stdio serve$/.exec(quickStart("serve"))![1]!;
      const { stdout } = await run("sh", ["-c", `printf '%s\\n' ${input} | npx orchestra-stdio serve --orchestrator-addr ${address} --certs-dir '${certs}'`], {
        cwd: project,
        env,
        timeout: 120_000,
      });
      expect(quickStartAnswers(stdout)).toEqual(QUICK_START_ANSWERS);
    } finally {
      const exited = new Promise((r) => orchestrator.once("exit", r));
      orchestrator.kill("SIGTERM");
      await exited;
    }
  }, 180_000);
});
