/**
 * docs/certificates.md against the upstream Go orchestrator: a bridge whose --certs-dir holds a
 * copy of the orchestrator's ca.crt and ca.key issues its own certificate and reaches the
 * orchestrator's tools. Needs ../shared/go-peer and the built Go peer (skipped otherwise).
 */
import { spawn } from "node:child_process";
import { copyFile, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../helpers/cleanups.js";
import { expectSoundStore } from "../helpers/cert-store.js";
import { GO_PEER_BIN, requireGoPeer, requireShared, sharedPath } from "../helpers/requires.js";
import { requireBuiltCli, tempDir } from "../helpers/cli.js";
import { connectBridge, textOf } from "../helpers/transport.js";

const skip = requireShared("go-peer/run-orchestrator.sh") ?? requireGoPeer();
const cleanups = cleanupsAfterEach();

/** Starts the Go orchestrator with the echo plugin on `certsDir`; resolves with its address. */
async function startGoOrchestrator(certsDir: string, stateDir: string): Promise<string> {
  const child = spawn("bash", [sharedPath("go-peer/run-orchestrator.sh"), "--certs-dir", certsDir, "--bin", GO_PEER_BIN, "--state", stateDir], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise((r) => child.once("exit", r));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    // Upstream may not exit on SIGTERM after a client left (observed here): then SIGKILL it,
    // and its plugin, which upstream does not tie to its own life.
    const stopped = await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 10_000))]);
    if (!stopped) {
      child.kill("SIGKILL");
      await exited;
    }
    const pluginPid = Number(await readFile(join(stateDir, "plugin.pid"), "utf8").catch(() => ""));
    if (pluginPid > 0) {
      try {
        process.kill(pluginPid, "SIGKILL");
      } catch {
        /* already gone */
      }
    }
  });
  return new Promise<string>((resolve, reject) => {
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      const m = /^READY (\S+)/m.exec(stderr);
      if (m) resolve(m[1]!);
    });
    void exited.then(() => reject(new Error(`Go orchestrator exited before READY:\n${stderr}`)));
  });
}

describe.skipIf(skip !== undefined)(`serve against the upstream Go orchestrator with a copied CA${skip ? ` (skipped: ${skip})` : ""}`, () => {
  beforeAll(() => requireBuiltCli());

  it("copying ca.crt and ca.key into a new --certs-dir is enough: serve issues its own pair and calls echo", async () => {
    const root = await tempDir();
    cleanups.push(root.remove);
    const goCerts = join(root.path, "go-certs");
    const address = await startGoOrchestrator(goCerts, join(root.path, "state"));
    const mine = join(root.path, "bridge-certs");
    await mkdir(mine, { mode: 0o700 });
    for (const f of ["ca.crt", "ca.key"]) await copyFile(join(goCerts, f), join(mine, f));
    const bridge = await connectBridge(["--orchestrator-addr", address, "--certs-dir", mine]);
    cleanups.push(bridge.close);
    expect((await bridge.client.listTools()).tools.map((t) => t.name)).toContain("echo");
    expect(textOf(await bridge.client.callTool({ name: "echo", arguments: { text: "from a copied CA" } }))).toBe("from a copied CA");
    await expectSoundStore(mine, ["transport.stdio-client"]);
  }, 120_000);
});
