/** The compiled CLI on captures as people have them: an excerpt with and without --partial, FILE:s2c. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBuiltCli, runCli, tempDir } from "../helpers/cli.js";

describe("validate CLI on excerpts and per-file options", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let excerpt: string;
  let server: string;
  beforeAll(async () => {
    requireBuiltCli();
    dir = await tempDir("validate-cli-");
    excerpt = join(dir.path, "excerpt.log");
    // pasted from the middle of a session, without timestamps
    writeFileSync(
      excerpt,
      [
        `[info] Message from server: {"jsonrpc":"2.0","id":41,"result":{"tools":[]}}`,
        `[info] Message from client: {"jsonrpc":"2.0","id":42,"method":"tools/list","params":{}}`,
        `[info] Message from server: {"jsonrpc":"2.0","id":42,"result":{"tools":[]}}`,
        `[info] Message from client: {"jsonrpc":"2.0","id":43,"method":"tools/list","params":{}}`,
      ].join("\n"),
    );
    server = join(dir.path, "server.txt");
    writeFileSync(server, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n`);
  });
  afterAll(async () => dir?.remove());

  it("without --partial: exit 1 and a hint to use it", async () => {
    const r = await runCli(["validate", excerpt]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/session\/initialize-first/);
    expect(r.stdout).toMatch(/hint: .*--partial/);
  });

  it("with --partial: exit 0, no finding", async () => {
    const r = await runCli(["validate", "--partial", "--format", "json", excerpt]);
    expect(r.code).toBe(0);
    expect(
      r.stdout
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { type: string }).type),
    ).toEqual(["summary"]);
  });

  it("FILE:jsonl,s2c sets the format and direction of that file only", async () => {
    const said = await runCli(["validate", "--format", "json", `${server}:jsonl,s2c`]);
    expect(said.stdout).not.toMatch(/"type":"finding"/);
    const wrong = await runCli(["validate", "--format", "json", `${server}:jsonl,c2s`]);
    expect(wrong.stdout).toMatch(/session\/wrong-direction/);
  });
});
