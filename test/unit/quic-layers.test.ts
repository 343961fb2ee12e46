/**
 * Layering of the QUIC code (issue #15): the engine (src/quic/engine) carries bytes only and
 * knows nothing of the Orchestra framing (src/framing) or of the application's stream codes
 * (src/quic/quic-common.ts); framing lives in src/quic/framed-stream.ts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const engineDir = join(root, "src/quic/engine");

/** Module specifiers of every static `import`/`export … from` and dynamic `import()` in `source`. */
function specifiers(source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(/\b(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) out.push(m[1]!);
  return out;
}

describe("src/quic/engine carries bytes only", () => {
  it("no engine module imports src/framing or src/quic/quic-common.ts; relative imports stay inside the engine", () => {
    const files = readdirSync(engineDir).filter((f) => f.endsWith(".ts"));
    expect(files.length).toBeGreaterThan(5);
    const offending: string[] = [];
    for (const f of files) {
      const file = join(engineDir, f);
      for (const spec of specifiers(readFileSync(file, "utf8"))) {
        if (!spec.startsWith(".")) continue; // node: builtins and packages (@matrixai/quic)
        const target = relative(root, resolve(dirname(file), spec));
        if (!target.startsWith("src/quic/engine/")) offending.push(`src/quic/engine/${f} imports ${target}`);
      }
    }
    expect(offending).toEqual([]);
  });

  it("the import scan sees imports (self-check)", () => {
    expect(specifiers(`import { a } from "../framing/frame.js";\nexport { b } from "./x.js";\nconst m = await import("../quic-common.js");`)).toEqual([
      "../framing/frame.js",
      "./x.js",
      "../quic-common.js",
    ]);
  });
});

describe("the quiche binding", () => {
  it("is @matrixai/quic's own binding, required as CommonJS without its ES module loader", async () => {
    const { quiche } = await import("../../src/quic/engine/config.js");
    const { quiche: theirs } = await import("@matrixai/quic/native/index.js");
    expect(quiche).toBe(theirs);
    expect(typeof quiche.Config.withBoringSslCtx).toBe("function");
    const source = readFileSync(join(engineDir, "config.ts"), "utf8");
    expect(source).not.toMatch(/^import (?!type )[^;]*@matrixai\/quic/m);
  });
});
