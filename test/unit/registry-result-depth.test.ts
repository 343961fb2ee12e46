/**
 * The reference orchestrator checks a tool's result against the protocol's nesting limit
 * (MAX_NESTING_DEPTH, `{}` is depth 1), with an explicit stack: 256 levels pass, 257 are refused
 * as `invalid_result`, and a result a million levels deep is refused without a stack overflow.
 */
import { describe, expect, it } from "vitest";
import { MAX_NESTING_DEPTH } from "../../src/jsonrpc/line-scan.js";
import { ToolRegistry } from "../../src/orchestrator/registry.js";

/** A plain object `{"a":{"a":...{}}}` of `depth` levels. */
function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < depth; i++) v = { a: v };
  return v;
}

function call(result: Record<string, unknown>) {
  const registry = new ToolRegistry([{ name: "t", description: "t", inputSchema: { type: "object" }, handler: async () => result }]);
  return registry.call("t", {}, { signal: new AbortController().signal });
}

describe("tool result nesting in the reference orchestrator", () => {
  it(`accepts a result ${MAX_NESTING_DEPTH} levels deep and refuses one level more`, async () => {
    expect(MAX_NESTING_DEPTH).toBe(256);
    expect(await call(nested(MAX_NESTING_DEPTH))).toMatchObject({ success: true });
    const refused = await call(nested(MAX_NESTING_DEPTH + 1));
    expect(refused).toMatchObject({ success: false, errorCode: "invalid_result" });
    expect(refused.success === false && refused.errorMessage).toContain(`nests deeper than the limit of ${MAX_NESTING_DEPTH}`);
  });

  it("refuses a result a million levels deep without recursing", async () => {
    const refused = await call(nested(1_000_000));
    expect(refused).toMatchObject({ success: false, errorCode: "invalid_result" });
  });

  it("still reports the first non-JSON value in document order", async () => {
    const refused = await call({ a: [1, { b: Number.NaN }], c: () => 1 });
    expect(refused.success === false && refused.errorMessage).toContain("result.a[1].b is not a finite number");
  });
});
