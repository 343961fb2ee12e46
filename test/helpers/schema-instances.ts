/**
 * Deterministic instance generator and single-field mutator for JSON Schema documents, used by
 * the differential schema tests (test/unit/mcp-schema-agreement.test.ts).
 *
 * Given a schema document with named definitions — draft-07 `definitions` or 2020-12 `$defs` —
 * {@link SchemaInstanceGenerator} produces instances of a definition that the schema accepts, by
 * walking `$ref`, `allOf`, `anyOf`/`oneOf`, `type` (including type arrays), `const`, `enum`,
 * `properties`/`required`, `additionalProperties`, `items`, `minItems`/`maxItems`,
 * `minimum`/`maximum` (and the exclusive forms), `minLength`/`maxLength` and `format` (`uri`,
 * `uri-reference`, `uri-template`, `byte`, `date-time`, `date`, `time`, `email`, `uuid`, …).
 *
 * Generation is coverage-driven rather than purely random: every `anyOf`/`oneOf` node picks its
 * least-used branch, every `enum` its least-used member, every optional property alternates
 * between present and absent, and array lengths cycle (0, 1, 2, …). Asking for a handful of
 * instances of a definition therefore exercises every branch and every field the schema has.
 * Ties and free choices (strings, numbers, extra keys) come from a seeded PRNG (mulberry32): the
 * same schema, seed and call sequence always yield the same instances.
 *
 * Each generated instance records its *sites*: every position (JSON Pointer) with the effective
 * schema that produced it and the definition that owns it (the last `$ref` target followed) plus
 * the pointer relative to that definition. {@link SchemaInstanceGenerator.mutations} turns sites
 * into single-field mutations: drop a required or an optional property, add an unknown property, wrong type, `null`, bad
 * `const`/`enum`, bad `format`, out-of-range number, non-integer, wrong array item, empty array.
 * Mutations are usually, but not always, invalid (dropping an optional property is valid):
 * differential tests compare verdicts, they do not assume them.
 *
 * Limits (throws Error when met): `pattern`, `patternProperties`, `not`, `if`/`then`/`else`,
 * `dependentRequired`, tuple `items`, `uniqueItems` on generated arrays with fewer than two
 * distinct candidates, `$ref`s outside the document. None occur in the MCP schemas.
 */

import { mulberry32 } from "./prng.js";

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A JSON Schema node (object form; boolean schemas are normalised to `{}` / `{ not: {} }`). */
type Schema = { readonly [keyword: string]: unknown };

/** One position of a generated instance. */
export interface Site {
  /** JSON Pointer (RFC 6901) into the instance; "" is the root. */
  readonly pointer: string;
  /** Definition owning this position: the last `$ref` target followed on the way down. */
  readonly definition: string;
  /** JSON Pointer of this position relative to {@link definition}'s root value. */
  readonly path: string;
  /** The effective (resolved, allOf-merged, union-branch-selected) schema that produced the value. */
  readonly schema: Schema;
}

/** A generated instance and its sites (root first, then depth-first in generation order). */
export interface GeneratedInstance {
  readonly definition: string;
  readonly value: Json;
  readonly sites: readonly Site[];
}

/** The kinds of single-field change {@link SchemaInstanceGenerator.mutations} makes. */
export type MutationKind =
  | "drop-required"
  | "drop-optional"
  | "extra-property"
  | "null"
  | "wrong-type"
  | "bad-const"
  | "bad-enum"
  | "bad-format"
  | "out-of-range"
  | "non-integer"
  | "bad-item"
  | "empty-array";

/** A copy of an instance with one position changed. */
export interface Mutation {
  readonly kind: MutationKind;
  /** Pointer of the changed position in the instance (for drop-…/extra-property: the property's). */
  readonly pointer: string;
  /** Definition owning the changed position (see {@link Site.definition}). */
  readonly definition: string;
  /** Pointer of the changed position relative to {@link definition}. */
  readonly path: string;
  /** The whole mutated instance. */
  readonly value: Json;
}

/** Options of {@link SchemaInstanceGenerator}. */
export interface GeneratorOptions {
  /** PRNG seed (any 32-bit integer). Default 1. */
  readonly seed?: number;
  /** Beyond this depth (in values), optional properties are left out, arrays are as short as allowed and unions prefer scalar branches. Default 6. */
  readonly softDepth?: number;
  /** Depth at which generation gives up (runaway recursion). Default 40. */
  readonly hardDepth?: number;
}

const ANNOTATIONS = new Set(["description", "$comment", "title", "examples", "default", "deprecated", "readOnly", "writeOnly", "$schema", "$id"]);
const UNSUPPORTED = ["pattern", "patternProperties", "not", "if", "then", "else", "dependentRequired", "dependentSchemas", "propertyNames", "contains", "prefixItems"];
const ALL_TYPES = ["object", "array", "string", "integer", "number", "boolean", "null"] as const;
const WORDS = ["alpha", "beta", "gamma", "delta", "echo", "fox", "golf", "hotel", "india", "juliet", "kilo", "lima"];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function escapePointer(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

function unescapePointer(token: string): string {
  return token.replace(/~1/g, "/").replace(/~0/g, "~");
}

/** Deep copy of a JSON value. */
function clone(value: Json): Json {
  if (Array.isArray(value)) return value.map(clone);
  if (isObject(value)) {
    const out: { [key: string]: Json } = {};
    for (const [k, v] of Object.entries(value)) out[k] = clone(v as Json);
    return out;
  }
  return value;
}

/**
 * Copy of `root` with the value at `pointer` replaced by `replacement` (or removed when
 * undefined; setting index `length` of an array appends). Only the containers on the pointer's
 * path are copied; everything else is shared with `root`, so treat both as immutable.
 *
 * @throws Error when removing the root or when the pointer's parent is not a container
 */
export function withValueAt(root: Json, pointer: string, replacement: Json | undefined): Json {
  if (pointer === "") {
    if (replacement === undefined) throw new Error("cannot remove the root");
    return replacement;
  }
  const tokens = pointer.slice(1).split("/").map(unescapePointer);
  const rebuild = (node: Json, depth: number): Json => {
    const token = tokens[depth] as string;
    const last = depth === tokens.length - 1;
    if (Array.isArray(node)) {
      const copy = [...node];
      const index = Number(token);
      if (!last) copy[index] = rebuild(copy[index] as Json, depth + 1);
      else if (replacement === undefined) copy.splice(index, 1);
      else copy[index] = replacement;
      return copy;
    }
    if (isObject(node)) {
      const copy: { [key: string]: Json } = { ...(node as { [key: string]: Json }) };
      if (!last) copy[token] = rebuild(copy[token] as Json, depth + 1);
      else if (replacement === undefined) delete copy[token];
      else copy[token] = replacement;
      return copy;
    }
    throw new Error(`pointer ${pointer} does not address a member of a container`);
  };
  return rebuild(root, 0);
}

function typesOf(schema: Schema): string[] | undefined {
  const t = schema["type"];
  if (typeof t === "string") return [t];
  if (Array.isArray(t)) return t.filter((x): x is string => typeof x === "string");
  return undefined;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Generates valid instances and single-field mutations of the definitions of one JSON Schema
 * document. Not thread-safe; coverage counters persist across calls on the same generator, so
 * successive instances of a definition differ.
 */
export class SchemaInstanceGenerator {
  /** Definition names, sorted. */
  readonly definitions: readonly string[];
  private readonly defs: Readonly<Record<string, Schema>>;
  private readonly refPrefix: string;
  private readonly random: () => number;
  private readonly softDepth: number;
  private readonly hardDepth: number;
  /** Coverage counters keyed by schema node (unions, enums, optional properties, array lengths, types). */
  private readonly counters = new WeakMap<object, Map<string, number>>();
  private readonly mergedCache = new WeakMap<object, Schema>();
  private serial = 0;

  /**
   * @param document parsed schema document with `definitions` (draft-07) or `$defs` (2020-12)
   * @param options seed and depth limits, see {@link GeneratorOptions}
   * @throws Error when the document has neither `definitions` nor `$defs`
   */
  constructor(document: object, options: GeneratorOptions = {}) {
    const root = document as Record<string, unknown>;
    if (isObject(root["$defs"])) {
      this.defs = root["$defs"] as Record<string, Schema>;
      this.refPrefix = "#/$defs/";
    } else if (isObject(root["definitions"])) {
      this.defs = root["definitions"] as Record<string, Schema>;
      this.refPrefix = "#/definitions/";
    } else {
      throw new Error("schema document has no `definitions` or `$defs`");
    }
    this.definitions = Object.keys(this.defs).sort();
    this.random = mulberry32(options.seed ?? 1);
    this.softDepth = options.softDepth ?? 6;
    this.hardDepth = options.hardDepth ?? 40;
  }

  /**
   * One instance of `definition`, valid against the document (given the format semantics listed
   * in the module comment).
   *
   * @throws Error for an unknown definition, an unsupported keyword, or runaway recursion
   */
  instance(definition: string): GeneratedInstance {
    const schema = this.defs[definition];
    if (!schema) throw new Error(`no definition ${definition}`);
    const sites: Site[] = [];
    const value = this.generate(schema, { definition, path: "", pointer: "", depth: 0 }, sites);
    return { definition, value, sites };
  }

  /** `count` successive instances of `definition` (see {@link instance}). */
  instances(definition: string, count: number): GeneratedInstance[] {
    const out: GeneratedInstance[] = [];
    for (let i = 0; i < count; i++) out.push(this.instance(definition));
    return out;
  }

  /**
   * Single-field mutations of `instance`: for every site, each applicable change (see
   * {@link MutationKind}). Deterministic for a given instance. When `limit` is given and smaller
   * than the number of candidates, a seeded sample of `limit` mutations is returned that keeps
   * every kind represented (round-robin over kinds).
   */
  mutations(instance: GeneratedInstance, limit?: number): Mutation[] {
    // Candidates first (cheap descriptors); only the kept ones are materialised.
    type Candidate = { kind: MutationKind; site: Site; pointer: string; path: string; replacement: Json };
    const byKind = new Map<MutationKind, Candidate[]>();
    const add = (kind: MutationKind, site: Site, pointer: string, path: string, replacement: Json): void => {
      let list = byKind.get(kind);
      if (!list) byKind.set(kind, (list = []));
      list.push({ kind, site, pointer, path, replacement });
    };
    const materialise = (c: Candidate): Mutation => ({
      kind: c.kind,
      pointer: c.pointer,
      definition: c.site.definition,
      path: c.path,
      value: withValueAt(instance.value, c.pointer, c.kind === "drop-required" || c.kind === "drop-optional" ? undefined : c.replacement),
    });
    for (const site of instance.sites) {
      const current = this.valueAt(instance.value, site.pointer);
      const schema = site.schema;
      const types = typesOf(schema);
      if (current !== null) add("null", site, site.pointer, site.path, null);
      if (types) {
        const wrong = ALL_TYPES.find((t) => !types.includes(t) && !(t === "integer" && types.includes("number")) && t !== "null");
        if (wrong) add("wrong-type", site, site.pointer, site.path, this.sampleOfType(wrong));
      } else if (current !== null && typeof current !== "object") {
        add("wrong-type", site, site.pointer, site.path, typeof current === "string" ? 17 : "17");
      }
      if ("const" in schema) add("bad-const", site, site.pointer, site.path, this.notConst(schema["const"] as Json));
      if (Array.isArray(schema["enum"])) add("bad-enum", site, site.pointer, site.path, this.notInEnum(schema["enum"] as Json[]));
      if (typeof current === "string" && typeof schema["format"] === "string") {
        const bad = BAD_FORMAT[schema["format"]];
        if (bad !== undefined) add("bad-format", site, site.pointer, site.path, bad);
      }
      if (typeof current === "number") {
        if (typeof schema["minimum"] === "number") add("out-of-range", site, site.pointer, site.path, schema["minimum"] - 1);
        if (typeof schema["maximum"] === "number") add("out-of-range", site, site.pointer, site.path, schema["maximum"] + 1);
        if (typeof schema["exclusiveMinimum"] === "number") add("out-of-range", site, site.pointer, site.path, schema["exclusiveMinimum"]);
        if (typeof schema["exclusiveMaximum"] === "number") add("out-of-range", site, site.pointer, site.path, schema["exclusiveMaximum"]);
        if (types?.includes("integer") && !types.includes("number")) add("non-integer", site, site.pointer, site.path, current + 0.5);
      }
      if (isObject(current)) {
        const required = new Set(Array.isArray(schema["required"]) ? (schema["required"] as string[]) : []);
        for (const key of Object.keys(current)) {
          const sub = `/${escapePointer(key)}`;
          add(required.has(key) ? "drop-required" : "drop-optional", site, site.pointer + sub, site.path + sub, null);
        }
        const extraKey = "zzUnknownField" in current ? "zzUnknownField2" : "zzUnknownField";
        const sub = `/${extraKey}`;
        add("extra-property", site, site.pointer + sub, site.path + sub, "surprise");
      }
      if (Array.isArray(current)) {
        const itemSchema = isObject(schema["items"]) ? this.effective(schema["items"] as Schema, site.definition).schema : {};
        const itemTypes = typesOf(itemSchema);
        const badItem: Json = itemTypes && !itemTypes.includes("integer") && !itemTypes.includes("number") ? 12345 : itemTypes?.includes("string") ? { zz: 1 } : "stray";
        const sub = `/${current.length}`;
        add("bad-item", site, site.pointer + sub, site.path + sub, badItem);
        if (current.length > 0) add("empty-array", site, site.pointer, site.path, []);
      }
    }
    const all = [...byKind.values()].flat();
    if (limit === undefined || all.length <= limit) return all.map(materialise);
    // Seeded, kind-balanced sample.
    const queues = [...byKind.values()].map((list) => this.shuffle([...list]));
    const out: Mutation[] = [];
    while (out.length < limit) {
      for (const q of queues) {
        const c = q.shift();
        if (c && out.length < limit) out.push(materialise(c));
      }
    }
    return out;
  }

  // -------------------------------------------------------------------------------------------
  // internals

  private valueAt(root: Json, pointer: string): Json {
    if (pointer === "") return root;
    let cur: Json = root;
    for (const token of pointer.slice(1).split("/").map(unescapePointer)) {
      cur = Array.isArray(cur) ? (cur[Number(token)] as Json) : ((cur as { [key: string]: Json })[token] as Json);
    }
    return cur;
  }

  private shuffle<T>(list: T[]): T[] {
    for (let i = list.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1));
      [list[i], list[j]] = [list[j] as T, list[i] as T];
    }
    return list;
  }

  private counterMap(node: object): Map<string, number> {
    let m = this.counters.get(node);
    if (!m) this.counters.set(node, (m = new Map()));
    return m;
  }

  /** Index of the least-used option at `node` under `tag` (ties broken by the PRNG), and count it. */
  private leastUsed(node: object, tag: string, n: number, allowed?: (i: number) => boolean): number {
    const m = this.counterMap(node);
    let best: number[] = [];
    let bestCount = Infinity;
    for (let i = 0; i < n; i++) {
      if (allowed && !allowed(i)) continue;
      const c = m.get(`${tag}:${i}`) ?? 0;
      if (c < bestCount) {
        bestCount = c;
        best = [i];
      } else if (c === bestCount) best.push(i);
    }
    if (best.length === 0) throw new Error(`no allowed option for ${tag}`);
    const pick = best[Math.floor(this.random() * best.length)] as number;
    m.set(`${tag}:${pick}`, bestCount + 1);
    return pick;
  }

  /** Alternating boolean per (node, tag), starting at a seeded value. */
  private toggle(node: object, tag: string): boolean {
    return this.leastUsed(node, tag, 2) === 1;
  }

  private resolveRef(ref: string): { schema: Schema; definition: string } {
    if (!ref.startsWith(this.refPrefix)) throw new Error(`unsupported $ref ${ref}`);
    const tokens = ref.slice(this.refPrefix.length).split("/").map(unescapePointer);
    const definition = tokens[0] as string;
    let node: unknown = this.defs[definition];
    for (const t of tokens.slice(1)) node = isObject(node) ? node[t] : undefined;
    if (!isObject(node)) throw new Error(`unresolvable $ref ${ref}`);
    return { schema: node, definition };
  }

  /**
   * The effective schema of `node`: `$ref`s followed (the owning definition updated), `allOf`
   * merged into one object schema, boolean `true` → `{}`.
   */
  private effective(node: unknown, definition: string): { schema: Schema; definition: string } {
    if (node === true) return { schema: {}, definition };
    if (!isObject(node)) throw new Error(`unsupported schema node ${JSON.stringify(node)}`);
    for (const k of UNSUPPORTED) if (k in node) throw new Error(`unsupported keyword ${k} in ${definition}`);
    const schema: Schema = node;
    const owner = definition;
    if (typeof schema["$ref"] === "string") {
      const target = this.resolveRef(schema["$ref"]);
      const siblings = Object.keys(schema).filter((k) => k !== "$ref" && !ANNOTATIONS.has(k));
      const resolved = this.effective(target.schema, target.definition);
      if (siblings.length === 0) return resolved;
      const rest = Object.fromEntries(siblings.map((k) => [k, schema[k]]));
      return {
        schema: this.merge([resolved.schema, this.effective(rest, owner).schema]),
        definition: resolved.definition,
      };
    }
    if (Array.isArray(schema["allOf"])) {
      const cached = this.mergedCache.get(schema);
      if (cached) return { schema: cached, definition: owner };
      const { allOf, ...rest } = schema as { allOf: unknown[] } & Record<string, unknown>;
      const parts = (allOf as unknown[]).map((p) => this.effective(p, owner).schema);
      const merged = this.merge([...parts, this.effective(rest, owner).schema]);
      this.mergedCache.set(schema, merged);
      return { schema: merged, definition: owner };
    }
    return { schema, definition: owner };
  }

  /** Conjunction of effective schemas, as one schema (enough for the keywords MCP schemas combine). */
  private merge(parts: Schema[]): Schema {
    const out: Record<string, unknown> = {};
    for (const part of parts) {
      for (const [k, v] of Object.entries(part)) {
        if (ANNOTATIONS.has(k)) continue;
        if (!(k in out)) {
          out[k] = k === "properties" ? { ...(v as object) } : v;
          continue;
        }
        const prev = out[k];
        switch (k) {
          case "type": {
            const a = typesOf({ type: prev }) ?? [];
            const b = typesOf({ type: v }) ?? [];
            out[k] = a
              .filter((t) => b.includes(t) || (t === "integer" && b.includes("number")))
              .concat(b.filter((t) => t === "integer" && a.includes("number") && !a.includes("integer")));
            break;
          }
          case "properties": {
            const props = prev as Record<string, unknown>;
            for (const [name, sub] of Object.entries(v as Record<string, unknown>)) {
              props[name] = name in props ? { allOf: [props[name], sub] } : sub;
            }
            break;
          }
          case "required":
            out[k] = [...new Set([...(prev as string[]), ...(v as string[])])];
            break;
          case "enum":
            out[k] = (prev as unknown[]).filter((x) => (v as unknown[]).some((y) => sameJson(x, y)));
            break;
          case "minimum":
          case "minItems":
          case "minLength":
            out[k] = Math.max(prev as number, v as number);
            break;
          case "maximum":
          case "maxItems":
          case "maxLength":
            out[k] = Math.min(prev as number, v as number);
            break;
          case "additionalProperties":
            out[k] = prev === false || v === false ? false : { allOf: [prev, v] };
            break;
          case "items":
            out[k] = { allOf: [prev, v] };
            break;
          case "const":
          case "format":
            if (!sameJson(prev, v)) throw new Error(`cannot merge ${k} ${JSON.stringify(prev)} with ${JSON.stringify(v)}`);
            break;
          default:
            throw new Error(`cannot merge keyword ${k} in allOf`);
        }
      }
    }
    return out;
  }

  private generate(node: unknown, ctx: { definition: string; path: string; pointer: string; depth: number }, sites: Site[]): Json {
    if (ctx.depth > this.hardDepth) throw new Error(`runaway recursion at ${ctx.definition}${ctx.path}`);
    const { schema: resolved, definition } = this.effective(node, ctx.definition);
    const here = definition === ctx.definition ? ctx : { ...ctx, definition, path: "" };
    let schema = resolved;

    // Unions: pick a branch (least used; scalar branches preferred when deep), fold in the siblings.
    const unionKey = Array.isArray(schema["anyOf"]) ? "anyOf" : Array.isArray(schema["oneOf"]) ? "oneOf" : undefined;
    if (unionKey) {
      const branches = schema[unionKey] as unknown[];
      const deep = ctx.depth >= this.softDepth;
      const scalar = (i: number): boolean => {
        const t = typesOf(this.effective(branches[i], here.definition).schema);
        return t !== undefined && !t.includes("object") && !t.includes("array");
      };
      const anyScalar = deep && branches.some((_b, i) => scalar(i));
      const pick = this.leastUsed(schema, unionKey, branches.length, anyScalar ? scalar : undefined);
      const { [unionKey]: _u, ...siblings } = schema as Record<string, unknown>;
      const branch = this.effective(branches[pick], here.definition);
      const hasSiblings = Object.keys(siblings).some((k) => !ANNOTATIONS.has(k));
      if (!hasSiblings) return this.generate(branches[pick], here, sites);
      schema = this.merge([siblings, branch.schema]);
      if (Array.isArray(schema["anyOf"]) || Array.isArray(schema["oneOf"])) throw new Error(`nested union in ${definition}`);
    }

    sites.push({ pointer: here.pointer, definition: here.definition, path: here.path, schema });

    if ("const" in schema) return clone(schema["const"] as Json);
    if (Array.isArray(schema["enum"])) {
      const members = schema["enum"] as Json[];
      if (members.length === 0) throw new Error(`empty enum in ${definition}${here.path}`);
      return clone(members[this.leastUsed(schema, "enum", members.length)] as Json);
    }

    let types = typesOf(schema);
    if (!types) {
      if (isObject(schema["properties"]) || "required" in schema || "additionalProperties" in schema) types = ["object"];
      else if ("items" in schema) types = ["array"];
      else types = ctx.depth >= this.softDepth ? ["string", "integer", "boolean", "null"] : [...ALL_TYPES];
    }
    if (types.length === 0) throw new Error(`unsatisfiable type in ${definition}${here.path}`);
    const type = types[this.leastUsed(schema, "type", types.length)] as string;
    const child = (key: string): typeof here => ({
      definition: here.definition,
      path: `${here.path}/${escapePointer(key)}`,
      pointer: `${here.pointer}/${escapePointer(key)}`,
      depth: ctx.depth + 1,
    });

    switch (type) {
      case "object": {
        const out: { [key: string]: Json } = {};
        const props = isObject(schema["properties"]) ? (schema["properties"] as Record<string, unknown>) : {};
        const required = new Set(Array.isArray(schema["required"]) ? (schema["required"] as string[]) : []);
        const deep = ctx.depth >= this.softDepth;
        for (const [name, sub] of Object.entries(props)) {
          if (required.has(name) || (!deep && this.toggle(schema, `prop:${name}`))) out[name] = this.generate(sub, child(name), sites);
        }
        const extraSchema = schema["additionalProperties"];
        for (const name of required) {
          if (name in out) continue;
          if (extraSchema === false) throw new Error(`required ${name} not declared in ${definition}${here.path}`);
          out[name] = this.generate(isObject(extraSchema) ? extraSchema : {}, child(name), sites);
        }
        if (extraSchema !== false && !deep) {
          const n = [0, 0, 1, 2][this.leastUsed(schema, "extras", 4)] as number;
          for (let i = 0; i < n; i++) {
            const name = `x-${WORDS[Math.floor(this.random() * WORDS.length)]}-${this.serial++}`;
            out[name] = this.generate(isObject(extraSchema) ? extraSchema : {}, child(name), sites);
          }
        }
        return out;
      }
      case "array": {
        const min = typeof schema["minItems"] === "number" ? schema["minItems"] : 0;
        const max = typeof schema["maxItems"] === "number" ? schema["maxItems"] : min + 3;
        const items = "items" in schema ? schema["items"] : {};
        if (Array.isArray(items)) throw new Error(`tuple items unsupported in ${definition}${here.path}`);
        const len = ctx.depth >= this.softDepth ? min : min + this.leastUsed(schema, "len", Math.min(max, min + 3) - min + 1);
        const out: Json[] = [];
        for (let i = 0; i < len; i++) out.push(this.generate(items, child(String(i)), sites));
        return out;
      }
      case "string":
        return this.string(schema);
      case "integer":
      case "number":
        return this.number(schema, type === "integer");
      case "boolean":
        return this.toggle(schema, "bool");
      case "null":
        return null;
      default:
        throw new Error(`unknown type ${type} in ${definition}${here.path}`);
    }
  }

  private word(): string {
    return `${WORDS[Math.floor(this.random() * WORDS.length)]}${Math.floor(this.random() * 1000)}`;
  }

  private string(schema: Schema): string {
    const format = typeof schema["format"] === "string" ? schema["format"] : undefined;
    let s: string;
    if (format !== undefined) {
      const make = GOOD_FORMAT[format];
      if (!make) throw new Error(`no generator for format ${format}`);
      s = make(this.random, this.word());
    } else {
      s = this.random() < 0.1 ? "" : this.random() < 0.2 ? `${this.word()} ünïcødé ✓` : this.word();
    }
    const minLength = typeof schema["minLength"] === "number" ? schema["minLength"] : 0;
    const maxLength = typeof schema["maxLength"] === "number" ? schema["maxLength"] : Infinity;
    if (format === undefined) {
      while ([...s].length < minLength) s += "x";
      if ([...s].length > maxLength) s = [...s].slice(0, maxLength).join("");
    } else if ([...s].length < minLength || [...s].length > maxLength) {
      throw new Error(`length bounds with format ${format} unsupported`);
    }
    return s;
  }

  private number(schema: Schema, integer: boolean): number {
    let lo = typeof schema["minimum"] === "number" ? schema["minimum"] : -1000;
    let hi = typeof schema["maximum"] === "number" ? schema["maximum"] : 1000;
    if (typeof schema["minimum"] === "number" && typeof schema["maximum"] !== "number") hi = lo + 1000;
    if (typeof schema["maximum"] === "number" && typeof schema["minimum"] !== "number") lo = hi - 1000;
    const exLo = typeof schema["exclusiveMinimum"] === "number" ? schema["exclusiveMinimum"] : undefined;
    const exHi = typeof schema["exclusiveMaximum"] === "number" ? schema["exclusiveMaximum"] : undefined;
    if (exLo !== undefined) lo = Math.max(lo, integer ? Math.floor(exLo) + 1 : exLo + 1e-6);
    if (exHi !== undefined) hi = Math.min(hi, integer ? Math.ceil(exHi) - 1 : exHi - 1e-6);
    if (integer) {
      lo = Math.ceil(lo);
      hi = Math.floor(hi);
      if (lo > hi) throw new Error("empty integer range");
      // Boundaries are interesting: pick them now and then.
      const r = this.random();
      if (r < 0.15) return lo;
      if (r < 0.3) return hi;
      return lo + Math.floor(this.random() * (hi - lo + 1));
    }
    if (lo > hi) throw new Error("empty number range");
    const r = this.random();
    if (r < 0.15) return lo;
    if (r < 0.3) return hi;
    if (r < 0.5) return Math.round(lo + this.random() * (hi - lo));
    return Math.min(hi, lo + Math.round(this.random() * (hi - lo) * 1000) / 1000);
  }

  private sampleOfType(type: string): Json {
    switch (type) {
      case "object":
        return { zz: "object instead" };
      case "array":
        return ["array instead"];
      case "string":
        return "string instead";
      case "integer":
        return 42;
      case "number":
        return 4.5;
      case "boolean":
        return true;
      default:
        return null;
    }
  }

  private notConst(value: Json): Json {
    if (typeof value === "string") return `${value}-not`;
    if (typeof value === "number") return value + 1;
    if (typeof value === "boolean") return !value;
    return "not-the-const";
  }

  private notInEnum(members: Json[]): Json {
    if (members.every((m) => typeof m === "number")) return Math.max(...(members as number[])) + 1;
    let candidate = "not-a-member";
    while (members.includes(candidate)) candidate += "!";
    return candidate;
  }
}

function base64(random: () => number): string {
  const bytes = Buffer.alloc(Math.floor(random() * 12));
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
  return bytes.toString("base64");
}

/** Valid example generators per format, given the PRNG and a random word. */
const GOOD_FORMAT: Readonly<Record<string, (random: () => number, word: string) => string>> = {
  uri: (random, w) => (["https://example.com/", "file:///tmp/", "urn:isbn:", "mem://store/", "http://h.example:8080/a%20b?q="] as const)[Math.floor(random() * 5)] + w,
  "uri-reference": (random, w) => (random() < 0.5 ? `../${w}` : `https://example.org/${w}`),
  iri: (_r, w) => `https://example.com/${w}`,
  "uri-template": (random, w) => (random() < 0.5 ? `file:///{path}/${w}` : `https://example.com/{${w}}{?q,limit}`),
  byte: (random) => base64(random),
  "date-time": (random) => (random() < 0.5 ? "2025-06-18T09:30:00Z" : "2024-11-05T23:59:59.123+02:00"),
  date: () => "2025-03-26",
  time: () => "12:34:56Z",
  email: (_r, w) => `${w}@example.com`,
  uuid: () => "123e4567-e89b-12d3-a456-426614174000",
  hostname: (_r, w) => `${w}.example.com`,
  ipv4: () => "192.0.2.7",
  ipv6: () => "2001:db8::7",
  regex: () => "^a+$",
};

/** One invalid value per format (for "bad-format" mutations). */
const BAD_FORMAT: Readonly<Record<string, string>> = {
  uri: "not a uri",
  "uri-reference": "bad ref with spaces",
  iri: "not an iri",
  "uri-template": "{unclosed",
  byte: "not base64!",
  "date-time": "yesterday",
  date: "2025-13-45",
  time: "25:61",
  email: "nobody",
  uuid: "not-a-uuid",
  hostname: "-bad-.host",
  ipv4: "999.1.1.1",
  ipv6: "::zz",
  regex: "([",
};

/**
 * Schema-unaware single-field mutations of any JSON value (for instances that were not generated,
 * such as the official example files): at every position, `null` and a value of another type;
 * for every object member, its removal; for every object, an unknown member; for every array, a
 * stray item. Deterministic; when `limit` is given, every ⌈n/limit⌉-th candidate is kept.
 *
 * @returns mutated copies with the pointer of the changed position
 */
export function structuralMutations(value: Json, limit?: number): Array<{ pointer: string; value: Json }> {
  const out: Array<{ pointer: string; value: Json }> = [];
  const visit = (node: Json, pointer: string): void => {
    if (node !== null) out.push({ pointer, value: withValueAt(value, pointer, null) });
    out.push({ pointer, value: withValueAt(value, pointer, typeof node === "string" ? 17 : "17") });
    if (Array.isArray(node)) {
      out.push({ pointer, value: withValueAt(value, `${pointer}/${node.length}`, { zz: "stray" }) });
      node.forEach((child, i) => visit(child, `${pointer}/${i}`));
    } else if (isObject(node)) {
      out.push({ pointer, value: withValueAt(value, `${pointer}/zzUnknownField`, "surprise") });
      for (const [key, child] of Object.entries(node)) {
        const sub = `${pointer}/${escapePointer(key)}`;
        out.push({ pointer: sub, value: withValueAt(value, sub, undefined) });
        visit(child as Json, sub);
      }
    }
  };
  visit(value, "");
  if (limit === undefined || out.length <= limit) return out;
  const step = Math.ceil(out.length / limit);
  return out.filter((_m, i) => i % step === 0);
}
