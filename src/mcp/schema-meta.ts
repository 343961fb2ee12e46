/**
 * Facts derived from an MCP `schema.json`: its definition names, which definition validates each
 * JSON-RPC method in each direction, and the `type`/`method` constants that tell the branches of a
 * union apart.
 *
 * One implementation serves both paths: `codegen/generate.mjs` runs it (transpiled) to emit
 * `src/gen/mcp/<version>/methods.ts`, and `./validation.ts` runs it on any schema loaded at run
 * time (`compileValidatorsFromSchema`). Pure functions over plain JSON; no dependencies.
 *
 * Works for draft-07 schemas (`definitions`, MCP 2024-11-05 … 2025-06-18) and JSON Schema
 * 2020-12 ones (`$defs`, MCP 2025-11-25 and later).
 */

import type { ErrorObject } from "ajv";

/** A parsed JSON object (schema node). */
export type JsonObject = { readonly [key: string]: unknown };

/** Message direction: client→server (`c2s`) or server→client (`s2c`). */
export type Direction = "c2s" | "s2c";

/** What a JSON-RPC method maps to in one direction. */
export interface MethodEntry {
  /** Definition that validates the whole request/notification object (e.g. `CallToolRequest`). */
  readonly definition: string;
  readonly kind: "request" | "notification";
  /** For requests: the definition of the success result (e.g. `CallToolResult`, `EmptyResult`). */
  readonly resultDefinition?: string;
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
export const DISCRIMINATOR_KEYS: readonly string[] = ["method", "type"];

/** The union definitions that fix each method's direction (MCP schema "ClientRequest" etc.). */
const DIRECTION_UNIONS: ReadonlyArray<{ union: string; direction: Direction; kind: MethodEntry["kind"] }> = [
  { union: "ClientRequest", direction: "c2s", kind: "request" },
  { union: "ClientNotification", direction: "c2s", kind: "notification" },
  { union: "ServerRequest", direction: "s2c", kind: "request" },
  { union: "ServerNotification", direction: "s2c", kind: "notification" },
];

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Locate the definitions of an MCP schema.
 *
 * @param schema parsed `schema.json`
 * @returns the definitions object and the matching local `$ref` prefix
 * @throws Error when the schema has neither `definitions` nor `$defs`
 */
export function schemaDefinitions(schema: object): { defs: Readonly<Record<string, JsonObject>>; refPrefix: string } {
  const root = schema as JsonObject;
  if (isObject(root["$defs"])) return { defs: root["$defs"] as Record<string, JsonObject>, refPrefix: "#/$defs/" };
  if (isObject(root["definitions"])) {
    return { defs: root["definitions"] as Record<string, JsonObject>, refPrefix: "#/definitions/" };
  }
  throw new Error("not an MCP schema: no `definitions` (draft-07) or `$defs` (2020-12) object");
}

/** The constant value of `properties[key]` of a definition, if it is a string const. */
function constOf(def: JsonObject | undefined, key: string): string | undefined {
  if (!def || !isObject(def["properties"])) return undefined;
  const prop = (def["properties"] as JsonObject)[key];
  if (!isObject(prop)) return undefined;
  const value = prop["const"];
  return typeof value === "string" ? value : undefined;
}

/**
 * Members of a union definition: the `$ref` targets of its `anyOf`/`oneOf`, a single `$ref`, or
 * the definition itself when it is not a union (a one-member union may be inlined, as
 * `ClientNotification` is in MCP 2026-07-28). Nested unions are flattened.
 */
function unionMembers(defs: Readonly<Record<string, JsonObject>>, name: string, refPrefix: string, seen = new Set<string>()): string[] {
  if (seen.has(name)) return [];
  seen.add(name);
  const def = defs[name];
  if (!def) return [];
  const branches = Array.isArray(def["anyOf"]) ? def["anyOf"] : Array.isArray(def["oneOf"]) ? def["oneOf"] : undefined;
  const refs: string[] = [];
  if (branches) {
    for (const b of branches) if (isObject(b) && typeof b["$ref"] === "string") refs.push(b["$ref"]);
  } else if (typeof def["$ref"] === "string" && constOf(def, "method") === undefined) {
    refs.push(def["$ref"]);
  } else {
    return [name];
  }
  const out: string[] = [];
  for (const ref of refs) {
    if (!ref.startsWith(refPrefix)) continue;
    out.push(...unionMembers(defs, ref.slice(refPrefix.length), refPrefix, seen));
  }
  return out;
}

/**
 * The result definition for a request definition: `XRequest` → `XResult` when the schema defines
 * it, otherwise `EmptyResult` (the spec's reply to ping, logging/setLevel, resources/subscribe…),
 * otherwise `Result`.
 */
export function resultDefinitionFor(defs: Readonly<Record<string, unknown>>, requestDefinition: string): string {
  if (requestDefinition.endsWith("Request")) {
    const candidate = `${requestDefinition.slice(0, -"Request".length)}Result`;
    if (candidate in defs) return candidate;
  }
  return "EmptyResult" in defs ? "EmptyResult" : "Result";
}

/** Visit every `anyOf`/`oneOf` array in a schema tree. */
function forEachUnion(node: unknown, visit: (branches: readonly unknown[]) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) forEachUnion(item, visit);
    return;
  }
  if (!isObject(node)) return;
  for (const [key, value] of Object.entries(node)) {
    if ((key === "anyOf" || key === "oneOf") && Array.isArray(value)) visit(value);
    forEachUnion(value, visit);
  }
}

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
export function deriveSchemaMeta(schema: object): SchemaMeta {
  const { defs, refPrefix } = schemaDefinitions(schema);
  const tables: Record<Direction, Record<string, MethodEntry>> = { c2s: {}, s2c: {} };
  for (const { union, direction, kind } of DIRECTION_UNIONS) {
    for (const member of unionMembers(defs, union, refPrefix)) {
      const method = constOf(defs[member], "method");
      if (method === undefined) continue;
      tables[direction][method] =
        kind === "request"
          ? { definition: member, kind, resultDefinition: resultDefinitionFor(defs, member) }
          : { definition: member, kind };
    }
  }

  const disc: Record<string, Record<string, Set<string>>> = {};
  forEachUnion(defs, (branches) => {
    for (const branch of branches) {
      if (!isObject(branch) || typeof branch["$ref"] !== "string" || !branch["$ref"].startsWith(refPrefix)) continue;
      const name = branch["$ref"].slice(refPrefix.length);
      for (const key of DISCRIMINATOR_KEYS) {
        const value = constOf(defs[name], key);
        if (value === undefined) continue;
        ((disc[key] ??= {})[value] ??= new Set()).add(name);
      }
    }
  });

  const sortRecord = <V>(rec: Record<string, V>): Record<string, V> =>
    Object.fromEntries(Object.keys(rec).sort().map((k) => [k, rec[k] as V]));
  const discriminators: Record<string, Record<string, string[]>> = {};
  for (const key of Object.keys(disc).sort()) {
    const byValue = disc[key] as Record<string, Set<string>>;
    discriminators[key] = sortRecord(Object.fromEntries(Object.entries(byValue).map(([v, s]) => [v, [...s].sort()])));
  }
  return {
    refPrefix,
    definitions: Object.keys(defs).sort(),
    methods: { c2s: sortRecord(tables.c2s), s2c: sortRecord(tables.s2c) },
    discriminators,
  };
}
