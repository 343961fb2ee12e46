/**
 * The bridge and the orchestrator run on the project's QUIC engine over quiche's native binding:
 * loading them must not load @matrixai/quic's JavaScript layer (QUICClient, QUICServer, its
 * logger and locks), which only the tests use as an independent peer.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ROOT, requireBuiltCli } from "./helpers.js";

/** Module hooks that print every resolved URL on stderr (node:module `register`). */
const HOOKS = 'export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write("RESOLVED " + r.url + "\\n"); return r; }';
const REGISTER = `data:text/javascript,${encodeURIComponent(`import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});`)}`;

describe("runtime modules", () => {
  it("the QUIC sender, bridge streams and orchestrator server load only the native binding of @matrixai/quic", () => {
    requireBuiltCli();
    const entry = ["quic/quic-link.js", "tls/tls-link.js", "orchestrator/quic-server.js"]
      .map((m) => `await import("./dist/${m}");`)
      .join("");
    const r = spawnSync(process.execPath, ["--import", REGISTER, "--input-type=module", "-e", entry], { cwd: ROOT, encoding: "utf8", env: { ...process.env, ORCHESTRA_LOG_LEVEL: "error" } });
    expect(r.status, r.stderr).toBe(0);
    const matrixai = r.stderr
      .split("\n")
      .filter((l) => l.startsWith("RESOLVED ") && l.includes("/@matrixai/"))
      .map((l) => l.slice(l.indexOf("/@matrixai/") + 1));
    expect(matrixai.length).toBeGreaterThan(0);
    expect(matrixai.filter((m) => !m.startsWith("@matrixai/quic/dist/native/"))).toEqual([]);
  });
});
