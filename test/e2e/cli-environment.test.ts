/**
 * `serve` and `orchestrator` as MCP clients configure them: every option also from an
 * `ORCHESTRA_<OPTION>` variable (flags win), `--log-level` / `--log-format`, bad choice values
 * as usage errors (exit 2) listing the allowed values, logs for people on a terminal and JSON
 * lines otherwise, and nothing but MCP messages on stdout.
 */
import { spawn } from "node:child_process";
import { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { envVarName } from "../../src/cli/environment.js";
import { registerOrchestratorCommand } from "../../src/cli/orchestrator.js";
import { registerServeCommand } from "../../src/cli/serve.js";
import { requireCommand, skipTitle } from "../helpers/requires.js";
import { CLI, requireBuiltCli, runCli, startOrchestratorProcess, tempDir } from "./helpers.js";

const INITIALIZE = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n`;

/** The JSON log lines of a stderr text (other lines, e.g. READY, are left out). */
function jsonLogLines(stderr: string): Array<{ level: number; msg: string }> {
  return stderr
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { level: number; msg: string });
}

describe("environment variables", () => {
  beforeAll(() => requireBuiltCli());

  it("every serve and orchestrator option has its ORCHESTRA_ variable", () => {
    const program = new Command();
    registerServeCommand(program);
    registerOrchestratorCommand(program);
    for (const command of program.commands) {
      const options = command.options.filter((o) => o.long !== undefined);
      expect(options.map((o) => o.long)).toContain("--log-level");
      for (const option of options) expect([command.name(), option.long, option.envVar]).toEqual([command.name(), option.long, envVarName(option.long!)]);
    }
    expect(envVarName("--orchestrator-addr")).toBe("ORCHESTRA_ORCHESTRATOR_ADDR");
    expect(envVarName("--certs-dir")).toBe("ORCHESTRA_CERTS_DIR");
  });

  it("--help names the variables", async () => {
    const { stdout, code } = await runCli(["serve", "--help"]);
    expect(code).toBe(0);
    const help = stdout.replace(/\s+/g, " "); // help lines wrap at 80 columns
    for (const name of ["ORCHESTRA_ORCHESTRATOR_ADDR", "ORCHESTRA_CERTS_DIR", "ORCHESTRA_LOG_LEVEL", "ORCHESTRA_LOG_FORMAT"]) expect(help).toContain(`env: ${name}`);
  });

  it("a bad ORCHESTRA_LOG_LEVEL is a usage error listing the levels, not a crash", async () => {
    const { stdout, stderr, code } = await runCli(["serve"], INITIALIZE, { ORCHESTRA_LOG_LEVEL: "verbose" });
    expect(code).toBe(2);
    expect(stderr).toContain("ORCHESTRA_LOG_LEVEL");
    expect(stderr).toContain("trace, debug, info, warn, error, fatal, silent");
    expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(stdout).toBe("");
  });

  it("bad choice values from a flag or a variable are usage errors with the allowed values", async () => {
    for (const [args, env] of [
      [["serve", "--log-format", "xml"], {}],
      [["serve"], { ORCHESTRA_LOG_FORMAT: "xml" }],
      [["serve"], { ORCHESTRA_TRANSPORT: "udp" }],
      [["orchestrator"], { ORCHESTRA_TRANSPORT: "udp" }],
      [["orchestrator", "--log-level", "loud"], {}],
    ] as const) {
      const { stderr, code } = await runCli([...args], "", env);
      expect([args, env, code]).toEqual([args, env, 2]);
      expect(stderr).toMatch(/Allowed choices are (pretty, json|quic, tls|trace, debug)/);
    }
  });

  it("ORCHESTRA_ORCHESTRATOR_ADDR goes through the same check as the flag", async () => {
    const { stderr, code } = await runCli(["serve"], "", { ORCHESTRA_ORCHESTRATOR_ADDR: "no-port" });
    expect(code).toBe(2);
    expect(stderr).toContain("ORCHESTRA_ORCHESTRATOR_ADDR");
  });

  it("the level comes from the variable, and the flag wins over it", async () => {
    const quiet = await runCli(["serve"], INITIALIZE, { ORCHESTRA_LOG_LEVEL: "silent", ORCHESTRA_LOG_FORMAT: "json" });
    expect(quiet.code).toBe(0);
    expect(jsonLogLines(quiet.stderr)).toEqual([]);
    const loud = await runCli(["serve", "--log-level", "info"], INITIALIZE, { ORCHESTRA_LOG_LEVEL: "silent", ORCHESTRA_LOG_FORMAT: "json" });
    expect(loud.code).toBe(0);
    expect(jsonLogLines(loud.stderr).map((l) => l.msg)).toEqual([expect.stringContaining("embedded reference orchestrator at 127.0.0.1:")]);
  });

  describe("serve and orchestrator configured only through variables", () => {
    let certs: Awaited<ReturnType<typeof tempDir>>;
    let orchestrator: Awaited<ReturnType<typeof startOrchestratorProcess>>;
    beforeAll(async () => {
      certs = await tempDir();
      orchestrator = await startOrchestratorProcess(certs.path);
    });
    afterAll(async () => {
      await orchestrator?.stop();
      await certs?.remove();
    });

    it("serve connects to ORCHESTRA_ORCHESTRATOR_ADDR with ORCHESTRA_CERTS_DIR, logs one info line saying so, and writes only MCP on stdout", async () => {
      const { stdout, stderr, code } = await runCli(["serve"], INITIALIZE, {
        ORCHESTRA_ORCHESTRATOR_ADDR: orchestrator.address,
        ORCHESTRA_CERTS_DIR: certs.path,
        ORCHESTRA_LOG_FORMAT: "json",
      });
      expect(code).toBe(0);
      expect(jsonLogLines(stderr).map((l) => [l.level, l.msg])).toEqual([[30, `MCP on stdin/stdout, bridged to the orchestrator at ${orchestrator.address} (quic)`]]);
      const lines = stdout.trim().split("\n").map((l) => JSON.parse(l) as { id: number; result?: unknown });
      expect(lines).toEqual([expect.objectContaining({ id: 1, result: expect.objectContaining({ protocolVersion: "2025-06-18" }) })]);
    });

    it("orchestrator listens on ORCHESTRA_LISTEN", async () => {
      const child = spawn(process.execPath, [CLI, "orchestrator"], { env: { ...process.env, ORCHESTRA_LISTEN: "127.0.0.1:0", ORCHESTRA_CERTS_DIR: certs.path, ORCHESTRA_LOG_FORMAT: "json" } });
      let stderr = "";
      const ready = await new Promise<string>((resolve, reject) => {
        child.stderr.setEncoding("utf8").on("data", (d: string) => {
          stderr += d;
          const m = /READY (\S+)/.exec(stderr);
          if (m) resolve(m[1]!);
        });
        child.on("exit", (c) => reject(new Error(`exited ${c}: ${stderr}`)));
      });
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
      expect(ready).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(ready).not.toBe("127.0.0.1:50100");
    });
  });
});

const scriptMissing = requireCommand("script", ["--version"]);

/**
 * Runs `node CLI args` on a pseudo-terminal (util-linux `script`): stdin, stdout and stderr are
 * the terminal. `keys` are typed once the hint appeared; resolves with everything the terminal showed.
 */
function onTerminal(args: string[], keys: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const command = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(" ");
  return new Promise((resolve, reject) => {
    const child = spawn("script", ["-qec", command, "/dev/null"], { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let typed = false;
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      if (!typed && out.includes("Ctrl-D")) {
        typed = true;
        child.stdin.write(keys);
      }
    });
    child.on("error", reject);
    child.on("close", () => resolve(out));
  });
}

describe.skipIf(scriptMissing !== undefined)(skipTitle("serve on a terminal", scriptMissing), () => {
  beforeAll(() => requireBuiltCli());

  it("prints the stdin hint and human-readable log lines; Ctrl-D ends it", async () => {
    const out = await onTerminal(["serve"], "\x04");
    expect(out).toContain("speaks MCP: one JSON-RPC message per line on stdin");
    expect(out).toMatch(/INFO.*serve: MCP on stdin\/stdout, bridged to the embedded reference orchestrator at 127\.0\.0\.1:\d+/);
    expect(out).not.toContain('"level":');
  });

  it("--log-format json gives JSON lines on a terminal too", async () => {
    const out = await onTerminal(["serve", "--log-format", "json"], "\x04");
    expect(out).toMatch(/"level":30,.*"msg":"MCP on stdin\/stdout, bridged to the embedded reference orchestrator/);
  });

  it("prints no hint when stdin is not a terminal", async () => {
    const { stderr } = await runCli(["serve"], INITIALIZE, { ORCHESTRA_LOG_LEVEL: "silent" });
    expect(stderr).not.toContain("Ctrl-D");
  });
});
