#!/usr/bin/env node
// `npm run fuzz -- --seed N --lines N`: a longer run of the seeded `serve` fuzzer
// (test/helpers/serve-fuzz.ts), through vitest so that the TypeScript runs as in `npm test`.
import { spawnSync } from "node:child_process";
import { Command, InvalidArgumentError } from "commander";

const count = (value) => {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError("expected a non-negative integer");
  return n;
};
const opts = new Command("fuzz")
  .description("fuzz `orchestra-stdio serve` with mutated MCP lines (issue #13); prints the seed")
  .option("--seed <n>", "PRNG seed (default: random)", count)
  .option("--lines <n>", "lines to write", count, 20_000)
  .parse()
  .opts();
const seed = opts.seed ?? Math.floor(Math.random() * 2 ** 31);
console.log(`fuzz: seed ${seed}, ${opts.lines} lines`);
const r = spawnSync("npx", ["vitest", "run", "test/fuzz/serve-fuzz.test.ts"], {
  stdio: "inherit",
  env: { ...process.env, FUZZ_SEED: String(seed), FUZZ_LINES: String(opts.lines) },
});
if (r.status !== 0) console.error(`fuzz: failed with seed ${seed} (npm run fuzz -- --seed ${seed} --lines ${opts.lines})`);
process.exit(r.status ?? 1);
