/**
 * The cert store from the outside: `orchestra-stdio certs init|show`, `serve --orchestrator-addr`
 * without a CA (exit 2 after answering initialize: the store is checked after the answer), and concurrent first starts of real processes on one
 * empty store.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmod, copyFile, mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { homedir, hostname } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../helpers/cleanups.js";
import { existsSync } from "node:fs";
import { createSocket } from "node:dgram";
import { expectSoundStore, opensslEd25519Ca, writeExpiredPair } from "../helpers/cert-store.js";
import { CLI, cliEnvironment, expectStoreFaultAnswers, INITIALIZE_THEN_TOOLS_LIST, requireBuiltCli, ROOT, runCli, startOrchestratorProcess, tempDir } from "../helpers/cli.js";
import { LineClient } from "../helpers/mcp-lines.js";
import { connectBridge, textOf, waitFor } from "../helpers/transport.js";

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

const initialize =
  JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } }) + "\n";

describe("serve --orchestrator-addr without a CA", () => {
  it("answers initialize, then answers the call in flight -32603 and exits 2, saying where the orchestrator's CA is and what to copy; creates nothing", async () => {
    const dir = join(await temp(), "certs");
    const { stdout, stderr, code } = await runCli(["serve", "--orchestrator-addr", "127.0.0.1:9", "--certs-dir", dir], INITIALIZE_THEN_TOOLS_LIST);
    expect(code).toBe(2);
    expectStoreFaultAnswers(stdout, `no CA in ${dir} (${join(dir, "ca.crt")} is missing)`);
    expect(stderr).toContain(`${join(dir, "ca.crt")} is missing`);
    expect(stderr).toContain("cannot be verified: copy ca.crt from the orchestrator's cert store");
    expect(stderr).toContain("transport.stdio-client.crt/.key");
    await expect(stat(dir)).rejects.toThrow(/ENOENT/);
  }, 60_000);

  it("serves on after finding the fault: a request sent once the fault is logged is answered -32603 naming it, and the exit at EOF is 2", async () => {
    const dir = join(await temp(), "certs");
    const serve = liveServe(["--orchestrator-addr", "127.0.0.1:9", "--certs-dir", dir]);
    const [initialize, , toolsList] = INITIALIZE_THEN_TOOLS_LIST.split("\n");
    serve.write(initialize);
    await waitFor(() => serve.responsesTo(1).length > 0, "the initialize answer", 30_000);
    // Found by the tools subscription the bridge starts after initialize, else at the end of start-up.
    await waitFor(() => serve.stderr.includes(`${join(dir, "ca.crt")} is missing`), "the store fault's error line", 30_000);
    serve.write(toolsList);
    expect(await serve.end()).toBe(2);
    expectStoreFaultAnswers(stdoutOf(serve), `cannot load TLS material: no CA in ${dir}`);
  }, 60_000);

  it("SIGTERM while the check waits for another process's lock on the store ends at once: exit 143, no store fault logged after it", async () => {
    const dir = join(await temp(), "locked");
    await mkdir(dir, { mode: 0o700 });
    // A live holder (this test process) of the lock of a CA being created: the check waits for it.
    await writeFile(join(dir, ".ca.lock"), `${process.pid} ${hostname()} test-token`);
    const serve = liveServe(["--orchestrator-addr", "127.0.0.1:9", "--certs-dir", dir]);
    for (const line of INITIALIZE_THEN_TOOLS_LIST.trim().split("\n")) serve.write(line);
    await waitFor(() => serve.responsesTo(1).length > 0, "the initialize answer", 30_000);
    process.kill(serve.pid, "SIGTERM");
    expect(await serve.exited).toBe(143);
    const answers = serve.lines as Array<{ id: number; error?: { code: number; message: string } }>;
    expect(answers.map((a) => a.id)).toEqual([1, 2]);
    expect(answers[1]!.error).toMatchObject({ code: -32603, message: expect.stringContaining("SIGTERM") });
    expect(serve.stderr).not.toContain("ca.crt");
  }, 60_000);
});

/** `serve ARGS` spoken to line by line (JSON log lines on stderr), killed after the test if still running. */
function liveServe(args: string[]): LineClient {
  const client = new LineClient(args, undefined, cliEnvironment({ ORCHESTRA_LOG_FORMAT: "json" }));
  cleanups.push(() => client.kill());
  return client;
}

/** What `client`'s bridge wrote on stdout, a line per message. */
const stdoutOf = (client: LineClient): string => client.lines.map((l) => JSON.stringify(l)).join("\n");

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

  it("show on a missing store exits 1 and says to copy the orchestrator's CA first, then how to create one of its own", async () => {
    const dir = join(await temp(), "none");
    const show = await runCli(["certs", "show", "--certs-dir", dir]);
    expect(show.code).toBe(1);
    const copy = show.stdout.indexOf("to connect to an existing orchestrator, copy its ca.crt");
    expect(copy).toBeGreaterThan(0);
    expect(show.stdout.indexOf(`run orchestra-stdio certs init --certs-dir ${dir}`)).toBeGreaterThan(copy);
    // The guide is named where it is installed, not relative to the reader's directory.
    expect(show.stdout).toContain(`See ${join(ROOT, "docs/certificates.md")}`);
  }, 60_000);

  it("show and init read ORCHESTRA_CERTS_DIR like serve (a flag wins); a literal ~ gets a hint", async () => {
    const base = await temp();
    const fromEnv = join(base, "env-store");
    const init = await runCli(["certs", "init"], "", { ORCHESTRA_CERTS_DIR: fromEnv });
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain(`created CA ${join(fromEnv, "ca.crt")}`);
    const show = await runCli(["certs", "show"], "", { ORCHESTRA_CERTS_DIR: fromEnv });
    expect(show.stdout).toContain(`cert store ${fromEnv}`);
    expect(show.code).toBe(0);
    const flag = await runCli(["certs", "show", "--certs-dir", join(base, "other")], "", { ORCHESTRA_CERTS_DIR: fromEnv });
    expect(flag.stdout).toContain(`cert store ${join(base, "other")}`);
    const tilde = await runCli(["certs", "show", "--certs-dir", "~/.orchestra/certs"]);
    expect(tilde.code).toBe(1);
    expect(tilde.stdout).toContain('"~" is not expanded here');
  }, 60_000);

  it("certs init and certs show list and answer --version", async () => {
    for (const sub of ["init", "show"]) {
      expect((await runCli(["certs", sub, "--help"])).stdout).toContain("--version");
      const v = await runCli(["certs", sub, "--version"]);
      expect(v.code).toBe(0);
      expect(v.stdout).toMatch(/^\d+\.\d+\.\d+/);
    }
  }, 60_000);
});

describe("certs show flags the stores serve refuses, with fixes that work without ca.key", () => {
  async function orchestratorStore(): Promise<string> {
    const dir = join(await temp(), "orchestrator");
    expect((await runCli(["certs", "init", "--certs-dir", dir])).code).toBe(0);
    return dir;
  }
  async function bridgeStore(files: Array<[string, string]>): Promise<string> {
    const dir = join(await temp(), "bridge");
    await mkdir(dir, { mode: 0o700 });
    for (const [from, to] of files) await copyFile(from, join(dir, to));
    return dir;
  }

  it("only the orchestrator's ca.crt: show reports the missing bridge pair and ca.key; serve exits 2 naming the next step", async () => {
    const orch = await orchestratorStore();
    const dir = await bridgeStore([[join(orch, "ca.crt"), "ca.crt"]]);
    const show = await runCli(["certs", "show", "--certs-dir", dir]);
    expect(show.code).toBe(1);
    expect(show.stdout).not.toContain("no problems");
    expect(show.stdout).toContain("no transport.stdio-client pair and no ca.key to issue one");
    expect(show.stdout).toContain("orchestra-stdio certs init --name transport.stdio-client --certs-dir <the orchestrator's cert dir>");
    const serve = await runCli(["serve", "--orchestrator-addr", "127.0.0.1:9", "--certs-dir", dir], initialize);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toContain("orchestra-stdio certs init --name transport.stdio-client --certs-dir <the orchestrator's cert dir>");
    expect(serve.stderr).toContain("or copy the orchestrator's ca.key");
  }, 60_000);

  it("a leaf certificate copied as ca.crt is flagged as not a CA certificate", async () => {
    const orch = await orchestratorStore();
    const dir = await bridgeStore([[join(orch, "orchestrator.crt"), "ca.crt"]]);
    const show = await runCli(["certs", "show", "--certs-dir", dir]);
    expect(show.code).toBe(1);
    expect(show.stdout).toContain(`${join(dir, "ca.crt")} is not a CA certificate (basicConstraints lacks CA:true)`);
    // Its fix alone: advice to copy a ca.key beside it could not work (third new-user trial).
    expect(show.stdout).not.toContain("ca.key");
    // The store's own CA is one.
    expect((await runCli(["certs", "show", "--certs-dir", orch])).stdout).toContain("no problems");
  }, 60_000);

  it("certs init refuses a --certs-dir with a literal ~ (it would make a CA under ./~), naming the directory meant; nothing is created", async () => {
    const cwd = await temp();
    const run = spawnSync(process.execPath, [CLI, "certs", "init", "--certs-dir", "~/orchestra-test-certs"], { cwd, env: cliEnvironment(), encoding: "utf8" });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(
      `orchestra-stdio certs init: the path was given as "~/orchestra-test-certs" and "~" is not expanded here (only a shell expands it, at the start of an unquoted word): use $HOME or an absolute path (meant: --certs-dir ${join(homedir(), "orchestra-test-certs")}); nothing was created\n`,
    );
    expect(existsSync(join(cwd, "~"))).toBe(false);
    expect(existsSync(join(homedir(), "orchestra-test-certs"))).toBe(false);
  });

  it("a CA certificate whose keyUsage lacks keyCertSign: show names keyUsage, serve refuses it naming both possible reasons", async () => {
    // An Ed25519 CA (CA:TRUE) that may not sign certificates, made with openssl.
    const dir = join(await temp(), "no-cert-sign");
    await opensslEd25519Ca(dir, { name: "no-cert-sign", days: 30, keyUsage: "digitalSignature" });
    const show = await runCli(["certs", "show", "--certs-dir", dir]);
    expect(show.stdout).toContain(`${join(dir, "ca.crt")} is not a CA certificate (keyUsage lacks keyCertSign)`);
    const serve = await runCli(["serve", "--orchestrator-addr", "127.0.0.1:9", "--certs-dir", dir], INITIALIZE_THEN_TOOLS_LIST);
    expect(serve.code).toBe(2);
    expectStoreFaultAnswers(serve.stdout, "is not a CA certificate");
    expect(serve.stderr).toContain(`${join(dir, "ca.crt")} is not a CA certificate (basicConstraints lacks CA:true, or keyUsage lacks keyCertSign)`);
  }, 60_000);

  it("an expired pair: without ca.key the fix is on the CA's side (not 'remove it'); with ca.key the next start reissues it; dates are ISO 8601", async () => {
    const orch = await orchestratorStore();
    await writeExpiredPair(orch, "transport.stdio-client");
    const withKey = await runCli(["certs", "show", "--certs-dir", orch]);
    expect(withKey.code).toBe(1);
    expect(withKey.stdout).toMatch(/transport\.stdio-client\.crt expired on \d{4}-\d\d-\d\dT[\d:.]+Z: the next start .* issues a new pair/);
    const dir = await bridgeStore([
      [join(orch, "ca.crt"), "ca.crt"],
      [join(orch, "transport.stdio-client.crt"), "transport.stdio-client.crt"],
      [join(orch, "transport.stdio-client.key"), "transport.stdio-client.key"],
    ]);
    await chmod(join(dir, "transport.stdio-client.key"), 0o600);
    const show = await runCli(["certs", "show", "--certs-dir", dir]);
    expect(show.code).toBe(1);
    expect(show.stdout).not.toMatch(/remove .* to have them reissued/);
    expect(show.stdout).toContain("ca.key is missing, so it cannot be issued here: issue the pair where the CA's key is");
    expect(show.stdout).not.toMatch(/GMT/);
    const serve = await runCli(["serve", "--orchestrator-addr", "127.0.0.1:9", "--certs-dir", dir], initialize);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toMatch(/the certificate expired on \d{4}-\d\d-\d\dT/);
    expect(serve.stderr).toContain("issue the pair where the CA's key is");
    // The reissue the message promises when ca.key is there.
    expect((await runCli(["certs", "init", "--certs-dir", orch, "--name", "transport.stdio-client"])).code).toBe(0);
    expect((await runCli(["certs", "show", "--certs-dir", orch])).stdout).toContain("no problems");
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
    // serve's embedded orchestrator uses a store the user names only when it holds a CA and its key
    // (docs/cli.md): the CA and the bridge's pair exist, both processes issue the orchestrator's pair.
    expect((await runCli(["certs", "init", "--certs-dir", dir, "--name", "transport.stdio-client"])).code).toBe(0);
    // serve's embedded orchestrator and its two QUIC clients, and the orchestrator command, at once
    const [bridge, orchestrator] = await Promise.all([connectBridge(["--certs-dir", dir]), startOrchestratorProcess(dir)]);
    cleanups.push(bridge.close);
    cleanups.push(orchestrator.stop);
    expect((await bridge.client.listTools()).tools.map((t) => t.name)).toContain("echo");
    await expectSoundStore(dir, ["orchestrator", "transport.stdio-client"]);
  }, 120_000);
});

describe("certs show names what serve, orchestrator and certs init refuse, with fixes that work", () => {
  async function store(name: string): Promise<string> {
    const dir = join(await temp(), name);
    expect((await runCli(["certs", "init", "--certs-dir", dir])).code).toBe(0);
    return dir;
  }

  it("an openssl ECDSA P-256 CA with its key: show names the key type and the fix; certs init and serve refuse it with the same fix", async () => {
    const dir = join(await temp(), "p256");
    await mkdir(dir, { mode: 0o700 });
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        join(dir, "ca.key"),
        "-out",
        join(dir, "ca.crt"),
        "-subj",
        "/CN=p256",
        "-days",
        "30",
      ],
      {
        stdio: "ignore",
      },
    );
    await chmod(join(dir, "ca.key"), 0o600);
    const problem = `${join(dir, "ca.crt")} has an ECDSA P-256 key, and orchestra-stdio issues certificates only with an Ed25519 CA key`;
    const fix = `run orchestra-stdio certs init --certs-dir ${dir}`;
    const show = await runCli(["certs", "show", "--certs-dir", dir]);
    expect(show.code).toBe(1);
    expect(show.stdout).not.toContain("no problems");
    expect(show.stdout).toContain(problem);
    expect(show.stdout).toContain(fix);
    const init = await runCli(["certs", "init", "--certs-dir", dir]);
    expect(init.code).toBe(1);
    expect(init.stderr).toContain(problem);
    expect(init.stderr).not.toContain("PKCS#8");
    const serve = await runCli(["serve", "--orchestrator-addr", "127.0.0.1:9", "--certs-dir", dir], initialize);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toContain(problem);
    expect(serve.stderr).toContain(fix);
    // The fix works: the two files moved away, certs init makes an Ed25519 CA there.
    await rename(join(dir, "ca.crt"), join(dir, "..", "old-ca.crt"));
    await rename(join(dir, "ca.key"), join(dir, "..", "old-ca.key"));
    expect((await runCli(["certs", "init", "--certs-dir", dir])).code).toBe(0);
    expect((await runCli(["certs", "show", "--certs-dir", dir])).stdout).toContain("no problems");
  }, 60_000);

  it("a party's certificate copied as ca.crt beside the real ca.key: the advice is one that works (not certs init --name ca)", async () => {
    const orch = await store("orchestrator");
    const dir = join(await temp(), "copied");
    await mkdir(dir, { mode: 0o700 });
    await copyFile(join(orch, "orchestrator.crt"), join(dir, "ca.crt"));
    await copyFile(join(orch, "ca.key"), join(dir, "ca.key"));
    const show = await runCli(["certs", "show", "--certs-dir", dir]);
    expect(show.code).toBe(1);
    expect(show.stdout).not.toContain("--name ca");
    expect(show.stdout).toContain(`ca.key does not match ca.crt: the public key of ${join(dir, "ca.key")} is not the one in ${join(dir, "ca.crt")}`);
    expect(show.stdout).toContain("copy the CA's ca.crt and ca.key together");
    // Following it (the orchestrator's ca.crt) gives a sound store.
    await copyFile(join(orch, "ca.crt"), join(dir, "ca.crt"));
    expect((await runCli(["certs", "show", "--certs-dir", dir])).stdout).toContain("no problems");
  }, 60_000);

  it("a pair issued by another CA: show gives serve's fix, which depends on ca.key", async () => {
    const mine = await store("mine");
    const other = await store("other");
    for (const ext of ["crt", "key"]) await copyFile(join(other, `transport.stdio-client.${ext}`), join(mine, `transport.stdio-client.${ext}`));
    const cert = join(mine, "transport.stdio-client.crt");
    const withKey = await runCli(["certs", "show", "--certs-dir", mine]);
    expect(withKey.code).toBe(1);
    expect(withKey.stdout).toContain(
      `${cert} is not signed by ${join(mine, "ca.crt")}, so peers that trust this CA will refuse it: remove it and ${join(mine, "transport.stdio-client.key")} to have them recreated; or copy the CA that signed it`,
    );
    const serve = await runCli(["serve", "--orchestrator-addr", "127.0.0.1:9", "--certs-dir", mine], initialize);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toContain(`remove it and ${join(mine, "transport.stdio-client.key")} to have them recreated; or copy the CA that signed it`);
    await rename(join(mine, "ca.key"), join(mine, "..", "mine-ca.key"));
    const withoutKey = await runCli(["certs", "show", "--certs-dir", mine]);
    expect(withoutKey.stdout).toContain(`refuse it: replace both with a pair that CA issued: ${join(mine, "ca.key")} is missing`);
  }, 60_000);

  it("a ca.key that cannot be read (here a FIFO: root reads a file whatever its mode) is reported by show, not taken for a missing key", async () => {
    const dir = await store("fifo");
    await rename(join(dir, "ca.key"), join(dir, "ca.key.real"));
    execFileSync("mkfifo", ["-m", "600", join(dir, "ca.key")]);
    const show = await runCli(["certs", "show", "--certs-dir", dir]);
    expect(show.code).toBe(1);
    expect(show.stdout).toContain(`problem: ${join(dir, "ca.key")} cannot be read (${join(dir, "ca.key")} is not a regular file), so no certificate can be issued here`);
    // A valid bridge pair needs no ca.key: serve does not read it (docs/cli.md "Exit status").
    const leaf = await runCli(["serve", "--orchestrator-addr", "127.0.0.1:9", "--certs-dir", dir], "");
    expect(leaf.code).toBe(0);
    // One that must be issued does.
    await rm(join(dir, "transport.stdio-client.crt"));
    const serve = await runCli(["serve", "--orchestrator-addr", "127.0.0.1:9", "--certs-dir", dir], initialize);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toContain(`cannot read ${join(dir, "ca.key")}`);
  }, 60_000);

  it("orchestrator refuses a --certs-dir (or ORCHESTRA_CERTS_DIR) with a literal ~ as certs init does: exit 2, the directory meant, nothing created", async () => {
    const cwd = await temp();
    for (const [args, env, from] of [
      [["orchestrator", "--certs-dir", "~/orchestra-test-certs", "--listen", "127.0.0.1:0"], {}, ""],
      [["orchestrator", "--listen", "127.0.0.1:0"], { ORCHESTRA_CERTS_DIR: "~/orchestra-test-certs" }, ' (from ORCHESTRA_CERTS_DIR="~/orchestra-test-certs")'],
    ] as const) {
      const run = spawnSync(process.execPath, [CLI, ...args], { cwd, env: cliEnvironment({ ...env, ORCHESTRA_LOG_FORMAT: "json" }), encoding: "utf8", timeout: 30_000 });
      expect(run.status).toBe(2);
      expect(run.stderr).not.toContain("READY");
      expect(run.stderr).toContain(
        `the path was given as \\"~/orchestra-test-certs\\" and \\"~\\" is not expanded here (only a shell expands it, at the start of an unquoted word): use $HOME or an absolute path (meant: --certs-dir ${join(homedir(), "orchestra-test-certs")}); nothing was created${from.replace(/"/g, '\\"')}`,
      );
      expect(existsSync(join(cwd, "~"))).toBe(false);
      expect(existsSync(join(homedir(), "orchestra-test-certs"))).toBe(false);
    }
  }, 60_000);
});
