/** deriveSchemaMeta: method tables, directions, result definitions and discriminators from a schema. */
import { describe, expect, it } from "vitest";
import { deriveSchemaMeta, resultDefinitionFor, schemaDefinitions } from "../../src/mcp/schema-meta.js";

const method = (name: string) => ({ type: "object", properties: { method: { type: "string", const: name } }, required: ["method"] });
const tagged = (tag: string) => ({ type: "object", properties: { type: { type: "string", const: tag } } });

describe("deriveSchemaMeta", () => {
  it("derives directions from union membership and results by naming convention", () => {
    const meta = deriveSchemaMeta({
      definitions: {
        FooRequest: method("foo/do"),
        FooResult: { type: "object" },
        PingRequest: method("ping"),
        EmptyResult: { $ref: "#/definitions/Result" },
        Result: { type: "object" },
        HelloNotification: method("notifications/hello"),
        OrphanRequest: method("orphan/call"),
        ClientRequest: { anyOf: [{ $ref: "#/definitions/FooRequest" }, { $ref: "#/definitions/PingRequest" }] },
        ServerRequest: { oneOf: [{ $ref: "#/definitions/PingRequest" }] },
        ServerNotification: { $ref: "#/definitions/HelloNotification" },
      },
    });
    expect(meta.refPrefix).toBe("#/definitions/");
    expect(meta.methods.c2s).toEqual({
      "foo/do": { definition: "FooRequest", kind: "request", resultDefinition: "FooResult" },
      ping: { definition: "PingRequest", kind: "request", resultDefinition: "EmptyResult" },
    });
    expect(meta.methods.s2c).toEqual({
      "notifications/hello": { definition: "HelloNotification", kind: "notification" },
      ping: { definition: "PingRequest", kind: "request", resultDefinition: "EmptyResult" },
    });
    expect(Object.keys(meta.methods.c2s)).toEqual([...Object.keys(meta.methods.c2s)].sort());
    expect(meta.definitions).toEqual([...meta.definitions].sort());
    expect(JSON.stringify(meta)).not.toContain("orphan/call");
  });

  it("handles 2020-12 $defs, an inlined one-member union and the Result fallback", () => {
    const meta = deriveSchemaMeta({
      $defs: {
        ClientNotification: method("notifications/cancelled"),
        ClientRequest: { anyOf: [{ $ref: "#/$defs/StatusRequest" }] },
        StatusRequest: method("status"),
        Result: { type: "object" },
      },
    });
    expect(meta.refPrefix).toBe("#/$defs/");
    expect(meta.methods.c2s["notifications/cancelled"]).toEqual({ definition: "ClientNotification", kind: "notification" });
    expect(meta.methods.c2s["status"]?.resultDefinition).toBe("Result");
  });

  it("collects type/method constants of union branches anywhere in the schema", () => {
    const meta = deriveSchemaMeta({
      definitions: {
        A: tagged("a"),
        B: tagged("b"),
        B2: tagged("b"),
        Loose: tagged("loose"),
        Holder: { type: "object", properties: { item: { anyOf: [{ $ref: "#/definitions/A" }, { $ref: "#/definitions/B" }] } } },
        Other: { oneOf: [{ $ref: "#/definitions/B2" }, { type: "string" }] },
      },
    });
    expect(meta.discriminators).toEqual({ type: { a: ["A"], b: ["B", "B2"] } });
  });

  it("gives a request the branches of its response definition's result union (2026-07-28 XResultResponse), and none for a single result", () => {
    const meta = deriveSchemaMeta({
      $defs: {
        ClientRequest: { anyOf: [{ $ref: "#/$defs/CallRequest" }, { $ref: "#/$defs/ListRequest" }] },
        CallRequest: method("call"),
        CallResult: { type: "object" },
        CallResultResponse: { type: "object", properties: { result: { anyOf: [{ $ref: "#/$defs/InputRequiredResult" }, { $ref: "#/$defs/CallResult" }] } } },
        InputRequiredResult: { type: "object" },
        ListRequest: method("list"),
        ListResult: { type: "object" },
        ListResultResponse: { type: "object", properties: { result: { $ref: "#/$defs/ListResult" } } },
      },
    });
    expect(meta.methods.c2s["call"]).toEqual({ definition: "CallRequest", kind: "request", resultDefinition: "CallResult", resultUnion: ["InputRequiredResult", "CallResult"] });
    expect(meta.methods.c2s["list"]).toEqual({ definition: "ListRequest", kind: "request", resultDefinition: "ListResult" });
  });

  it("rejects a schema without definitions", () => {
    expect(() => schemaDefinitions({ properties: {} })).toThrow(/definitions/);
    expect(resultDefinitionFor({ Result: {} }, "Weird")).toBe("Result");
  });
});
