/**
 * The validation machinery behind the facade in `./validation.ts`: {@link ValidatorSet} (the
 * {@link ProtocolValidators} implementation, with failure explanations) and
 * {@link compileValidatorsFromSchema}. It does not import the generated validators: the one
 * mechanism that does, `validatorsFor` in `./validation.ts`, loads them one revision at a time, on
 * first use; `./validation.ts` re-exports everything here.
 *
 * Fast path: a valid message costs one generated validator call and allocates nothing. Only a
 * failure builds {@link SchemaIssue}s; for a failed `anyOf` whose data carries a discriminating
 * `type`/`method` constant (content blocks, request unions), the matching branch is re-validated
 * so the first issue explains that branch instead of the first branch tried.
 */
import { createRequire } from "node:module";
import type { ErrorObject } from "ajv";
import { MCP_FORMATS } from "./formats.js";
import { deriveSchemaMeta, type Direction, type DiscriminatorTable, type GeneratedValidator, type MethodEntry, type MethodTable } from "./schema-meta.js";

export type { Direction };

/** One reason a value does not match a schema definition. */
export interface SchemaIssue {
  /** JSON Pointer (RFC 6901) into the validated data; "" is the whole value. */
  pointer: string;
  /** Human-readable reason, e.g. `must be string (got number)`; see {@link formatIssue}. */
  reason: string;
  /** The JSON Schema keyword that failed (`type`, `required`, `const`, `anyOf`, …). */
  keyword: string;
  /** The definition being checked when the issue was found (a union branch when refined). */
  definition: string;
}

/** How a JSON-RPC method maps onto schema definitions in one direction. */
export interface MessageDefinition {
  /** Definition validating the whole request/notification object, e.g. `CallToolRequest`. */
  definition: string;
  kind: "request" | "notification";
  /** For requests: the success result definition, e.g. `CallToolResult`. */
  resultDefinition?: string;
  /**
   * For requests whose response definition allows a union as the result (MCP 2026-07-28
   * `CallToolResultResponse`): its branches, e.g. `["InputRequiredResult", "CallToolResult"]`.
   */
  resultUnion?: readonly string[];
}

/** Validators for one MCP protocol revision. */
export interface ProtocolValidators {
  /** The protocol revision, e.g. "2025-06-18" (for runtime-compiled schemas: as given). */
  readonly version: string;
  /**
   * Definition for a request/notification method in a direction, or undefined if this version
   * has none (unknown method, or a method only defined for the other direction).
   */
  messageDefinition(direction: Direction, method: string): MessageDefinition | undefined;
  /**
   * Validate `data` against a named definition. Returns null when valid (fast path: no error
   * collection). Otherwise returns at least one issue, most useful first (deepest pointer; for a
   * failed union, the branch whose `type`/`method` constant matches the data).
   *
   * @throws Error when `definition` does not exist in this version (check with {@link has}),
   *   or when a runtime-compiled schema fails to compile that definition.
   */
  validate(definition: string, data: unknown): SchemaIssue[] | null;
  /** Whether this version defines `definition`. */
  has(definition: string): boolean;
  /**
   * Optional fast path: the validator function of `definition` (undefined when there is none), for
   * callers that check the same definition many times. It returns true exactly when
   * {@link validate} returns null; it may throw as {@link validate} does for a runtime-compiled
   * schema that fails to compile.
   */
  lookup?(definition: string): ((data: unknown) => boolean) | undefined;
}

/**
 * The shape of a generated revision's `ProtocolTypes` (`src/gen/mcp/<revision>/methods.ts`):
 * definition name → type; JSON-RPC request method → request and result types; notification
 * method → notification type (both directions).
 */
export interface ProtocolTypesShape {
  readonly version: string;
  readonly definitions: object;
  readonly requests: { readonly [method: string]: { readonly request: unknown; readonly result: unknown } };
  readonly notifications: { readonly [method: string]: unknown };
}

/** A typed check of one schema definition. */
export interface DefinitionCheck<T> {
  /** The definition checked, e.g. `CallToolRequest`. */
  readonly definition: string;
  /** Whether `data` matches (one validator call, no allocation): a type guard. */
  is(data: unknown): data is T;
  /** null when `data` matches, otherwise the issues, most useful first (as {@link ProtocolValidators.validate}). */
  issues(data: unknown): SchemaIssue[] | null;
}

/** Definition names of a revision's types. */
type DefinitionOf<P extends ProtocolTypesShape> = keyof P["definitions"] & string;
type DefinitionType<P extends ProtocolTypesShape, N> = N extends keyof P["definitions"] ? P["definitions"][N] : never;

/**
 * {@link ProtocolValidators} of one generated revision, typed by its `ProtocolTypes` `P`
 * (`validatorsFor("2025-11-25")`): definition names and methods are checked by `tsc`, and each
 * accessor's guard narrows to the schema's type, e.g. `request("tools/call").is(x)` → `CallToolRequest`.
 */
export interface TypedProtocolValidators<P extends ProtocolTypesShape> extends ProtocolValidators {
  readonly version: P["version"];
  /** As {@link ProtocolValidators.validate}, for a definition of this revision only. */
  validate(definition: DefinitionOf<P>, data: unknown): SchemaIssue[] | null;
  /** The check of a definition of this revision. */
  definition<N extends DefinitionOf<P>>(name: N): DefinitionCheck<DefinitionType<P, N>>;
  /** The check of a request (whole JSON-RPC object) of `method`, either direction. */
  request<M extends keyof P["requests"] & string>(method: M): DefinitionCheck<P["requests"][M]["request"]>;
  /** The check of the success `result` of a `method` request. */
  result<M extends keyof P["requests"] & string>(method: M): DefinitionCheck<P["requests"][M]["result"]>;
  /** The check of a notification (whole JSON-RPC object) of `method`, either direction. */
  notification<M extends keyof P["notifications"] & string>(method: M): DefinitionCheck<P["notifications"][M]>;
}

/** `pointer: reason`, with "(root)" for the empty pointer; e.g. `/params/name: must be string (got number)`. */
export function formatIssue(issue: SchemaIssue): string {
  return `${issue.pointer === "" ? "(root)" : issue.pointer}: ${issue.reason}`;
}

// ---------------------------------------------------------------------------------------------
// issue construction

/** Upper bound on nested branch refinement (unions inside union branches). */
const MAX_REFINE_DEPTH = 8;

function hasOwn(obj: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

/** Resolve a JSON Pointer (as ajv writes `instancePath`) in `data`; undefined when absent. */
function resolvePointer(data: unknown, pointer: string): unknown {
  if (pointer === "") return data;
  let cur: unknown = data;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(cur)) cur = cur[Number(key)];
    else if (cur !== null && typeof cur === "object" && hasOwn(cur, key)) cur = (cur as Record<string, unknown>)[key];
    else return undefined;
  }
  return cur;
}

function depthOf(pointer: string): number {
  let n = 0;
  for (let i = 0; i < pointer.length; i++) if (pointer.charCodeAt(i) === 47 /* "/" */) n++;
  return n;
}

/** JSON type name of a value, distinguishing integer/number, null and array. */
function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** Short JSON rendering of a value for messages (strings quoted, long values truncated). */
function preview(value: unknown): string {
  let text: string;
  try {
    text = value === undefined ? "undefined" : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

const FORMAT_NAMES: Readonly<Record<string, string>> = {
  byte: 'base64 data (format "byte")',
  uri: 'an absolute URI (format "uri")',
  "uri-template": 'a URI template (format "uri-template")',
  "date-time": 'an RFC 3339 date-time (format "date-time")',
  email: 'an email address (format "email")',
};

/** A human-readable reason for one ajv error (ajv messages are off in generated code). */
function reasonFor(err: ErrorObject, data: unknown): string {
  const p = err.params as Record<string, unknown>;
  const value = (): unknown => resolvePointer(data, err.instancePath);
  switch (err.keyword) {
    case "type": {
      const types = Array.isArray(p["type"]) ? (p["type"] as string[]).join(" or ") : String(p["type"]);
      return `must be ${types} (got ${jsonType(value())})`;
    }
    case "required":
      return `must have required property '${String(p["missingProperty"])}'`;
    case "const":
      return `must be ${preview(p["allowedValue"])} (got ${preview(value())})`;
    case "enum": {
      const allowed = Array.isArray(p["allowedValues"]) ? (p["allowedValues"] as unknown[]).map(preview).join(", ") : "";
      return `must be one of ${allowed} (got ${preview(value())})`;
    }
    case "format": {
      const name = String(p["format"]);
      return `must be ${FORMAT_NAMES[name] ?? `in format "${name}"`}`;
    }
    case "additionalProperties":
      return `must NOT have additional property '${String(p["additionalProperty"])}'`;
    case "unevaluatedProperties":
      return `must NOT have unevaluated property '${String(p["unevaluatedProperty"])}'`;
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return `must be ${String(p["comparison"])} ${String(p["limit"])} (got ${preview(value())})`;
    case "multipleOf":
      return `must be a multiple of ${String(p["multipleOf"])}`;
    case "minLength":
      return `must NOT have fewer than ${String(p["limit"])} characters`;
    case "maxLength":
      return `must NOT have more than ${String(p["limit"])} characters`;
    case "minItems":
      return `must NOT have fewer than ${String(p["limit"])} items`;
    case "maxItems":
      return `must NOT have more than ${String(p["limit"])} items`;
    case "minProperties":
      return `must NOT have fewer than ${String(p["limit"])} properties`;
    case "maxProperties":
      return `must NOT have more than ${String(p["limit"])} properties`;
    case "uniqueItems":
      return `must NOT have duplicate items (items ${String(p["j"])} and ${String(p["i"])} are identical)`;
    case "pattern":
      return `must match pattern ${JSON.stringify(p["pattern"])}`;
    case "propertyNames":
      return `property name ${preview(p["propertyName"])} is invalid`;
    case "dependencies":
    case "dependentRequired":
      return `must have property '${String(p["missingProperty"])}' when property '${String(p["property"])}' is present`;
    case "anyOf":
      return "must match one of the allowed shapes (anyOf)";
    case "oneOf":
      return Array.isArray(p["passingSchemas"]) ? "must match exactly one allowed shape, but matches several (oneOf)" : "must match exactly one of the allowed shapes (oneOf)";
    case "not":
      return "must NOT match the excluded shape (not)";
    case "if":
      return `must match the "${String(p["failingKeyword"])}" schema`;
    case "false schema":
      return "is not allowed here";
    case "contains":
      return "must contain at least one valid item";
    default:
      return `fails "${err.keyword}" ${preview(p)}`;
  }
}

const isCombinator = (e: ErrorObject): boolean => e.keyword === "anyOf" || e.keyword === "oneOf";

/** Internal view of a validator set used while explaining a failure. */
interface Explainer {
  lookup(definition: string): GeneratedValidator<unknown> | undefined;
  readonly discriminators: DiscriminatorTable;
}

/** Definitions whose `type`/`method` constant matches the value (union-branch candidates). */
function branchCandidates(table: DiscriminatorTable, value: unknown): string[] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [];
  const out: string[] = [];
  for (const key of Object.keys(table)) {
    const tag = (value as Record<string, unknown>)[key];
    if (typeof tag !== "string") continue;
    const byValue = table[key] as Readonly<Record<string, readonly string[]>>;
    if (hasOwn(byValue, tag)) out.push(...(byValue[tag] as readonly string[]));
  }
  return out;
}

/**
 * When a failed union's value carries a `type`/`method` string that no union branch uses, and
 * every branch failed right at the value (missing property) or at that very member (wrong
 * constant), the unknown constant is the real problem. Returns it, else undefined.
 */
function unknownDiscriminator(table: DiscriminatorTable, value: unknown, at: string, errors: readonly ErrorObject[]): { key: string; tag: string } | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  for (const key of Object.keys(table)) {
    const tag = (value as Record<string, unknown>)[key];
    if (typeof tag !== "string") continue;
    const branchOnly = errors.every(
      (e) => isCombinator(e) || !(at === "" || e.instancePath === at || e.instancePath.startsWith(`${at}/`)) || e.instancePath === at || e.instancePath === `${at}/${key}`,
    );
    if (branchOnly) return { key, tag };
  }
  return undefined;
}

/**
 * Turn ajv errors for `definition` on `data` into ranked issues. `base` is the pointer of `data`
 * inside the top-level value.
 */
function explain(ex: Explainer, definition: string, data: unknown, errors: readonly ErrorObject[], base: string, depth: number): SchemaIssue[] {
  const toIssue = (e: ErrorObject, def: string): SchemaIssue => ({
    pointer: base + e.instancePath,
    reason: reasonFor(e, data),
    keyword: e.keyword,
    definition: def,
  });

  // Focus on the deepest failed union whose value names its branch with a `type`/`method`
  // constant: re-validate against that branch, or say that no branch has that constant.
  let focus: { pointer: string; issues: SchemaIssue[] } | undefined;
  if (depth < MAX_REFINE_DEPTH) {
    const unions = errors.filter(isCombinator).sort((a, b) => depthOf(b.instancePath) - depthOf(a.instancePath));
    for (const u of unions) {
      const at = u.instancePath;
      const value = resolvePointer(data, at);
      const candidates = branchCandidates(ex.discriminators, value);
      for (const candidate of candidates) {
        const validator = ex.lookup(candidate);
        if (!validator || validator(value)) continue;
        const branchErrors = [...(validator.errors ?? [])];
        const issues = explain(ex, candidate, value, branchErrors, base + at, depth + 1);
        if (issues.length > 0) {
          focus = { pointer: at, issues };
          break;
        }
      }
      if (!focus && candidates.length === 0) {
        const unknownTag = unknownDiscriminator(ex.discriminators, value, at, errors);
        if (unknownTag) {
          focus = {
            pointer: at,
            issues: [
              {
                pointer: `${base}${at}/${unknownTag.key}`,
                reason: `no allowed shape has ${unknownTag.key} ${preview(unknownTag.tag)}`,
                keyword: u.keyword,
                definition,
              },
            ],
          };
        }
      }
      if (focus) break;
    }
  }

  // Then the original errors: concrete ones deepest first (stable), union summaries last. Branch
  // failures under a focused union are noise once the relevant branch has been explained.
  const under = (pointer: string, root: string): boolean => root === "" || pointer === root || pointer.startsWith(`${root}/`);
  const concrete = errors
    .filter((e) => !isCombinator(e) && !(focus && under(e.instancePath, focus.pointer)))
    .map((e, i) => ({ e, i, d: depthOf(e.instancePath) }))
    .sort((a, b) => b.d - a.d || a.i - b.i)
    .map(({ e }) => toIssue(e, definition));
  const summaries = errors.filter(isCombinator).map((e) => toIssue(e, definition));
  const refined = focus ? focus.issues : [];

  const seen = new Set<string>();
  const out: SchemaIssue[] = [];
  for (const issue of [...refined, ...concrete, ...summaries]) {
    const key = `${issue.pointer}\u0000${issue.keyword}\u0000${issue.reason}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(issue);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// validator sets

/**
 * A {@link ProtocolValidators} over one schema's definitions. `resolve` returns the validator of a
 * definition (generated ahead of time, compiled on demand, or loaded on demand: it may throw when
 * it cannot, and is asked again next time); each answer is kept.
 */
export class ValidatorSet implements ProtocolValidators, Explainer {
  readonly version: string;
  readonly discriminators: DiscriminatorTable;
  private readonly methods: MethodTable;
  private readonly names: ReadonlySet<string>;
  private readonly resolve: (definition: string) => GeneratedValidator<unknown>;
  private readonly resolved = new Map<string, GeneratedValidator<unknown>>();
  private readonly checks = new Map<string, DefinitionCheck<unknown>>();

  constructor(
    version: string,
    definitions: readonly string[],
    methods: MethodTable,
    discriminators: DiscriminatorTable,
    resolve: (definition: string) => GeneratedValidator<unknown>,
  ) {
    this.version = version;
    this.names = new Set(definitions);
    this.methods = methods;
    this.discriminators = discriminators;
    this.resolve = resolve;
  }

  has(definition: string): boolean {
    return this.names.has(definition);
  }

  lookup(definition: string): GeneratedValidator<unknown> | undefined {
    // One Map hit per call once resolved (validate runs two or three times per message).
    const known = this.resolved.get(definition);
    if (known !== undefined) return known;
    if (!this.names.has(definition)) return undefined;
    const validator = this.resolve(definition);
    this.resolved.set(definition, validator);
    return validator;
  }

  messageDefinition(direction: Direction, method: string): MessageDefinition | undefined {
    const table = this.methods[direction];
    if (!table || !hasOwn(table, method)) return undefined;
    const entry = table[method] as MethodEntry;
    if (entry.resultDefinition === undefined) return { definition: entry.definition, kind: entry.kind };
    const out: MessageDefinition = { definition: entry.definition, kind: entry.kind, resultDefinition: entry.resultDefinition };
    if (entry.resultUnion !== undefined) out.resultUnion = entry.resultUnion;
    return out;
  }

  /** {@link TypedProtocolValidators.definition}, untyped; throws for a definition this revision lacks. */
  definition(name: string): DefinitionCheck<unknown> {
    let check = this.checks.get(name);
    if (check === undefined) {
      if (!this.names.has(name)) throw new Error(`MCP ${this.version} has no schema definition named "${name}"`);
      check = {
        definition: name,
        is: (data: unknown): data is unknown => this.lookup(name)!(data),
        issues: (data: unknown) => this.validate(name, data),
      };
      this.checks.set(name, check);
    }
    return check;
  }

  /** {@link TypedProtocolValidators.request}, untyped; throws for a method that is no request here. */
  request(method: string): DefinitionCheck<unknown> {
    return this.definition(this.entry(method, "request").definition);
  }

  /** {@link TypedProtocolValidators.result}, untyped; throws for a method that is no request here. */
  result(method: string): DefinitionCheck<unknown> {
    return this.definition(this.entry(method, "request").resultDefinition!);
  }

  /** {@link TypedProtocolValidators.notification}, untyped; throws for a method that is no notification here. */
  notification(method: string): DefinitionCheck<unknown> {
    return this.definition(this.entry(method, "notification").definition);
  }

  private entry(method: string, kind: MethodEntry["kind"]): MethodEntry {
    for (const table of [this.methods.c2s, this.methods.s2c]) {
      if (hasOwn(table, method) && (table[method] as MethodEntry).kind === kind) return table[method] as MethodEntry;
    }
    throw new Error(`MCP ${this.version} has no ${kind} named "${method}"`);
  }

  validate(definition: string, data: unknown): SchemaIssue[] | null {
    const validator = this.lookup(definition);
    if (!validator) throw new Error(`MCP ${this.version} has no schema definition named "${definition}"`);
    if (validator(data)) return null;
    const errors = [...(validator.errors ?? [])];
    const issues = explain(this, definition, data, errors, "", 0);
    return issues.length > 0 ? issues : [{ pointer: "", reason: "does not match the schema", keyword: "unknown", definition }];
  }
}

// Runtime compilation loads ajv lazily (synchronously, via require) so that importing this module
// — which the bridge does at start-up — does not pay for the ajv compiler.
const require = createRequire(import.meta.url);

/** Minimal structural view of the ajv instance API used here (ajv is CJS; loaded via require). */
interface AjvLike {
  addFormat(name: string, format: (value: string) => boolean): unknown;
  addSchema(schema: object, key?: string): unknown;
  getSchema(keyRef: string): GeneratedValidator<unknown> | undefined;
}
type AjvCtor = new (opts: Record<string, unknown>) => AjvLike;

function loadAjv(dialect: "draft-07" | "2019-09" | "2020-12"): AjvCtor {
  // ajv's CJS entry points export the class as `default` (and as module.exports for the core).
  const mod =
    dialect === "2020-12"
      ? (require("ajv/dist/2020") as { default: AjvCtor })
      : dialect === "2019-09"
        ? (require("ajv/dist/2019") as { default: AjvCtor })
        : (require("ajv") as { default: AjvCtor });
  return mod.default;
}

function dialectOf(schema: Record<string, unknown>): "draft-07" | "2019-09" | "2020-12" {
  const declared = typeof schema["$schema"] === "string" ? schema["$schema"] : "";
  if (declared.includes("2020-12")) return "2020-12";
  if (declared.includes("2019-09")) return "2019-09";
  if (declared === "" && schema["$defs"] !== undefined && schema["definitions"] === undefined) return "2020-12";
  if (declared !== "" && !declared.includes("draft-07") && !declared.includes("draft-06")) {
    throw new Error(`unsupported JSON Schema dialect ${declared} (expected draft-07 or 2020-12)`);
  }
  return "draft-07";
}

/**
 * Compile validators at run time from any MCP `schema.json` — draft-07 with `definitions`
 * (MCP ≤ 2025-06-18) or 2020-12 with `$defs` (MCP ≥ 2025-11-25) — with the same method derivation
 * and format checks as the generated validators. Definitions compile lazily on first use (ajv,
 * non-strict so that official schemas load as published; formats from ajv-formats, with this
 * project's `byte` and `uri`). The caller's object is not modified.
 *
 * @param schema parsed schema.json
 * @param version the protocol revision it describes (reported as `version`)
 * @returns validators for that schema
 * @throws Error when the schema has no `definitions`/`$defs`, declares an unsupported dialect, or
 *   is not a valid JSON Schema (ajv meta-schema check, "schema is invalid: …"); `validate` throws
 *   when a definition fails to compile (e.g. "can't resolve reference #/definitions/X")
 */
export function compileValidatorsFromSchema(schema: object, version: string): ProtocolValidators {
  const root = schema as Record<string, unknown>;
  const meta = deriveSchemaMeta(root);
  const dialect = dialectOf(root);
  const Ajv = loadAjv(dialect);
  // messages on: only so that "schema is invalid" errors from addSchema read well; issue reasons
  // are built from keyword/params either way.
  const ajv = new Ajv({ strict: false, allErrors: false, messages: true, allowUnionTypes: true, logger: false });
  const addFormats = (require("ajv-formats") as { default: (ajv: AjvLike) => unknown }).default;
  addFormats(ajv);
  for (const [name, check] of Object.entries(MCP_FORMATS)) ajv.addFormat(name, check);
  const key = "mcp-schema";
  const copy = structuredClone(root);
  delete copy["$id"]; // refer to it by key; an $id could collide or point elsewhere
  ajv.addSchema(copy, key);

  const compiled = new Map<string, GeneratedValidator<unknown>>();
  return new ValidatorSet(version, meta.definitions, meta.methods, meta.discriminators, (name) => {
    let v = compiled.get(name);
    if (!v) {
      v = ajv.getSchema(`${key}${meta.refPrefix}${name}`);
      if (!v) throw new Error(`schema for MCP ${version}: cannot compile definition "${name}"`);
      compiled.set(name, v);
    }
    return v;
  });
}
