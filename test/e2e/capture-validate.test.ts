/**
 * A real session, recorded and checked: the official MCP SDK client drives `serve --capture`
 * (embedded orchestrator, real QUIC) through tools, prompts, resources and pings in each
 * SDK-speakable protocol version; then
 *  - `orchestra-stdio validate` (the compiled CLI) reports zero findings on every capture, and
 *  - every captured message gets the same verdict from our generated validators as from the
 *    official schema of its version (issue 4: "every message our e2e suite sends or receives").
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import ajvFormats from "ajv-formats";
import { MCP_FORMATS } from "../../src/mcp/formats.js";
import { validatorsFor } from "../../src/mcp/validation.js";
import { CLI, requireBuiltCli, runCli, tempDir } from "../helpers/cli.js";
import { PinnedVersionTransport } from "../helpers/mcp-lines.js";
import { requireShared, sharedPath, skipTitle } from "../helpers/requires.js";

const VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] as const;
const SHARED = sharedPath("mcp-schema");
const sharedMissing = requireShared("mcp-schema");

interface Record_ {
  dir: "c2s" | "s2c";
  msg?: Record<string, unknown>;
  raw?: string;
}

let dir: Awaited<ReturnType<typeof tempDir>>;
const captures = new Map<string, string>();

beforeAll(async () => {
  requireBuiltCli();
  dir = await tempDir("orchestra-capture-");
  for (const version of VERSIONS) {
    const file = join(dir.path, `${version}.jsonl`);
    captures.set(version, file);
    const transport = new PinnedVersionTransport(new StdioClientTransport({ command: process.execPath, args: [CLI, "serve", "--capture", file], stderr: "pipe" }), version);
    const client = new Client({ name: "capture-e2e", version: "1.0.0" });
    await client.connect(transport);
    await client.ping();
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(0);
    await client.callTool({ name: "echo", arguments: { text: `hello ${version} 🙂` } });
    await client.callTool({ name: "no-such-tool", arguments: {} }).catch(() => undefined); // -32602: an error response in the capture
    await Promise.all([1, 2, 3].map((i) => client.callTool({ name: "echo", arguments: { text: String(i) } })));
    const { prompts } = await client.listPrompts();
    if (prompts[0]) await client.getPrompt({ name: prompts[0].name, arguments: { name: "Ada" } }).catch(() => undefined);
    const { resources } = await client.listResources();
    if (resources[0]) await client.readResource({ uri: resources[0].uri });
    await client.close();
  }
}, 180_000);

afterAll(async () => {
  await dir?.remove();
});

function records(file: string): Record_[] {
  return readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record_);
}

describe("captured SDK sessions", () => {
  it.each(VERSIONS)("%s: the capture holds a whole session in both directions", (version) => {
    const recs = records(captures.get(version)!);
    expect(recs.some((r) => r.dir === "c2s" && r.msg?.method === "initialize")).toBe(true);
    expect(recs.filter((r) => r.dir === "s2c").length).toBeGreaterThanOrEqual(8);
    expect(recs.every((r) => r.msg !== undefined)).toBe(true);
    const init = recs.find((r) => r.dir === "s2c" && (r.msg?.result as { protocolVersion?: string } | undefined)?.protocolVersion);
    expect((init!.msg!.result as { protocolVersion: string }).protocolVersion).toBe(version);
  });

  it.each(VERSIONS)("%s: `validate` reports zero findings on the capture", async (version) => {
    const { stdout, code } = await runCli(["validate", "--format", "json", captures.get(version)!]);
    const lines = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const findings = lines.filter((l) => typeof l.rule === "string");
    expect(findings).toEqual([]);
    expect(code).toBe(0);
  });
});

describe.skipIf(sharedMissing !== undefined)(skipTitle("captured messages: our validators agree with the official schemas", sharedMissing), () => {
  function official(version: string): (definition: string, data: unknown) => boolean {
    const schema = JSON.parse(readFileSync(join(SHARED, version, "schema.json"), "utf8")) as { $defs?: unknown };
    const ajv = schema.$defs ? new Ajv2020({ strict: false, allowUnionTypes: true, logger: false }) : new Ajv({ strict: false, allowUnionTypes: true, logger: false });
    ajvFormats.default(ajv as unknown as Ajv);
    for (const [name, check] of Object.entries(MCP_FORMATS)) ajv.addFormat(name, check);
    ajv.addSchema(schema as object, "official");
    const section = schema.$defs ? "$defs" : "definitions";
    return (definition, data) => ajv.validate(`official#/${section}/${definition}`, data) as boolean;
  }

  it.each(VERSIONS)("%s: identical verdicts on every captured message", (version) => {
    const ours = validatorsFor(version)!;
    const theirs = official(version);
    const pending = new Map<unknown, string | undefined>(); // c2s request id → result definition
    let compared = 0;
    for (const { dir: direction, msg } of records(captures.get(version)!)) {
      if (!msg) continue;
      const checks: string[] = ["JSONRPCMessage"];
      if (typeof msg.method === "string") {
        const def = ours.messageDefinition(direction, msg.method);
        if (def) checks.push(def.definition);
        if (def?.kind === "request" && direction === "c2s") pending.set(msg.id, def.resultDefinition);
      } else if ("result" in msg && direction === "s2c") {
        const resultDefinition = pending.get(msg.id);
        if (resultDefinition) checks.push(`result:${resultDefinition}`);
      }
      for (const check of checks) {
        const [definition, data] = check.startsWith("result:") ? [check.slice(7), msg.result] : [check, msg];
        const oursValid = ours.validate(definition, data) === null;
        expect({ definition, valid: oursValid }).toEqual({ definition, valid: theirs(definition, data) });
        expect(oursValid, `${definition}: ${JSON.stringify(msg).slice(0, 200)}`).toBe(true);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(20);
  });
});
