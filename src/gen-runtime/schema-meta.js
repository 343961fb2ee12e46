/**
 * Facts derived from an MCP `schema.json`: its definition names, which definition validates each
 * JSON-RPC method in each direction, and the `type`/`method` constants that tell the branches of a
 * union apart.
 *
 * One implementation serves both paths: `codegen/generate.mjs` imports it to emit
 * `src/gen/mcp/<version>/methods.ts`, and `src/mcp/validation.ts` runs it on any schema loaded at
 * run time (`compileValidatorsFromSchema`). Plain JavaScript (types in `./schema-meta.d.ts`) so
 * that Node runs it as is in the generator; pure functions over plain JSON; no dependencies.
 *
 * Works for draft-07 schemas (`definitions`, MCP 2024-11-05 … 2025-06-18) and JSON Schema
 * 2020-12 ones (`$defs`, MCP 2025-11-25 and later).
 */
/** Property names used as union discriminators in MCP schemas. */
export const DISCRIMINATOR_KEYS = ["method", "type"];
/** The union definitions that fix each method's direction (MCP schema "ClientRequest" etc.). */
const DIRECTION_UNIONS = [
  { union: "ClientRequest", direction: "c2s", kind: "request" },
  { union: "ClientNotification", direction: "c2s", kind: "notification" },
  { union: "ServerRequest", direction: "s2c", kind: "request" },
  { union: "ServerNotification", direction: "s2c", kind: "notification" },
];
function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
/**
 * Locate the definitions of an MCP schema.
 *
 * @param schema parsed `schema.json`
 * @returns the definitions object and the matching local `$ref` prefix
 * @throws Error when the schema has neither `definitions` nor `$defs`
 */
export function schemaDefinitions(schema) {
  const root = schema;
  if (isObject(root["$defs"])) return { defs: root["$defs"], refPrefix: "#/$defs/" };
  if (isObject(root["definitions"])) {
    return { defs: root["definitions"], refPrefix: "#/definitions/" };
  }
  throw new Error("not an MCP schema: no `definitions` (draft-07) or `$defs` (2020-12) object");
}
/** The constant value of `properties[key]` of a definition, if it is a string const. */
function constOf(def, key) {
  if (!def || !isObject(def["properties"])) return undefined;
  const prop = def["properties"][key];
  if (!isObject(prop)) return undefined;
  const value = prop["const"];
  return typeof value === "string" ? value : undefined;
}
/**
 * Members of a union definition: the `$ref` targets of its `anyOf`/`oneOf`, a single `$ref`, or
 * the definition itself when it is not a union (a one-member union may be inlined, as
 * `ClientNotification` is in MCP 2026-07-28). Nested unions are flattened.
 */
function unionMembers(defs, name, refPrefix, seen = new Set()) {
  if (seen.has(name)) return [];
  seen.add(name);
  const def = defs[name];
  if (!def) return [];
  const branches = Array.isArray(def["anyOf"]) ? def["anyOf"] : Array.isArray(def["oneOf"]) ? def["oneOf"] : undefined;
  const refs = [];
  if (branches) {
    for (const b of branches) if (isObject(b) && typeof b["$ref"] === "string") refs.push(b["$ref"]);
  } else if (typeof def["$ref"] === "string" && constOf(def, "method") === undefined) {
    refs.push(def["$ref"]);
  } else {
    return [name];
  }
  const out = [];
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
export function resultDefinitionFor(defs, requestDefinition) {
  if (requestDefinition.endsWith("Request")) {
    const candidate = `${requestDefinition.slice(0, -"Request".length)}Result`;
    if (candidate in defs) return candidate;
  }
  return "EmptyResult" in defs ? "EmptyResult" : "Result";
}
/**
 * The definitions a request's response definition (`XResultResponse`, MCP 2026-07-28 and later)
 * allows as its `result` when that is a union of more than one (nested unions flattened, in schema
 * order), e.g. `["InputRequiredResult", "CallToolResult"]`; undefined when the schema has no such
 * response definition or its `result` is one definition.
 */
function resultUnionFor(defs, resultDefinition, refPrefix) {
  const response = defs[`${resultDefinition}Response`];
  const result = isObject(response) && isObject(response["properties"]) ? response["properties"]["result"] : undefined;
  if (!isObject(result)) return undefined;
  const branches = Array.isArray(result["anyOf"]) ? result["anyOf"] : Array.isArray(result["oneOf"]) ? result["oneOf"] : [];
  const members = [];
  for (const b of branches) {
    if (isObject(b) && typeof b["$ref"] === "string" && b["$ref"].startsWith(refPrefix)) members.push(...unionMembers(defs, b["$ref"].slice(refPrefix.length), refPrefix));
  }
  return members.length > 1 ? members : undefined;
}
/** Visit every `anyOf`/`oneOf` array in a schema tree. */
function forEachUnion(node, visit) {
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
 * Requests get `resultDefinition` from {@link resultDefinitionFor}, and `resultUnion` where their
 * response definition allows a union as the result ({@link resultUnionFor}).
 *
 * @param schema parsed `schema.json` (draft-07 or 2020-12)
 * @returns plain data with sorted keys (deterministic when serialised)
 * @throws Error when the schema has no definitions (see {@link schemaDefinitions})
 */
export function deriveSchemaMeta(schema) {
  const { defs, refPrefix } = schemaDefinitions(schema);
  const tables = { c2s: {}, s2c: {} };
  for (const { union, direction, kind } of DIRECTION_UNIONS) {
    for (const member of unionMembers(defs, union, refPrefix)) {
      const method = constOf(defs[member], "method");
      if (method === undefined) continue;
      if (kind === "notification") {
        tables[direction][method] = { definition: member, kind };
        continue;
      }
      const resultDefinition = resultDefinitionFor(defs, member);
      const resultUnion = resultUnionFor(defs, resultDefinition, refPrefix);
      tables[direction][method] = resultUnion === undefined ? { definition: member, kind, resultDefinition } : { definition: member, kind, resultDefinition, resultUnion };
    }
  }
  const disc = {};
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
  const sortRecord = (rec) =>
    Object.fromEntries(
      Object.keys(rec)
        .sort()
        .map((k) => [k, rec[k]]),
    );
  const discriminators = {};
  for (const key of Object.keys(disc).sort()) {
    const byValue = disc[key];
    discriminators[key] = sortRecord(Object.fromEntries(Object.entries(byValue).map(([v, s]) => [v, [...s].sort()])));
  }
  return {
    refPrefix,
    definitions: Object.keys(defs).sort(),
    methods: { c2s: sortRecord(tables.c2s), s2c: sortRecord(tables.s2c) },
    discriminators,
  };
}

/**
 * What a protocol revision allows, read from its schema: a feature is present when the schema
 * defines it (see {@link SchemaFacts} in ./schema-meta.d.ts for each member and its evidence).
 *
 * @param {object} schema parsed `schema.json` (draft-07 or 2020-12)
 * @param {SchemaMeta} [meta] {@link deriveSchemaMeta} of the same schema (computed when absent)
 * @returns plain data, deterministic when serialised
 * @throws Error when the schema has no definitions
 */
export function deriveSchemaFacts(schema, meta = deriveSchemaMeta(schema)) {
  const { defs } = schemaDefinitions(schema);
  const declared = typeof schema["$schema"] === "string" ? schema["$schema"] : "";
  const propsOf = (name) => (isObject(defs[name]) && isObject(defs[name]["properties"]) ? defs[name]["properties"] : {});
  const c2s = meta.methods.c2s;
  return {
    era: Object.hasOwn(c2s, "initialize") ? "initialize" : "stateless",
    jsonSchemaDialect: declared.includes("2020-12") ? "2020-12" : "draft-07",
    batches: "JSONRPCBatchRequest" in defs,
    audioContent: "AudioContent" in defs,
    resourceLinks: "ResourceLink" in defs,
    structuredContent: "structuredContent" in propsOf("CallToolResult"),
    resultType: "ResultType" in defs,
    setLevelRequest: Object.hasOwn(c2s, "logging/setLevel"),
    serverCapabilities: Object.keys(propsOf("ServerCapabilities")).sort(),
  };
}
