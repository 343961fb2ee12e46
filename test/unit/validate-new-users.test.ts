/**
 * Findings of new users of `validate` (built-in validators): false positives, wrong version
 * labels, one defect reported twice. Each case is a small capture written here.
 */
import { describe, expect, it } from "vitest";
import { brief, captureText, err, handshake, init, ok, req, validateText } from "../helpers/validate-records.js";

describe("null-id answers to invalid requests", () => {
  it("a request method sent without an id may be rejected with id null: only the null-id warning", async () => {
    const { findings } = await validateText(captureText([...handshake(), req("c2s", undefined, "tools/list"), err("s2c", null)]));
    expect(brief(findings)).toEqual(["4 error jsonrpc/kind-mismatch", "5 warning jsonrpc/null-id-error"]);
  });

  it("initialize sent without an id: one kind-mismatch (no initialize-first), and its null-id rejection is fine", async () => {
    const { findings, summary } = await validateText(captureText([init("2025-06-18", null), err("s2c", null)]));
    expect(brief(findings)).toEqual(["1 error jsonrpc/kind-mismatch", "2 warning jsonrpc/null-id-error"]);
    expect(summary.files[0]!.excerpt).not.toBe(true);
  });

  it("a duplicate in-flight id is an invalid request the peer may reject with id null (as serve does)", async () => {
    const records = [...handshake(), req("c2s", 9, "tools/list"), req("c2s", 9, "tools/list"), err("s2c", null, -32600, "Invalid Request: request id 9 is already in flight"), ok("s2c", 9, { tools: [] })];
    const { findings } = await validateText(captureText(records));
    expect(brief(findings)).toEqual(["5 error session/duplicate-request-id", "6 warning jsonrpc/null-id-error"]);
  });
});
