/**
 * Facts derived from an MCP `schema.json`: its definition names, which definition validates each
 * JSON-RPC method in each direction, and the `type`/`method` constants that tell the branches of a
 * union apart.
 *
 * Types of ./schema-meta.js (plain JavaScript, imported as is by `codegen/generate.mjs` and by
 * the generated code; `src/mcp/validation.ts` runs it on schemas loaded at run time).
 *
 * Works for draft-07 schemas (`definitions`, MCP 2024-11-05 … 2025-06-18) and JSON Schema
 * 2020-12 ones (`$defs`, MCP 2025-11-25 and later).
 */
import type { ErrorObject } from "ajv";
/** A parsed JSON object (schema node). */
export type JsonObject = {
  readonly [key: string]: unknown;
};
/** Message direction: client→server (`c2s`) or server→client (`s2c`). */
export type Direction = "c2s" | "s2c";
/** What a JSON-RPC method maps to in one direction. */
export interface MethodEntry {
  /** Definition that validates the whole request/notification object (e.g. `CallToolRequest`). */
  readonly definition: string;
  readonly kind: "request" | "notification";
  /** For requests: the definition of the success result (e.g. `CallToolResult`, `EmptyResult`). */
  readonly resultDefinition?: string;
  /**
   * For requests whose response definition (`XResultResponse`, MCP 2026-07-28 and later) allows a
   * union as the result: its branches in schema order, e.g. `["InputRequiredResult", "CallToolResult"]`.
   */
  readonly resultUnion?: readonly string[];
}
/** Method name → entry, per direction. */
export interface MethodTable {
  readonly c2s: Readonly<Record<string, MethodEntry>>;
  readonly s2c: Readonly<Record<string, MethodEntry>>;
}
/**
 * Discriminator constants found on union branches: key (`type` or `method`) → constant value →
 * the branch definitions carrying that constant (sorted). Used to pick the most relevant branch
 * when an `anyOf` fails, e.g. `{"type":"image", ...}` → `ImageContent`.
 */
export type DiscriminatorTable = Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;
/** Everything {@link deriveSchemaMeta} computes. */
export interface SchemaMeta {
  /** `#/definitions/` (draft-07) or `#/$defs/` (2020-12): prefix of local definition refs. */
  readonly refPrefix: string;
  /** All definition names, sorted. */
  readonly definitions: readonly string[];
  readonly methods: MethodTable;
  readonly discriminators: DiscriminatorTable;
}
/**
 * The shape of one compiled validator, generated (ajv standalone, `src/gen/mcp/<version>/validators.js`)
 * or compiled at run time: returns whether `data` matches; after a failure `errors` holds ajv's
 * error objects (first failure only, plus the branch failures of a failed anyOf: allErrors is off).
 */
export interface GeneratedValidator<T> {
  (data: unknown): data is T;
  errors?: ErrorObject[] | null;
}
/** Definition name → the type its validator guards, from a revision's `validators` object type. */
export type DefinitionTypes<V> = { readonly [K in keyof V]: V[K] extends GeneratedValidator<infer U> ? U : never };
/** What `src/gen/mcp/index.ts` provides for each generated protocol revision. */
export interface GeneratedProtocol {
  readonly version: string;
  /** All definition names, sorted. */
  readonly definitions: readonly string[];
  /** Definition name → validator. */
  readonly validators: Readonly<Record<string, GeneratedValidator<unknown>>>;
  readonly methods: MethodTable;
  readonly discriminators: DiscriminatorTable;
}
/** Property names used as union discriminators in MCP schemas. */
export declare const DISCRIMINATOR_KEYS: readonly string[];
/**
 * Locate the definitions of an MCP schema.
 *
 * @param schema parsed `schema.json`
 * @returns the definitions object and the matching local `$ref` prefix
 * @throws Error when the schema has neither `definitions` nor `$defs`
 */
export declare function schemaDefinitions(schema: object): {
  defs: Readonly<Record<string, JsonObject>>;
  refPrefix: string;
};
/**
 * The result definition for a request definition: `XRequest` → `XResult` when the schema defines
 * it, otherwise `EmptyResult` (the spec's reply to ping, logging/setLevel, resources/subscribe…),
 * otherwise `Result`.
 */
export declare function resultDefinitionFor(defs: Readonly<Record<string, unknown>>, requestDefinition: string): string;
/**
 * Derive methods, directions, result definitions and union discriminators from an MCP schema.
 *
 * Methods: every definition with `properties.method.const` that is a member of `ClientRequest` /
 * `ClientNotification` (direction `c2s`) or `ServerRequest` / `ServerNotification` (`s2c`); a
 * method in both (ping, notifications/cancelled, notifications/progress) appears in both tables.
 * Requests get `resultDefinition` from {@link resultDefinitionFor}.
 *
 * @param schema parsed `schema.json` (draft-07 or 2020-12)
 * @returns plain data with sorted keys (deterministic when serialised)
 * @throws Error when the schema has no definitions (see {@link schemaDefinitions})
 */
export declare function deriveSchemaMeta(schema: object): SchemaMeta;

/**
 * What a protocol revision allows, as its schema shows it ({@link deriveSchemaFacts}); emitted per
 * revision in `src/gen/mcp/facts.ts`.
 */
export interface SchemaFacts {
  /** `initialize` when `initialize` is a client request (negotiated once per session), else `stateless` (per-request `_meta`). */
  readonly era: "initialize" | "stateless";
  /** The JSON Schema dialect of the schema's `$schema` (also the default dialect of tool `inputSchema`s). */
  readonly jsonSchemaDialect: "draft-07" | "2020-12";
  /** JSON-RPC batches are part of the protocol (definition `JSONRPCBatchRequest`). */
  readonly batches: boolean;
  /** `audio` content blocks exist (definition `AudioContent`). */
  readonly audioContent: boolean;
  /** `resource_link` content blocks exist (definition `ResourceLink`). */
  readonly resourceLinks: boolean;
  /** `CallToolResult.structuredContent` exists. */
  readonly structuredContent: boolean;
  /** Every result carries `resultType` (definition `ResultType`). */
  readonly resultType: boolean;
  /** `logging/setLevel` is a client request (otherwise the log level travels per request in `_meta`). */
  readonly setLevelRequest: boolean;
  /** The members of `ServerCapabilities`, sorted. */
  readonly serverCapabilities: readonly string[];
}
/**
 * Derive {@link SchemaFacts} from an MCP schema.
 * @param meta {@link deriveSchemaMeta} of the same schema (computed when absent)
 * @throws Error when the schema has no definitions
 */
export declare function deriveSchemaFacts(schema: object, meta?: SchemaMeta): SchemaFacts;
