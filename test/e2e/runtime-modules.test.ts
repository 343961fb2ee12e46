/**
 * The bridge and the orchestrator run on the project's QUIC engine over quiche's native binding:
 * loading them must not load @matrixai/quic's JavaScript layer (QUICClient, QUICServer, its
 * logger and locks), which only the tests use as an independent peer, nor its binding loader (an
 * ES module: src/quic/engine/config.ts requires the binding itself, as CommonJS).
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { LOADED_MODULES_HOOK, loadedModules } from "../helpers/loaded-modules.js";
import { ROOT, requireBuiltCli } from "../helpers/cli.js";

describe("runtime modules", () => {
  it("the QUIC sender, bridge streams and orchestrator server load only the native binding of @matrixai/quic", () => {
    requireBuiltCli();
    const entry =
      ["quic/quic-link.js", "tls/tls-link.js", "orchestrator/quic-server.js"].map((m) => `await import("./dist/${m}");`).join("") +
      'const { createRequire } = await import("node:module"); process.stderr.write("REQUIRE-CACHE " + JSON.stringify(Object.keys(createRequire(import.meta.url).cache)) + "\\n");';
    const r = spawnSync(process.execPath, ["--import", LOADED_MODULES_HOOK, "--input-type=module", "-e", entry], {
      cwd: ROOT,
      encoding: "utf8",
      env: { ...process.env, ORCHESTRA_LOG_LEVEL: "error" },
    });
    expect(r.status, r.stderr).toBe(0);
    const matrixai = loadedModules(r.stderr)
      .filter((m) => m.includes("/@matrixai/"))
      .map((m) => m.slice(m.indexOf("/@matrixai/") + 1));
    expect(matrixai).toEqual([]);
    const cache = JSON.parse(/^REQUIRE-CACHE (.*)$/m.exec(r.stderr)![1]!) as string[];
    expect(cache.filter((f) => /[\\/]@matrixai[\\/]quic-[^\\/]+[\\/][^\\/]+\.node$/.test(f))).toHaveLength(1);
  });
});
