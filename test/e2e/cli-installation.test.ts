/**
 * An incomplete installation of the CLI: a copy of the package without `node_modules`, and one
 * whose `dist/` lost a file. Each is one line naming the installation and what cannot be loaded,
 * exit 1, not a stack (docs/cli.md "Exit status").
 */
import { cp, readdir, rm, symlink } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../helpers/cleanups.js";
import { cliEnvironment, requireBuiltCli, ROOT, tempDir } from "../helpers/cli.js";
import { spawnSync } from "node:child_process";

beforeAll(() => requireBuiltCli());
const cleanups = cleanupsAfterEach();

const INITIALIZE = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n`;

/** A copy of the built package (package.json, dist/, docs/) in a new directory, with or without the project's node_modules. */
async function copyOfPackage(withNodeModules: boolean): Promise<string> {
  const d = await tempDir("orchestra-install-");
  cleanups.push(d.remove);
  for (const entry of ["package.json", "dist", "docs"]) await cp(join(ROOT, entry), join(d.path, entry), { recursive: true });
  if (withNodeModules) await symlink(join(ROOT, "node_modules"), join(d.path, "node_modules"));
  return d.path;
}

const CALL = [
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { text: "hi" } } },
]
  .map((m) => `${JSON.stringify(m)}\n`)
  .join("");

function serve(root: string, input = INITIALIZE): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [join(root, "dist/cli/main.cjs"), "serve"], {
    input,
    env: cliEnvironment({ ORCHESTRA_NO_CODE_CACHE: "1", XDG_CACHE_HOME: join(root, "cache") }),
    encoding: "utf8",
    timeout: 30_000,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe("an incomplete installation", () => {
  it("without node_modules: one line naming the installation and the dependency, exit 1", async () => {
    const root = await copyOfPackage(false);
    const run = serve(root);
    expect(run.stderr).toBe(`orchestra-stdio: the installation at ${root} is incomplete: cannot load pino; reinstall the package\n`);
    expect(run.status).toBe(1);
  }, 60_000);

  it("a file of dist/ removed: one line naming it, exit 1", async () => {
    const root = await copyOfPackage(true);
    const chunks = join(root, "dist/cli/chunks");
    const bridge = (await readdir(chunks)).find((f) => f.startsWith("stdio-bridge-"));
    expect(bridge).toBeDefined();
    await rm(join(chunks, bridge!));
    const run = serve(root);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(`orchestra-stdio: the installation at ${root} is incomplete: cannot load ${join("dist/cli/chunks", bridge!)}; reinstall the package\n`);
    expect(run.status).toBe(1);
  }, 60_000);

  // Scripts of the bundle loaded at different times: before the command runs (main, serve), after
  // the `initialize` answer (tools: the translators; plugin_codec), and at the first call (ajv).
  it.each(["main-", "serve-", "tools-", "plugin_codec-", "ajv-"])(
    "the script %s… of dist/cli/chunks removed, a session calling a tool: the one line, exit 1, no stack",
    async (prefix) => {
      const root = await copyOfPackage(true);
      const chunks = join(root, "dist/cli/chunks");
      const script = (await readdir(chunks)).find((f) => f.startsWith(prefix));
      expect(script).toBeDefined();
      await rm(join(chunks, script!));
      const run = serve(root, INITIALIZE + CALL);
      expect(run.stderr).toContain(`orchestra-stdio: the installation at ${root} is incomplete: cannot load ${join("dist/cli/chunks", script!)}; reinstall the package\n`);
      expect(run.stderr).not.toMatch(/^\s+at /m);
      expect(run.stdout).not.toContain('"id":2');
      expect(run.status).toBe(1);
    },
    60_000,
  );
});
