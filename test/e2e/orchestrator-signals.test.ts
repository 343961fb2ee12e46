/** `orchestrator` exits 0 on SIGTERM or SIGINT once it has printed READY, even at once (docs/cli.md "Exit status"). */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBuiltCli, startOrchestratorProcess, tempDir } from "../helpers/cli.js";

describe("orchestrator stopped right after READY", () => {
  let work: { path: string; remove: () => Promise<void> };
  beforeAll(async () => {
    requireBuiltCli();
    work = await tempDir("orchestra-orchestrator-signals-");
  });
  afterAll(() => work?.remove());

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`exits 0 on ${signal} sent as soon as READY is read`, async () => {
      const { child } = await startOrchestratorProcess(join(work.path, signal));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, sig) => resolve({ code, signal: sig })));
      child.kill(signal);
      expect(await exited).toEqual({ code: 0, signal: null });
    }, 30_000);
  }
});
