/**
 * The V8 flags `serve` sets at run time name V8's defaults as the values they replace: the CLI's
 * code cache sets them back to those while it makes the data of scripts compiled before the
 * change, and V8 accepts that data only under the same flags (src/cli/v8-flags.ts).
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { SERVE_V8_FLAGS_AFTER_START, SERVE_V8_FLAGS_AT_START } from "../../src/cli/serve.js";

describe("serve's run-time V8 flags", () => {
  it("give V8's own default as the value each replaces", () => {
    const options = execFileSync(process.execPath, ["--v8-options"], { encoding: "utf8" });
    for (const change of [...SERVE_V8_FLAGS_AT_START, ...SERVE_V8_FLAGS_AFTER_START]) {
      const name = change.set.slice(0, change.set.indexOf("="));
      expect(change.before.startsWith(`${name}=`)).toBe(true);
      expect(options).toMatch(new RegExp(`^\\s+${name} \\(.*\\n\\s+type: \\w+\\s+default: ${change.before.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m"));
    }
  });
});
