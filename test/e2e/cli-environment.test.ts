/**
 * `serve` and `orchestrator` as MCP clients configure them: every option also from an
 * `ORCHESTRA_<OPTION>` variable (flags win), `--log-level` / `--log-format`, bad choice values
 * as usage errors (exit 2) listing the allowed values, logs for people on a terminal and JSON
 * lines otherwise, and nothing but MCP messages on stdout.
 */
import { spawn } from "node:child_process";
import { readdir } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { envVarName } from "../../src/cli/environment.js";
import { registerOrchestratorCommand } from "../../src/cli/orchestrator.js";
import { registerServeCommand } from "../../src/cli/serve.js";
import { requireCommand, skipTitle } from "../helpers/requires.js";
import { CLI, cliEnvironment, expectStoreFaultAnswers, INITIALIZE_THEN_TOOLS_LIST, requireBuiltCli, runCli, startOrchestratorProcess, tempDir } from "../helpers/cli.js";

const INITIALIZE = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n`;

/** The JSON log lines of a stderr text (other lines, e.g. READY, are left out). */
function jsonLogLines(stderr: string): Array<{ level: number; msg: string; certsDir?: string; closest?: string }> {
  return stderr
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { level: number; msg: string });
}

/**
 * Runs `serve` with `initialize` on stdin and expects exit 2 with one JSON `error` line (whose
 * message it returns) and nothing on stdout, or, with an address (the cert store is checked after
 * the answer), the answers of {@link expectStoreFaultAnswers}.
 */
async function startRefusal(args: readonly string[], env: NodeJS.ProcessEnv, withAddress = false): Promise<string> {
  const { stdout, stderr, code } = await runCli([...args], withAddress ? INITIALIZE_THEN_TOOLS_LIST : INITIALIZE, { ...env, ORCHESTRA_LOG_FORMAT: "json" });
  expect(code).toBe(2);
  const lines = jsonLogLines(stderr);
  const errors = lines.filter((l) => l.level >= 50);
  expect(errors).toHaveLength(1);
  if (withAddress) expectStoreFaultAnswers(stdout, errors[0]!.msg);
  else {
    expect(lines).toEqual(errors);
    expect(stdout).toBe("");
  }
  return errors[0]!.msg;
}

const TOOLS_LIST = `${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })}\n`;

/** The tool names of serve's tools/list answer (id 2). */
function toolNames(stdout: string): string[] {
  const answer = stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { id: number; result?: { tools: Array<{ name: string }> } })
    .find((m) => m.id === 2);
  return answer?.result?.tools.map((t) => t.name) ?? [];
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

  it("a boolean variable is on for 1/true/yes, off for 0/false/no/empty, and a usage error naming it otherwise", async () => {
    for (const value of ["1", "true", "YES"]) {
      const { stdout, code } = await runCli(["serve"], INITIALIZE + TOOLS_LIST, { ORCHESTRA_NO_BUILTINS: value, ORCHESTRA_LOG_LEVEL: "silent" });
      expect([value, code, toolNames(stdout)]).toEqual([value, 0, []]);
    }
    for (const value of ["0", "false", "No", ""]) {
      const { stdout, code } = await runCli(["serve"], INITIALIZE + TOOLS_LIST, { ORCHESTRA_NO_BUILTINS: value, ORCHESTRA_LOG_LEVEL: "silent" });
      expect([value, code, toolNames(stdout)]).toEqual([value, 0, expect.arrayContaining(["echo"])]);
    }
    const bad = await runCli(["serve"], INITIALIZE, { ORCHESTRA_NO_BUILTINS: "maybe" });
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toContain('ORCHESTRA_NO_BUILTINS="maybe" is not a boolean: use 1, true or yes');
  });

  it("ORCHESTRA_NO_BUILTINS=false does not conflict with an address; ORCHESTRA_TOOLS does, as a usage error naming the variable and pointing at --help", async () => {
    const off = await runCli(["serve", "--orchestrator-addr", "127.0.0.1:9", "--certs-dir", "/nonexistent-orchestra-store"], INITIALIZE, { ORCHESTRA_NO_BUILTINS: "false" });
    expect(off.stderr).not.toContain("cannot be used with");
    const conflict = await runCli(["serve", "--orchestrator-addr", "127.0.0.1:9"], INITIALIZE, { ORCHESTRA_TOOLS: "./tools.mjs" });
    expect(conflict.code).toBe(2);
    expect(conflict.stdout).toBe("");
    expect(conflict.stderr).toContain(
      '--tools and --no-builtins configure the embedded orchestrator; they cannot be used with --orchestrator-addr (given: ORCHESTRA_TOOLS="./tools.mjs", --orchestrator-addr)',
    );
    expect(conflict.stderr).toContain("see `orchestra-stdio serve --help`");
    expect(conflict.stderr).not.toContain("Usage:");
  });

  it("a usage error prints the problem and where the help is, not the help itself", async () => {
    const { stderr, code } = await runCli(["serve", "--no-such-flag"]);
    expect(code).toBe(2);
    expect(stderr.trim().split("\n")).toEqual(["error: unknown option '--no-such-flag'", "see `orchestra-stdio serve --help`"]);
  });

  it("an ORCHESTRA_ variable the command does not read is a warning naming the closest one", async () => {
    const { stderr, code } = await runCli(["serve"], INITIALIZE, { ORCHESTRA_ADDR: "127.0.0.1:50100", ORCHESTRA_CERT_DIR: "/x", ORCHESTRA_LOG_FORMAT: "json" });
    expect(code).toBe(0);
    const warnings = jsonLogLines(stderr).filter((l) => l.level === 40);
    expect(warnings.map((l) => [l.closest, l.msg])).toEqual([
      ["ORCHESTRA_ORCHESTRATOR_ADDR", "ORCHESTRA_ADDR is set but `orchestra-stdio serve` reads no such variable (ignored); did you mean ORCHESTRA_ORCHESTRATOR_ADDR?"],
      ["ORCHESTRA_CERTS_DIR", "ORCHESTRA_CERT_DIR is set but `orchestra-stdio serve` reads no such variable (ignored); did you mean ORCHESTRA_CERTS_DIR?"],
    ]);
  });

  it("suggests a variable only when it is close: another case first, then shared words, then a few edits", async () => {
    const { stderr, code } = await runCli(["serve"], INITIALIZE, {
      orchestra_tools: "./t.mjs",
      ORCHESTRA_FOO: "1",
      ORCHESTRA_TOLS: "./t.mjs",
      ORCHESTRA_NO_TLS: "1",
      ORCHESTRA_LOG_FORMAT: "json",
    });
    expect(code).toBe(0);
    const warnings = jsonLogLines(stderr).filter((l) => l.level === 40);
    expect(warnings.map((l) => [l.closest, l.msg])).toEqual([
      [undefined, "ORCHESTRA_FOO is set but `orchestra-stdio serve` reads no such variable (ignored)"],
      [undefined, "ORCHESTRA_NO_TLS is set but `orchestra-stdio serve` reads no such variable (ignored)"],
      ["ORCHESTRA_TOOLS", "ORCHESTRA_TOLS is set but `orchestra-stdio serve` reads no such variable (ignored); did you mean ORCHESTRA_TOOLS?"],
      ["ORCHESTRA_TOOLS", "orchestra_tools is set but `orchestra-stdio serve` reads no such variable (ignored); did you mean ORCHESTRA_TOOLS? (names are case-sensitive)"],
    ]);
  });

  it("certs and validate warn about the ORCHESTRA_ variables they do not read, as plain warning lines", async () => {
    const store = await tempDir();
    try {
      const show = await runCli(["certs", "show", "--certs-dir", join(store.path, "none")], "", { ORCHESTRA_CERT_DIR: "/x" });
      expect(show.stderr).toBe("warning: ORCHESTRA_CERT_DIR is set but `orchestra-stdio certs show` reads no such variable (ignored); did you mean ORCHESTRA_CERTS_DIR?\n");
      // The variable it reads is no warning.
      expect((await runCli(["certs", "show"], "", { ORCHESTRA_CERTS_DIR: join(store.path, "none") })).stderr).toBe("");
      const validate = await runCli(["validate", "-"], INITIALIZE, { ORCHESTRA_CERTS_DIR: "/x" });
      expect(validate.stderr).toContain("warning: ORCHESTRA_CERTS_DIR is set but `orchestra-stdio validate` reads no such variable (ignored)\n");
      expect(validate.stdout).not.toContain("ORCHESTRA_CERTS_DIR");
    } finally {
      await store.remove();
    }
  });

  it("a usage error with a misspelt variable set prints the two lines, then the variable's warning (once)", async () => {
    const unknown = await runCli(["serve", "--bogus"], "", { ORCHESTRA_CERT_DIR: "/x" });
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr.split("\n")).toEqual([
      "error: unknown option '--bogus'",
      "see `orchestra-stdio serve --help`",
      "warning: ORCHESTRA_CERT_DIR is set but `orchestra-stdio serve` reads no such variable (ignored); did you mean ORCHESTRA_CERTS_DIR?",
      "",
    ]);
    // An error raised after the warning was logged (options that cannot go together) does not repeat it.
    const conflict = await runCli(["serve", "--orchestrator-addr", "127.0.0.1:9", "--no-builtins"], "", { ORCHESTRA_CERT_DIR: "/x", ORCHESTRA_LOG_FORMAT: "json" });
    expect(conflict.code).toBe(2);
    expect(conflict.stderr.split("ORCHESTRA_CERT_DIR is set").length).toBe(2);
  });

  it("no command, a command with sub-commands alone, and help of an unknown command are usage errors, not the whole help", async () => {
    for (const [args, lines] of [
      [[], ["error: missing command: serve, orchestrator, validate or certs", "see `orchestra-stdio --help`"]],
      [["certs"], ["error: missing command: certs init or certs show", "see `orchestra-stdio certs --help`"]],
      [
        ["help", "bogus"],
        ["error: unknown command 'bogus'", "see `orchestra-stdio --help`"],
      ],
      [
        ["help", "serv"],
        ["error: unknown command 'serv'", "(Did you mean serve?)", "see `orchestra-stdio --help`"],
      ],
    ] as const) {
      const run = await runCli([...args]);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr.trim().split("\n")).toEqual(lines);
    }
    const help = await runCli(["help", "certs"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: orchestra-stdio certs");
  });

  it("without an address, serve refuses to create a CA in a given cert store that has none (exit 2), and writes nothing there", async () => {
    const store = await tempDir();
    try {
      const { stdout, stderr, code } = await runCli(["serve"], INITIALIZE, { ORCHESTRA_CERTS_DIR: store.path, ORCHESTRA_LOG_FORMAT: "json" });
      expect(code).toBe(2);
      expect(stdout).toBe("");
      expect(jsonLogLines(stderr).map((l) => [l.level, l.msg])).toEqual([
        [50, expect.stringContaining(`the embedded reference orchestrator would create a new CA in ${store.path} (ORCHESTRA_CERTS_DIR=`)],
      ]);
      expect(await readdir(store.path)).toEqual([]);
      // A store with its CA's key (certs init) is the embedded orchestrator's to use.
      expect((await runCli(["certs", "init", "--certs-dir", store.path])).code).toBe(0);
      const ok = await runCli(["serve", "--certs-dir", store.path], INITIALIZE, { ORCHESTRA_LOG_FORMAT: "json" });
      expect(ok.code).toBe(0);
      expect(ok.stdout).toContain('"protocolVersion":"2025-06-18"');
    } finally {
      await store.remove();
    }
  });

  it("without an address, a cert store given with a literal ~ gets the ~ hint, and the advice names the home directory, not ./~", async () => {
    for (const [args, env] of [
      [["serve", "--certs-dir", "~/.orchestra/certs"], {}],
      [["serve"], { ORCHESTRA_CERTS_DIR: "~/.orchestra/certs" }],
    ] as const) {
      const msg = await startRefusal(args, env);
      // Beside the path it made (./~/…), in the sentence that names it, not glued before that sentence.
      expect(msg).toMatch(
        /^no --orchestrator-addr \(nor ORCHESTRA_ORCHESTRATOR_ADDR\): the embedded reference orchestrator would create a new CA in \S+\/~\/\.orchestra\/certs \([^;]+; the path was given as "~\/\.orchestra\/certs" and "~" is not expanded here .*: use \$HOME or an absolute path\), which holds no ca\.crt/,
      );
      expect(msg).not.toContain("Otherwise, no --orchestrator-addr");
      expect(msg).toContain(`certs init --certs-dir ${join(homedir(), ".orchestra", "certs")}\``);
      expect(msg).not.toContain(`certs init --certs-dir ${join(process.cwd(), "~")}`);
    }
  });

  it("with an address, a cert store given with a literal ~ gets the ~ hint too, and the advice names the home directory, not /~ or ./~", async () => {
    const meant = join(homedir(), ".orchestra", "certs");
    for (const [args, env] of [
      [["serve", "--orchestrator-addr", "127.0.0.1:51732", "--certs-dir", "~/.orchestra/certs"], {}],
      [["serve", "--orchestrator-addr", "127.0.0.1:51732"], { ORCHESTRA_CERTS_DIR: "~/.orchestra/certs" }],
    ] as const) {
      const msg = await startRefusal(args, env, true);
      expect(msg).toContain('the path was given as "~/.orchestra/certs" and "~" is not expanded here');
      expect(msg).toContain(`Otherwise, copy ca.crt from the orchestrator's cert store (its --certs-dir; default ~/.orchestra/certs on its host) into ${meant}, `);
      expect(msg).not.toMatch(/into \S*\/~\//);
    }
  });

  it("without an address, a named cert store with a CA and its key serves the embedded demo: an error line says so and initialize's instructions too", async () => {
    const store = await tempDir();
    try {
      expect((await runCli(["certs", "init", "--certs-dir", store.path])).code).toBe(0);
      const { stdout, stderr, code } = await runCli(["serve"], INITIALIZE, { ORCHESTRA_CERTS_DIR: store.path, ORCHESTRA_LOG_FORMAT: "json" });
      expect(code).toBe(0);
      const errors = jsonLogLines(stderr).filter((l) => l.level === 50);
      expect(errors).toHaveLength(1);
      expect(errors[0]!.msg).toContain(`a cert store was given (ORCHESTRA_CERTS_DIR=${JSON.stringify(store.path)})`);
      expect(errors[0]!.msg).toContain("EMBEDDED DEMO ORCHESTRATOR");
      expect(errors[0]!.msg).toContain("ORCHESTRA_ORCHESTRATOR_ADDR");
      const answer = JSON.parse(stdout.trim().split("\n")[0]!) as { result: { instructions?: string } };
      expect(answer.result.instructions).toMatch(/embedded demo orchestrator/);
      // Without a named store the embedded orchestrator is what was asked for: no error, no instructions.
      const plain = await runCli(["serve"], INITIALIZE, { ORCHESTRA_LOG_FORMAT: "json" });
      expect(plain.code).toBe(0);
      expect(jsonLogLines(plain.stderr).filter((l) => l.level === 50)).toEqual([]);
      expect((JSON.parse(plain.stdout.trim().split("\n")[0]!) as { result: { instructions?: string } }).result.instructions).toBeUndefined();
    } finally {
      await store.remove();
    }
  });

  it("a module that cannot be loaded from ORCHESTRA_TOOLS names the variable (serve and orchestrator); from --tools it does not", async () => {
    const store = await tempDir();
    try {
      const missing = join(store.path, "no-such-module.mjs");
      const fromEnv = await runCli(["serve"], INITIALIZE, { ORCHESTRA_TOOLS: missing, ORCHESTRA_LOG_FORMAT: "json" });
      expect(fromEnv.code).toBe(1);
      expect(
        jsonLogLines(fromEnv.stderr)
          .filter((l) => l.level === 50)
          .map((l) => l.msg),
      ).toEqual([expect.stringMatching(new RegExp(`^cannot load tool module .* \\(from ORCHESTRA_TOOLS=${JSON.stringify(missing).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\)$`))]);
      const fromFlag = await runCli(["serve", "--tools", missing], INITIALIZE, { ORCHESTRA_LOG_FORMAT: "json" });
      expect(fromFlag.code).toBe(1);
      expect(fromFlag.stderr).toContain("cannot load tool module");
      expect(fromFlag.stderr).not.toContain("ORCHESTRA_TOOLS");
      const orchestrator = await runCli(["orchestrator", "--listen", "127.0.0.1:0", "--certs-dir", store.path], "", { ORCHESTRA_TOOLS: missing, ORCHESTRA_LOG_FORMAT: "json" });
      expect(orchestrator.code).toBe(1);
      expect(jsonLogLines(orchestrator.stderr).map((l) => l.msg)).toContainEqual(expect.stringContaining(`(from ORCHESTRA_TOOLS=${JSON.stringify(missing)})`));
    } finally {
      await store.remove();
    }
  });

  it("a start-up failure is one JSON error line when stderr is not a terminal: a capture file that cannot be opened, embedded or with an address (no line saying it serves first)", async () => {
    const store = await tempDir();
    try {
      expect((await runCli(["certs", "init", "--certs-dir", store.path])).code).toBe(0);
      for (const args of [[], ["--orchestrator-addr", "127.0.0.1:51733", "--certs-dir", store.path]]) {
        // A name longer than the file system allows: only opening it can tell (a missing directory is a usage error).
        const { stdout, stderr, code } = await runCli(["serve", "--capture", join(tmpdir(), `${"c".repeat(300)}.jsonl`), ...args], INITIALIZE);
        expect(code).toBe(1);
        expect(stdout).toBe("");
        expect(
          stderr
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l) as { level: number; msg: string }),
        ).toEqual([expect.objectContaining({ level: 50, msg: expect.stringContaining("cannot open the capture file") })]);
      }
    } finally {
      await store.remove();
    }
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
      const lines = stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { id: number; result?: unknown });
      expect(lines).toEqual([expect.objectContaining({ id: 1, result: expect.objectContaining({ protocolVersion: "2025-06-18" }) })]);
    });

    it("a relative ORCHESTRA_CERTS_DIR is logged as the absolute path it names", async () => {
      const { stderr, code } = await runCli(["serve"], INITIALIZE, {
        ORCHESTRA_ORCHESTRATOR_ADDR: orchestrator.address,
        ORCHESTRA_CERTS_DIR: relative(process.cwd(), certs.path),
        ORCHESTRA_LOG_FORMAT: "json",
      });
      expect(code).toBe(0);
      expect(jsonLogLines(stderr).map((l) => l.certsDir)).toEqual([certs.path]);
    });

    it("orchestrator on an address in use exits 1 with a log line pointing at --listen", async () => {
      const { stderr, code } = await runCli(["orchestrator"], "", { ORCHESTRA_LISTEN: orchestrator.address, ORCHESTRA_CERTS_DIR: certs.path, ORCHESTRA_LOG_FORMAT: "json" });
      expect(code).toBe(1);
      expect(jsonLogLines(stderr).map((l) => [l.level, l.msg])).toEqual([[50, expect.stringMatching(/EADDRINUSE.*choose another address with --listen or ORCHESTRA_LISTEN/)]]);
    });

    it("orchestrator listens on ORCHESTRA_LISTEN", async () => {
      const child = spawn(process.execPath, [CLI, "orchestrator"], {
        env: { ...cliEnvironment(), ORCHESTRA_LISTEN: "127.0.0.1:0", ORCHESTRA_CERTS_DIR: certs.path, ORCHESTRA_LOG_FORMAT: "json" },
      });
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
