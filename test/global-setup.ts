/**
 * Builds dist/ (the compiled CLI that e2e tests spawn, its entry bundled as `npm run build` does) once, so they always run the current
 * source. A failed build does not stop unit tests; it is handed to e2e tests through
 * `inject("distBuildError")`, which fail with the compiler output (see test/helpers/cli.ts).
 */
import { execFileSync } from "node:child_process";
import { chmodSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    distBuildError: string;
  }
}

export default function setup(project: TestProject): void {
  let error = "";
  if (process.env.ORCHESTRA_SKIP_BUILD !== "1") {
    const root = fileURLToPath(new URL("..", import.meta.url));
    try {
      execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], {
        cwd: root,
        stdio: ["ignore", "pipe", "pipe"],
      });
      // The CLI's entry as the package ships it: one bundle (scripts/bundle-cli.mjs, as `npm run build`).
      execFileSync(process.execPath, ["scripts/bundle-cli.mjs"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
      // The bin must stay executable: tsc writes new files 0644, and `npx orchestra-stdio` in a
      // clone runs it through a link npm made once (and made executable) in its npx cache.
      for (const file of ["dist/cli/main.cjs", "dist/cli/main.js"]) chmodSync(join(root, file), 0o755);
    } catch (err) {
      const e = err as { stdout?: Buffer; stderr?: Buffer };
      error = `tsc -p tsconfig.build.json or scripts/bundle-cli.mjs failed:\n${e.stdout?.toString() ?? ""}${e.stderr?.toString() ?? ""}`;
    }
  }
  project.provide("distBuildError", error);
}
