/** src/installation.ts: which errors are faults of the installed package (one line, exit 1) and which are the user's. */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { installationFault, missingPart, packageRoot } from "../../src/installation.js";

const PACKAGE_ROOT = packageRoot();

const fault = (code: string, message: string, extra: object = {}) => Object.assign(new Error(message), { code }, extra);

describe("missingPart", () => {
  it("names a dependency the package's own code cannot require or import, and a missing file of dist/", () => {
    expect(missingPart(fault("MODULE_NOT_FOUND", "Cannot find module 'pino'\nRequire stack: ...", { requireStack: [join(PACKAGE_ROOT, "dist/log.js")] }))).toBe("pino");
    const from = pathToFileURL(join(PACKAGE_ROOT, "dist/pki/x509.js")).href;
    expect(missingPart(fault("ERR_MODULE_NOT_FOUND", `Cannot find package 'reflect-metadata' imported from ${from}`))).toBe("reflect-metadata");
    const chunk = join(PACKAGE_ROOT, "dist/cli/chunks/x.js");
    expect(missingPart(fault("ENOENT", `ENOENT: no such file or directory, open '${chunk}'`, { path: chunk }))).toBe(join("dist", "cli", "chunks", "x.js"));
    expect(installationFault(fault("MODULE_NOT_FOUND", "Cannot find module 'pino'", { requireStack: [join(PACKAGE_ROOT, "dist/log.js")] }))).toBe(
      `orchestra-stdio: the installation at ${PACKAGE_ROOT} is incomplete: cannot load pino; reinstall the package`,
    );
  });

  it("leaves the user's faults alone: a --tools module importing a missing package, a missing file of theirs", () => {
    expect(missingPart(fault("ERR_MODULE_NOT_FOUND", "Cannot find package 'left-pad' imported from /home/you/tools.mjs"))).toBeUndefined();
    expect(missingPart(fault("MODULE_NOT_FOUND", "Cannot find module 'x'", { requireStack: ["/home/you/tools.cjs"] }))).toBeUndefined();
    expect(missingPart(fault("ENOENT", "ENOENT", { path: "/home/you/capture.jsonl" }))).toBeUndefined();
    expect(missingPart(fault("ENOENT", "ENOENT", { path: join(PACKAGE_ROOT, "capture.jsonl") }))).toBeUndefined();
    expect(missingPart(new Error("other"))).toBeUndefined();
    expect(missingPart(undefined)).toBeUndefined();
  });
});
