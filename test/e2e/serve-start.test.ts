/**
 * What `serve` does before it answers: it loads the `serve` command alone and the validators of
 * the negotiated MCP revision alone (its small start module before the answer), and `initialize` is answered without the orchestrator (here
 * nothing listens at the address given).
 */
import { spawn, spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BRIDGE_CERT_NAME, ensureCertStore } from "../../src/pki/store.js";
import { LOADED_MODULES_HOOK, loadedModules } from "../helpers/loaded-modules.js";
import { CLI, cliEnvironment, requireBuiltCli, ROOT, tempDir } from "../helpers/cli.js";
import { GENERATED_VERSIONS } from "../../src/gen/mcp/catalog.js";

/** A loopback port nobody listens on (UDP or TCP): one just released by a TCP listener. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Runs `serve` (with the module report of ../helpers/loaded-modules.ts) against an address where
 * no orchestrator listens, sends `initialize` for `version`, waits for its answer, closes stdin.
 */
async function serveInitialize(
  certsDir: string,
  version: string,
  logLevel = "warn",
  nodeArgs: readonly string[] = [],
  env: Readonly<Record<string, string>> = {},
): Promise<{ answer: Record<string, unknown>; answeredAt: number; modules: string[]; stderr: string; code: number | null }> {
  const port = await closedPort();
  const child = spawn(process.execPath, [...nodeArgs, "--import", LOADED_MODULES_HOOK, CLI, "serve", "--orchestrator-addr", `127.0.0.1:${port}`, "--certs-dir", certsDir], {
    env: cliEnvironment({ ORCHESTRA_LOG_LEVEL: logLevel, ORCHESTRA_LOG_FORMAT: "json", ...env }),
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  const answer = await new Promise<Record<string, unknown>>((resolve, reject) => {
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
      const line = stdout.split("\n")[0];
      if (stdout.includes("\n") && line) resolve(JSON.parse(line) as Record<string, unknown>);
    });
    child.on("close", () => reject(new Error(`serve exited before answering initialize; stderr:\n${stderr}`)));
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n`,
    );
  });
  const answeredAt = Date.now();
  child.stdin.end();
  const code = await exited;
  return { answer, answeredAt, modules: loadedModules(stderr, { beforeFirstStdout: true }), stderr, code };
}

/**
 * `--import` preload that makes `serve`'s start slow: the first script of the CLI bundle compiled
 * after `serve` set its first V8 flag (the modules of its start, src/cli/serve.ts) blocks the
 * main thread for 1.5 s, longer than `serve`'s end of start-up (1 s).
 */
const SLOW_START = `data:text/javascript,${encodeURIComponent(
  [
    'import { subscribe } from "node:diagnostics_channel";',
    "let serving = false;",
    "let slowed = false;",
    'subscribe("orchestra-stdio:v8-flags", () => (serving = true));',
    'subscribe("orchestra-stdio:script", () => { if (serving && !slowed) { slowed = true; Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500); } });',
  ].join("\n"),
)}`;

describe("serve start-up", () => {
  let store: { path: string; remove: () => Promise<void> };
  beforeAll(async () => {
    requireBuiltCli();
    store = await tempDir("orchestra-serve-start-");
    await ensureCertStore(store.path, BRIDGE_CERT_NAME);
  });
  afterAll(() => store?.remove());

  it.each(["2025-06-18", "2025-11-25"])(
    "answers initialize (%s) with no orchestrator listening, loading only that revision's start validators, only the serve command and nothing of the calls",
    async (version) => {
      const { answer, modules, code } = await serveInitialize(store.path, version);
      expect(answer).toMatchObject({ jsonrpc: "2.0", id: 1, result: { protocolVersion: version } });
      expect(code).toBe(0);
      // Before its answer: the revision's small start module alone (the whole one follows it).
      const validators = modules.filter((m) => /\/gen\/mcp\/[^/]+\/validators/.test(m)).map((m) => /\/gen\/mcp\/([^/]+\/validators[^/]*)$/.exec(m)![1]);
      expect(validators).toEqual([`${version}/validators-start.cjs`]);
      expect(GENERATED_VERSIONS.length).toBeGreaterThan(1);
      const dist = modules.filter((m) => m.includes("/dist/")).map((m) => m.slice(m.lastIndexOf("/dist/") + 1));
      expect(dist).toContain("dist/cli/serve.js");
      expect(dist.filter((m) => /^dist\/(cli\/(validate|orchestrator|certs)\.js|validate\/)/.test(m))).toEqual([]);
      // Nothing of the calls loads before the answer: protobuf, the translators, uuid, the transport.
      const forCalls =
        /\/@bufbuild\/protobuf\/|\/node_modules\/uuid\/|\/dist\/(translate\/(tools|streams|prompts|resources|struct)|gen\/proto\/|quic\/(?!address)|tls\/|transport\/rpc-client)/;
      expect(modules.filter((m) => forCalls.test(m))).toEqual([]);
      // The cert store is checked after the answer: none of its code (nor @peculiar/x509) loads before it.
      expect(dist.filter((m) => /^dist\/pki\/(?!default-certs-dir\.js$)/.test(m))).toEqual([]);
      expect(modules.filter((m) => m.includes("/@peculiar/x509/"))).toEqual([]);
    },
    60_000,
  );

  it("answers initialize without loading an ES module (its bin is CommonJS, the bundle's scripts run through vm.Script)", async () => {
    // A CommonJS preload (an --import one would be an ES module itself) that reports, when the
    // first answer is written, whether Node has run an ES module job by then (its first ES module
    // loads internal/modules/esm/module_job; `node:module` alone loads the loader, not that).
    const preload = join(store.path, "esm-loader-probe.cjs");
    await writeFile(
      preload,
      [
        "const write = process.stdout.write;",
        "process.stdout.write = function (...args) {",
        '  process.stderr.write(`ES module loaded at the answer: ${process.moduleLoadList.includes("NativeModule internal/modules/esm/module_job")}\\n`);',
        "  process.stdout.write = write;",
        "  return write.apply(this, args);",
        "};",
      ].join("\n"),
    );
    const bin = join(ROOT, (JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { bin: Record<string, string> }).bin["orchestra-stdio"]!);
    const initialize = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    const run = spawnSync(process.execPath, ["--require", preload, bin, "serve", "--orchestrator-addr", `127.0.0.1:${await closedPort()}`, "--certs-dir", store.path], {
      input: `${initialize}\n`,
      env: cliEnvironment({ ORCHESTRA_LOG_LEVEL: "warn" }),
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(run.stdout).toContain('"protocolVersion":"2025-06-18"');
    expect(run.stderr).toContain("ES module loaded at the answer: false");
  });

  it.each<[string, string[], Record<string, string>]>([
    ["", [], {}],
    // The end of start-up is timed from the answer: a start slower than it does not load pino first.
    [", also when the start takes longer than serve's end of start-up", ["--import", SLOW_START], {}],
    // Its warning is logged by a preAction hook, before serve's action: held all the same.
    [", also with an ORCHESTRA_ variable set that serve does not read", [], { ORCHESTRA_CERT_DIR: "/x" }],
  ])(
    "answers initialize before loading pino%s: the info line logged before the answer is written later, with the time it was logged",
    async (_, nodeArgs, env) => {
      const { answer, answeredAt, modules, stderr, code } = await serveInitialize(store.path, "2025-06-18", "info", nodeArgs, env);
      expect(answer).toMatchObject({ id: 1, result: { protocolVersion: "2025-06-18" } });
      expect(code).toBe(0);
      expect(modules.filter((m) => /\/node_modules\/(pino|pino-pretty|sonic-boom|thread-stream)\//.test(m))).toEqual([]);
      const records = stderr
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { level: number; time: number; component: string; msg: string });
      const serving = records.filter((r) => r.component === "serve" && r.msg.includes("bridged to the orchestrator at 127.0.0.1:"));
      expect(serving).toHaveLength(1);
      expect(serving[0]!.level).toBe(30);
      expect(serving[0]!.time).toBeLessThanOrEqual(answeredAt);
      const warnings = records.filter((r) => r.component === "environment").map((r) => [r.level, r.msg]);
      expect(warnings).toEqual(Object.keys(env).map((name) => [40, expect.stringContaining(`${name} is set but \`orchestra-stdio serve\` reads no such variable`)]));
    },
    60_000,
  );

  it("a client that has sent nothing yet gets the log lines of the start all the same (the start is over while idle)", async () => {
    const port = await closedPort();
    const child = spawn(process.execPath, [CLI, "serve", "--orchestrator-addr", `127.0.0.1:${port}`, "--certs-dir", store.path], {
      env: cliEnvironment({ ORCHESTRA_LOG_LEVEL: "info", ORCHESTRA_LOG_FORMAT: "json" }),
      stdio: ["pipe", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    let stderr = "";
    // stdin stays open and empty until the line is there: without an end of start-up while idle it would come only at the exit.
    await new Promise<void>((resolve, reject) => {
      child.stderr.setEncoding("utf8").on("data", (d: string) => {
        stderr += d;
        if (stderr.includes("bridged to the orchestrator at 127.0.0.1:")) resolve();
      });
      child.on("close", () => reject(new Error(`serve exited; stderr:\n${stderr}`)));
    });
    child.stdin.end();
    expect(await exited).toBe(0);
  }, 60_000);
});

describe("serve start-up, embedded orchestrator", () => {
  let cache: { path: string; remove: () => Promise<void> };
  beforeAll(async () => {
    requireBuiltCli();
    cache = await tempDir("orchestra-serve-cache-");
  });
  afterAll(() => cache?.remove());

  /** One embedded `serve` (with the module report unless `nodeArgs` are given): initialize, one tools/call, stdin closed. */
  async function embeddedSession(
    nodeArgs: readonly string[] = ["--import", LOADED_MODULES_HOOK],
  ): Promise<{ lines: Array<Record<string, unknown>>; modules: string[]; stderr: string; code: number | null }> {
    const child = spawn(process.execPath, [...nodeArgs, CLI, "serve"], {
      env: cliEnvironment({ ORCHESTRA_LOG_LEVEL: "warn", XDG_CACHE_HOME: cache.path }),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    let stdout = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    child.stdin.end(
      [
        { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { text: "hi" } } },
      ]
        .map((m) => `${JSON.stringify(m)}\n`)
        .join(""),
    );
    const code = await exited;
    const lines = stdout
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    return { lines, modules: loadedModules(stderr), stderr, code };
  }

  it("makes its cert store once per user: a later start creates no certificate (no @peculiar/x509)", async () => {
    const first = await embeddedSession();
    expect(first.code).toBe(0);
    expect(first.lines.map((l) => l.id)).toEqual([1, 2]);
    expect(first.modules.some((m) => m.includes("/@peculiar/x509/"))).toBe(true); // the CA was made
    const second = await embeddedSession();
    expect(second.code).toBe(0);
    expect(second.lines[1]).toMatchObject({ id: 2, result: { content: [{ type: "text", text: "hi" }] } });
    expect(second.modules.filter((m) => m.includes("/@peculiar/"))).toEqual([]);
  }, 120_000);

  it("carries a tools/call through the bridge and the embedded orchestrator with the generated codec: no protobuf-es, no descriptors", async () => {
    const { lines, modules, code } = await embeddedSession();
    expect(code).toBe(0);
    expect(lines[1]).toMatchObject({ id: 2, result: { content: [{ type: "text", text: "hi" }] } });
    expect(modules.some((m) => m.endsWith("/dist/gen/proto/orchestra/plugin/v1/plugin_codec.js"))).toBe(true);
    expect(modules.filter((m) => m.includes("/@bufbuild/") || m.endsWith("_pb.js"))).toEqual([]);
  }, 60_000);

  it("carries its first tools/call over QUIC without Node's ES module resolver or node:dns (the binding found without @matrixai/quic's exports map, an IP address not looked up)", async () => {
    // A CommonJS preload (an --import one would load the ES module loader itself) that reports
    // at the exit which of Node's own modules the process loaded.
    const preload = join(cache.path, "builtins-probe.cjs");
    await writeFile(
      preload,
      'process.on("exit", () => process.stderr.write(`BUILTINS ${JSON.stringify(process.moduleLoadList.filter((m) => m.startsWith("NativeModule ")).map((m) => m.slice(13)))}\\n`));\n',
    );
    const { lines, stderr, code } = await embeddedSession(["--require", preload]);
    expect(code).toBe(0);
    expect(lines[1]).toMatchObject({ id: 2, result: { content: [{ type: "text", text: "hi" }] } });
    const builtins = JSON.parse(/^BUILTINS (.*)$/m.exec(stderr)![1]!) as string[];
    expect(builtins).toContain("dgram"); // the probe sees what QUIC loaded
    expect(builtins.filter((m) => m === "internal/modules/esm/resolve" || m === "dns" || m === "dns/promises")).toEqual([]);
  }, 60_000);

  it("a later session calls the tool with the argument validator an earlier one compiled: no ajv", async () => {
    await embeddedSession();
    const { lines, modules, code } = await embeddedSession();
    expect(code).toBe(0);
    expect(lines[1]).toMatchObject({ id: 2, result: { content: [{ type: "text", text: "hi" }] } });
    expect(modules.filter((m) => m.includes("/node_modules/ajv/"))).toEqual([]);
    expect(readdirSync(join(cache.path, "orchestra-stdio", "tool-validators")).filter((f) => f.endsWith(".cjs")).length).toBeGreaterThan(0);
  }, 60_000);
});

describe("serve start-up, embedded orchestrator still starting", () => {
  const GATED = join(ROOT, "test/fixtures/tools/gated-tools.mjs");
  let dir: { path: string; remove: () => Promise<void> };
  beforeAll(async () => {
    requireBuiltCli();
    dir = await tempDir("orchestra-serve-gate-");
  });
  afterAll(() => dir?.remove());

  /**
   * Starts an embedded `serve` whose `--tools` module waits for a gate file, sends initialize and
   * a tools/call, waits for the initialize answer, checks the call is not answered, opens the gate.
   */
  async function gatedSession(name: string, fail: boolean): Promise<{ lines: Array<Record<string, unknown>>; stderr: string; code: number | null; beforeGate: string[] }> {
    const gate = join(dir.path, `${name}.gate`);
    const child = spawn(process.execPath, [CLI, "serve", "--no-builtins", "--tools", GATED], {
      env: cliEnvironment({ ORCHESTRA_LOG_LEVEL: "warn", XDG_CACHE_HOME: join(dir.path, "cache"), GATED_TOOLS_GATE: gate, GATED_TOOLS_FAIL: fail ? "1" : "0" }),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    let stdout = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    const lines = () => stdout.split("\n").filter((l) => l !== "");
    let onLine: (() => void) | undefined;
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
      onLine?.();
    });
    const answered = (count: number) =>
      new Promise<void>((resolve, reject) => {
        onLine = () => lines().length >= count && resolve();
        onLine();
        void exited.then(() => reject(new Error(`serve exited with ${lines().length} answers; stderr:\n${stderr}`)));
      });
    child.stdin.write(
      [
        { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "gated", arguments: {} } },
      ]
        .map((m) => `${JSON.stringify(m)}\n`)
        .join(""),
    );
    await answered(1);
    // The module's top level is still waiting for the gate: the orchestrator has not started.
    const beforeGate = lines();
    await writeFile(gate, "");
    if (fail) {
      const code = await exited;
      return { lines: lines().map((l) => JSON.parse(l) as Record<string, unknown>), stderr, code, beforeGate };
    }
    await answered(2);
    child.stdin.end();
    const code = await exited;
    return { lines: lines().map((l) => JSON.parse(l) as Record<string, unknown>), stderr, code, beforeGate };
  }

  it("answers initialize before the orchestrator is ready; the call waits for it, then goes through", async () => {
    const { lines, beforeGate, code } = await gatedSession("ok", false);
    expect(beforeGate.map((l) => (JSON.parse(l) as { id: unknown }).id)).toEqual([1]);
    expect(lines[0]).toMatchObject({ id: 1, result: { protocolVersion: "2025-06-18", capabilities: { tools: { listChanged: true } } } });
    expect(lines[1]).toMatchObject({ id: 2, result: { content: [{ type: "text", text: "through the gate" }] } });
    expect(lines).toHaveLength(2);
    expect(code).toBe(0);
  }, 120_000);

  it("a start-up failure after initialize answers the waiting call with -32603 and exits 1 with the module's message", async () => {
    const { lines, stderr, code } = await gatedSession("fail", true);
    expect(code).toBe(1);
    expect(stderr).toContain("deliberate start-up failure");
    expect(lines.map((l) => l.id)).toEqual([1, 2]);
    expect(lines[1]).toMatchObject({ id: 2, error: { code: -32603, message: expect.stringContaining("deliberate start-up failure") } });
  }, 120_000);
});
