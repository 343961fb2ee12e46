import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // e2e tests spawn the compiled CLI: build dist/ once before any test runs.
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // 2-core machines: keep QUIC-heavy files from starving each other.
    maxWorkers: 2,
  },
});
