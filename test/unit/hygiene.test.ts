/**
 * Tree hygiene (issue #15 item 6): src/ loads only the native binding of @matrixai/quic (the lint
 * rule `quicLayerImports` of eslint.config.js, which every hand-written file under src/ passes),
 * and the offender lists of scripts/check-hygiene.mjs (`npm run check:size`, `check:helpers`).
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ESLint, Linter } from "eslint";
import tseslint from "typescript-eslint";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { quicLayerImports } from "../../eslint.config.js";
import { misplacedTestHelpers, oversizedSources, repoFiles } from "../../scripts/check-hygiene.mjs";
import { MOVES, rewrite } from "../../scripts/move-test-helpers.mjs";
import { PROJECT_ROOT } from "../helpers/requires.js";

describe("the lint rule keeping @matrixai/quic's JavaScript layer out of src/", () => {
  const linter = new Linter({ cwd: PROJECT_ROOT });
  // noInlineConfig: an `eslint-disable` comment in src/ does not get past this test.
  const config = [
    { files: ["**/*.{ts,js,mjs}"], languageOptions: { parser: tseslint.parser }, linterOptions: { noInlineConfig: true, reportUnusedDisableDirectives: "off" as const } },
    { files: ["**/*.{ts,js,mjs}"], ...quicLayerImports },
  ];
  /** The rule messages for `code` as a file under src/ (not notes on inline comments); a parse error fails the test. */
  const lint = (code: string, file = "src/example.ts"): string[] =>
    linter
      .verify(code, config, join(PROJECT_ROOT, file))
      .filter((m) => {
        expect(m.fatal, m.message).toBeFalsy();
        return m.ruleId !== null;
      })
      .map((m) => `${m.ruleId}: ${m.message}`);

  it.each([
    `import { quiche } from "@matrixai/quic/native/index.js";`,
    `import type { RecvInfo } from "@matrixai/quic/native";`,
    `export type { Connection } from "@matrixai/quic/native/index.js";`,
    `const native = await import("@matrixai/quic/native/index.js");`,
    `import { Logger } from "@matrixai/logger";`,
    `import x from "@matrixai/quicx";`,
  ])("accepts %s", (code) => {
    expect(lint(code)).toEqual([]);
  });

  it.each([
    [`import { QUICClient } from "@matrixai/quic";`, "no-restricted-imports"],
    [`import type { QUICStream } from "@matrixai/quic";`, "no-restricted-imports"],
    [`import { QUICConnection } from "@matrixai/quic/QUICConnection.js";`, "no-restricted-imports"],
    [`import "@matrixai/quic/native-bindings.js";`, "no-restricted-imports"],
    [`export { QUICServer } from "@matrixai/quic";`, "no-restricted-imports"],
    [`export * from "@matrixai/quic/events.js";`, "no-restricted-imports"],
    [`const { QUICClient } = await import("@matrixai/quic");`, "no-restricted-syntax"],
  ])("rejects %s", (code, rule) => {
    const messages = lint(code);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(new RegExp(`^${rule}: .*src/ may import only @matrixai/quic/native`));
  });

  it("holds for every hand-written file under src/", async () => {
    const { readFile } = await import("node:fs/promises");
    const files = repoFiles(PROJECT_ROOT).filter((f) => f.startsWith("src/") && !f.startsWith("src/gen/") && /\.[cm]?[jt]s$/.test(f));
    expect(files.length).toBeGreaterThan(50);
    const offences: string[] = [];
    for (const file of files) for (const m of lint(await readFile(join(PROJECT_ROOT, file), "utf8"), file)) offences.push(`${file}: ${m}`);
    expect(offences).toEqual([]);
  });

  it("is what eslint.config.js applies to src/, and only there", async () => {
    const eslint = new ESLint({ cwd: PROJECT_ROOT });
    const inSrc = await eslint.calculateConfigForFile("src/quic/engine/config.ts");
    const [, options] = quicLayerImports.rules["no-restricted-imports"];
    expect(inSrc.rules["no-restricted-imports"]).toEqual([2, options]);
    expect(inSrc.rules["no-restricted-syntax"]).toEqual([2, quicLayerImports.rules["no-restricted-syntax"][1]]);
    // Tests drive @matrixai/quic's own client and server as a peer.
    const inTest = await eslint.calculateConfigForFile("test/helpers/quic/library.ts");
    expect(inTest.rules["no-restricted-imports"]).toBeUndefined();
  });
});

describe("scripts/check-hygiene.mjs", () => {
  let root: string;
  const put = async (file: string, lines: number, trailingNewline = true): Promise<void> => {
    await mkdir(dirname(join(root, file)), { recursive: true });
    const body = Array.from({ length: lines }, (_, i) => `// line ${i + 1}`).join("\n");
    await writeFile(join(root, file), trailingNewline ? `${body}\n` : body);
  };
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "hygiene-"));
    await put("src/long.ts", 601);
    await put("src/longer/no-newline.js", 700, false);
    await put("src/at-limit.ts", 600);
    await put("src/at-limit-no-newline.ts", 600, false);
    await put("src/gen/mcp/types.ts", 5000);
    await put("src/data.json", 900);
    await put("test/unit/long.test.ts", 900);
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("lists hand-written sources under src/ over 600 lines, longest first, generated code and non-code left out", async () => {
    const files = ["src/long.ts", "src/longer/no-newline.js", "src/at-limit.ts", "src/at-limit-no-newline.ts", "src/gen/mcp/types.ts", "src/data.json", "test/unit/long.test.ts"];
    expect(oversizedSources(root, files)).toEqual([
      { file: "src/longer/no-newline.js", lines: 700 },
      { file: "src/long.ts", lines: 601 },
    ]);
    expect(oversizedSources(root, files, 700)).toEqual([]);
  });

  it("lists test support files outside test/helpers/", () => {
    const files = [
      "test/unit/a.test.ts",
      "test/unit/fakes.ts",
      "test/e2e/helpers.ts",
      "test/helpers/requires.ts",
      "test/helpers/quic/index.ts",
      "test/fixtures/tools/probe-tools.mjs",
      "test/fixtures/validate/good.capture.jsonl",
      "test/global-setup.ts",
      "src/cli/main.ts",
    ];
    expect(misplacedTestHelpers(files)).toEqual(["test/e2e/helpers.ts", "test/unit/fakes.ts"]);
  });

  it("reads the files git tracks or would track, not ignored ones", () => {
    const files = repoFiles(PROJECT_ROOT);
    expect(files).toContain("scripts/check-hygiene.mjs");
    expect(files).toContain("src/cli/main.ts");
    expect(files.some((f) => f.startsWith("node_modules/") || f.startsWith("dist/"))).toBe(false);
  });
});

describe("scripts/move-test-helpers.mjs", () => {
  const moves = { "test/e2e/helpers.ts": "test/helpers/cli.ts", "test/unit/fakes.ts": "test/helpers/fakes.ts" };

  it("points a test's imports of a moved file at its new place, and leaves the others", () => {
    const text = [
      `import { CLI } from "./helpers.js";`,
      `import { harness } from "../unit/fakes.js";`,
      `import { serialize } from "../../src/jsonrpc/serialize.js";`,
      `const m = await import("./helpers.js");`,
      `// see test/e2e/helpers.ts`,
    ].join("\n");
    expect(rewrite(text, "test/e2e/a.test.ts", "test/e2e/a.test.ts", moves).split("\n")).toEqual([
      `import { CLI } from "../helpers/cli.js";`,
      `import { harness } from "../helpers/fakes.js";`,
      `import { serialize } from "../../src/jsonrpc/serialize.js";`,
      `const m = await import("../helpers/cli.js");`,
      `// see test/helpers/cli.ts`,
    ]);
  });

  it("rebases a moved file's own relative imports", () => {
    const text = [
      `import { CLI } from "../e2e/helpers.js";`,
      `import { mulberry32 } from "../helpers/prng.js";`,
      `import { exceedsDepth } from "../../src/jsonrpc/line-scan.js";`,
      `import "./setup.js";`,
    ].join("\n");
    expect(rewrite(text, "test/unit/fakes.ts", "test/helpers/fakes.ts", moves).split("\n")).toEqual([
      `import { CLI } from "./cli.js";`,
      `import { mulberry32 } from "./prng.js";`,
      `import { exceedsDepth } from "../../src/jsonrpc/line-scan.js";`,
      `import "../unit/setup.js";`,
    ]);
  });

  it("moves each file from where it is (or was) into test/helpers/", () => {
    const files = new Set(repoFiles(PROJECT_ROOT));
    for (const [from, to] of Object.entries(MOVES)) {
      expect(to.startsWith("test/helpers/"), to).toBe(true);
      expect(files.has(from) !== files.has(to), `${from} or ${to}, exactly one`).toBe(true);
    }
  });
});
