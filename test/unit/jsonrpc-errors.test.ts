/**
 * The translators' errors carry their own JSON-RPC / MCP code (src/jsonrpc/errors.ts), so the
 * bridge's session answers with them as they are, without knowing their classes.
 */
import { describe, expect, it } from "vitest";
import { ErrorCode, JsonRpcError, McpErrorCode } from "../../src/jsonrpc/errors.js";
import { McpErrorCode as NegotiationCodes, unsupportedProtocolVersionError } from "../../src/mcp/negotiation.js";
import { decodeCursor } from "../../src/translate/pagination.js";
import { PromptTranslationError } from "../../src/translate/prompts.js";
import { uriToStoragePath } from "../../src/translate/resources.js";
import { objectToStruct } from "../../src/translate/struct.js";

/** The error `fn` throws. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error("did not throw");
}

describe("error codes live in src/jsonrpc/errors.ts", () => {
  it("holds the JSON-RPC 2.0 and MCP codes; negotiation uses the same table", () => {
    expect(ErrorCode).toEqual({ ParseError: -32700, InvalidRequest: -32600, MethodNotFound: -32601, InvalidParams: -32602, InternalError: -32603 });
    expect(McpErrorCode).toEqual({ ResourceNotFound: -32002, HeaderMismatch: -32020, MissingRequiredClientCapability: -32021, UnsupportedProtocolVersion: -32022 });
    expect(NegotiationCodes).toBe(McpErrorCode);
    expect(unsupportedProtocolVersionError("1999-01-01").code).toBe(-32022);
  });
});

describe("translator errors are JsonRpcErrors with their code", () => {
  it("an invalid cursor is -32602", () => {
    const err = thrown(() => decodeCursor("tools", "abc$"));
    expect(err).toBeInstanceOf(JsonRpcError);
    expect(err).toMatchObject({ code: -32602, message: 'Invalid cursor "abc$": not issued by this server', data: undefined });
  });
  it("a URI naming no storage entry is -32002 with the uri", () => {
    const err = thrown(() => uriToStoragePath("urn:a"));
    expect(err).toBeInstanceOf(JsonRpcError);
    expect(err).toMatchObject({ code: -32002, data: { uri: "urn:a" } });
    expect((err as Error).message).toMatch(/^Resource not found: urn:a/);
  });
  it("a value a Struct cannot carry is -32602 with its pointer", () => {
    const err = thrown(() => objectToStruct({ a: [0, Number.NaN] }));
    expect(err).toBeInstanceOf(JsonRpcError);
    expect(err).toMatchObject({ code: -32602, message: "Invalid params: /a/1: NaN is not a JSON number", data: { pointer: "/a/1" } });
  });
  it("a prompt MCP cannot express is -32603", () => {
    const err = new PromptTranslationError("prompt message 0 has no content");
    expect(err).toBeInstanceOf(JsonRpcError);
    expect(err).toMatchObject({ code: -32603, message: "Internal error: the orchestrator's prompt cannot be expressed in MCP: prompt message 0 has no content" });
  });
});
