/**
 * The cert store from the outside: `orchestra-stdio certs init|show`, `serve --orchestrator-addr`
 * without a CA (exit 2 before initialize), and concurrent first starts of real processes on one
 * empty store.
 */
import { chmod, stat } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../helpers/cleanups.js";
import { expectSoundStore } from "../helpers/cert-store.js";
import { requireBuiltCli, runCli, startOrchestratorProcess, tempDir } from "./helpers.js";
import { connectBridge, textOf, waitFor } from "./transport-helpers.js";
import { existsSync } from "node:fs";
import { createSocket } from "node:dgram";

beforeAll(() => requireBuiltCli());
const cleanups = cleanupsAfterEach();

/** A UDP port on 127.0.0.1 that was free a moment ago. */
async function freeUdpPort(): Promise<number> {
  const socket = createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

async function temp(): Promise<string> {
  const d = await tempDir("orchestra-certs-e2e-");
  cleanups.push(d.remove);
  return d.path;
}


const initialize = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } }) + "\n";

describe("serve --orchestrator-addr without a CA", () => {
  it("exits 2 before answering initialize, says where the orchestrator's CA is and what to copy, creates nothing", async () => {
    const dir = join(await temp(), "certs");
    const { stdout, stderr, code } = await runCli(["serve", "--orchestrator-addr", "127.0.0.1:9", "--certs-dir", dir], initialize);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain(`${join(dir, "ca.crt")} is missing`);
    expect(stderr).toContain("Copy ca.crt from the orchestrator's cert store");
    expect(stderr).toContain("transport.stdio-client.crt/.key");
    await expect(stat(dir)).rejects.toThrow(/ENOENT/);
  }, 60_000);
});

describe("orchestra-stdio certs", () => {
  it("init creates the CA and both parties' pairs; show reports them and a key readable by others", async () => {
    const dir = join(await temp(), "store");
    const init = await runCli(["certs", "init", "--certs-dir", dir]);
    expect(init.code).toBe(0);
    expect(init.stdout).toContain(`created CA ${join(dir, "ca.crt")}`);
    expect(init.stdout).toContain(`created orchestrator: ${join(dir, "orchestrator.crt")}`);
    expect(init.stdout).toContain(`created transport.stdio-client: ${join(dir, "transport.stdio-client.crt")}`);
    await expectSoundStore(dir, ["orchestrator", "transport.stdio-client"]);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);

    const again = await runCli(["certs", "init", "--certs-dir", dir]);
    expect(again.stdout).toContain(`using CA`);
    expect(again.stdout).not.toContain("created");

    const show = await runCli(["certs", "show", "--certs-dir", dir]);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/CA {3}.*ca\.crt: CN=Orchestra CA; expires \d{4}-.*; key 0600, matches/);
    expect(show.stdout).toMatch(/leaf .*orchestrator\.crt: CN=orchestrator; expires .*; key 0600, matches; signed by the CA/);
    expect(show.stdout).toContain("no problems");

    await chmod(join(dir, "orchestrator.key"), 0o644);
    const bad = await runCli(["certs", "show", "--certs-dir", dir, "--json"]);
    expect(bad.code).toBe(1);
    const report = JSON.parse(bad.stdout) as { leaves: Array<{ name: string; keyMode: string; problems: string[] }> };
    const orch = report.leaves.find((l) => l.name === "orchestrator")!;
    expect(orch.keyMode).toBe("0644");
    expect(orch.problems).toEqual([expect.stringContaining(`chmod 600 ${join(dir, "orchestrator.key")}`)]);
  }, 60_000);

  it("show on a missing store exits 1 and says how to create it", async () => {
    const dir = join(await temp(), "none");
    const show = await runCli(["certs", "show", "--certs-dir", dir]);
    expect(show.code).toBe(1);
    expect(show.stdout).toContain(`run orchestra-stdio certs init --certs-dir ${dir}`);
  }, 60_000);
});

describe("concurrent first starts of real processes on one empty store", () => {
  it("two processes per round (orchestrator + bridge, two orchestrators, two bridges) leave a sound store every round", async () => {
    const kinds = [
      ["orchestrator", "transport.stdio-client"],
      ["orchestrator", "orchestrator"],
      ["transport.stdio-client", "transport.stdio-client"],
    ];
    const root = await temp();
    for (let round = 0; round < 12; round++) {
      const dir = join(root, `round-${round}`);
      const pair = kinds[round % kinds.length]!;
      const results = await Promise.all(pair.map((name) => runCli(["certs", "init", "--certs-dir", dir, "--name", name])));
      for (const r of results) expect(r.code, r.stderr).toBe(0);
      await expectSoundStore(dir, [...new Set(pair)]);
    }
  }, 240_000);

  it("12 rounds of two real processes on one empty store: the orchestrator command creating it, and serve --orchestrator-addr started as soon as the store appears", async () => {
    const root = await temp();
    for (let round = 0; round < 12; round++) {
      const dir = join(root, `round-${round}`);
      const port = await freeUdpPort();
      const orchestrator = startOrchestratorProcess(dir, ["--listen", `127.0.0.1:${port}`]);
      // serve starts while the orchestrator creates the CA (or just after): it may not create
      // one itself, and waits for the one being created instead of exiting 2.
      await waitFor(() => existsSync(join(dir, ".ca.lock")) || existsSync(join(dir, "ca.crt")), "the orchestrator to start creating the store", 30_000);
      const bridge = await connectBridge(["--orchestrator-addr", `127.0.0.1:${port}`, "--certs-dir", dir]);
      cleanups.push(bridge.close);
      const running = await orchestrator;
      cleanups.push(running.stop);
      const result = await bridge.client.callTool({ name: "echo", arguments: { text: `round ${round}` } });
      expect(textOf(result), bridge.stderr()).toContain(`round ${round}`);
      await bridge.close();
      await running.stop();
      await expectSoundStore(dir, ["orchestrator", "transport.stdio-client"]);
    }
  }, 300_000);

  it("the orchestrator command and serve (embedded orchestrator, two QUIC clients) started together on one store", async () => {
    const dir = join(await temp(), "store");
    // serve's embedded orchestrator and its two QUIC clients, and the orchestrator command, at once
    const [bridge, orchestrator] = await Promise.all([connectBridge(["--certs-dir", dir]), startOrchestratorProcess(dir)]);
    cleanups.push(bridge.close);
    cleanups.push(orchestrator.stop);
    expect((await bridge.client.listTools()).tools.map((t) => t.name)).toContain("echo");
    await expectSoundStore(dir, ["orchestrator", "transport.stdio-client"]);
  }, 120_000);
});
