/**
 * Typed validator accessors (src/mcp/validator-set.ts TypedProtocolValidators, generated
 * `ProtocolTypes` per revision): what they check at run time, and that `tsc` accepts and rejects
 * what test/fixtures/typed-validators/usage.ts says.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { validatorsFor } from "../../src/mcp/validation.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: {} } };

describe("typed validator accessors", () => {
  const v = validatorsFor("2025-11-25");

  it("check the definition the method maps to, in either direction", () => {
    expect(v.request("tools/call").definition).toBe("CallToolRequest");
    expect(v.result("tools/call").definition).toBe("CallToolResult");
    expect(v.notification("notifications/cancelled").definition).toBe("CancelledNotification");
    expect(v.request("sampling/createMessage").definition).toBe("CreateMessageRequest");
    expect(v.result("ping").definition).toBe("EmptyResult");
    expect(v.request("tools/call").is(call)).toBe(true);
    expect(v.request("tools/call").issues(call)).toBeNull();
    const bad = { ...call, params: { name: 7 } };
    expect(v.request("tools/call").is(bad)).toBe(false);
    expect(v.request("tools/call").issues(bad)).toEqual(v.validate("CallToolRequest", bad));
    expect(v.definition("Tool")).toBe(v.definition("Tool")); // one check per definition
  });

  it("throw for a method or definition the revision lacks (reachable only untyped)", () => {
    const untyped = validatorsFor(String("2025-11-25")) as unknown as { request(m: string): unknown; definition(n: string): unknown; notification(m: string): unknown };
    expect(() => untyped.request("server/discover")).toThrow(/no request named "server\/discover"/);
    expect(() => untyped.notification("tools/call")).toThrow(/no notification named "tools\/call"/);
    expect(() => untyped.definition("Nope")).toThrow(/no schema definition named "Nope"/);
  });

  it("are checked by tsc: wrong methods and definitions are errors, guards narrow to the schema's types", () => {
    const config = ts.readConfigFile(path.join(ROOT, "tsconfig.json"), ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
    const fixture = path.join(ROOT, "test/fixtures/typed-validators/usage.ts");
    const program = ts.createProgram([fixture], { ...parsed.options, noEmit: true, rootDir: ROOT });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file && d.start !== undefined ? `${path.relative(ROOT, d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}` : "";
      return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
    });
    expect(diagnostics).toEqual([]);
  }, 120_000);
});
