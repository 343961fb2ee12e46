/**
 * The bounded fuzz run of `npm test` (test/helpers/serve-fuzz.ts has the generator and oracle).
 * `npm run fuzz -- --seed N --lines N` runs a longer one (scripts/fuzz.mjs sets FUZZ_SEED and
 * FUZZ_LINES). The seed is printed, and named in the failure.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { requireBuiltCli } from "../helpers/cli.js";
import { runServeFuzz } from "../helpers/serve-fuzz.js";

const seed = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : 20261201;
const lines = process.env.FUZZ_LINES !== undefined ? Number(process.env.FUZZ_LINES) : 3000;

beforeAll(() => requireBuiltCli());

describe("serve under fuzzed stdin", () => {
  it(`seed ${seed}, ${lines} lines: no crash, exit 0, complete lines, one answer per request with its id`, async () => {
    const result = await runServeFuzz({ seed, lines, timeoutMs: Math.max(120_000, lines * 20) });
    console.log(`fuzz seed=${seed} lines=${lines}: ${result.inputBytes} bytes in, ${result.answers} answers, exit ${result.exitCode}, ${result.violations.length} violations`);
    expect(result.violations, `fuzz failed with seed ${seed} (rerun: npm run fuzz -- --seed ${seed} --lines ${lines})`).toEqual([]);
  }, 600_000);
});
