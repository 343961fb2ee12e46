/**
 * The installed @matrixai/quic carries our loss-recovery patch (applied to the repository's own install by `prepare`; the published package has no install script), and
 * the check that warns when it does not sees it.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkQuicPatched } from "../helpers/quic/library.js";

describe("@matrixai/quic loss-recovery patch", () => {
  it("is applied to the installed library", () => {
    const require = createRequire(import.meta.url);
    const file = join(dirname(require.resolve("@matrixai/quic/package.json")), "dist", "QUICConnection.js");
    expect(readFileSync(file, "utf8")).toContain("PATCH(loss-recovery)");
  });

  it("is detected at run time, with no warning", () => {
    const warnings: unknown[] = [];
    const log = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Parameters<typeof checkQuicPatched>[0];
    expect(checkQuicPatched(log)).toBe(true);
    expect(warnings).toEqual([]);
  });
});
