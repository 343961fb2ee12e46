/**
 * Checks `tools/call` arguments against the tool's `inputSchema` before the network hop
 * (MCP server/tools: servers MUST validate tool inputs).
 *
 * Schemas come from `tools/list` (see {@link ToolCatalog} in ./catalog.ts) and are compiled at run
 * time with ajv, once per distinct schema (keyed by its JSON text and dialect). ajv and
 * ajv-formats are imported on first use, so a session that never calls a tool never loads them.
 *
 * Dialect: a schema's `$schema` decides (2020-12 / 2019-09 / draft-07 and older); without one,
 * MCP ≥ 2025-11-25 means JSON Schema 2020-12 (the spec's default dialect from that revision) and
 * older revisions draft-07. A schema ajv cannot compile is not enforced (logged once): the
 * orchestrator still validates on its side.
 *
 * A schema is checked against its dialect's meta-schema first, as ajv does, but by the validator
 * codegen compiled ahead of time (src/gen/mcp/json-schema/<dialect>.cjs) when the schema names no
 * `$schema` or the dialect's own: ajv would otherwise compile the meta-schema on the first call.
 * Any other `$schema` goes through ajv's own check, unchanged.
 */
import { createRequire } from "node:module";
import type { ErrorObject } from "ajv";
import type { Logger } from "../log.js";
import { governingVersion, versionFacts } from "../mcp/versions.js";
import { ToolValidatorCache, validatorKey } from "./tool-validator-cache.js";

/** One reason the arguments fail the schema: `pointer` into the arguments object, `reason`. */
export interface ArgumentProblem {
  pointer: string;
  reason: string;
}

type Dialect = "draft-07" | "2019-09" | "2020-12";

/** A validator as ajv compiles it: the verdict, and the errors of the last call. */
export interface CompiledSchema {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

interface AjvInstance {
  /** @throws ajv's errors: `schema is invalid: …` (the meta-schema check), or a compilation error */
  compile(schema: Record<string, unknown>): CompiledSchema;
  /** ajv's standalone code of `validate`, a validator {@link compile} made of a schema in this dialect without another `$schema`. */
  standaloneCode(validate: CompiledSchema): Promise<string>;
}

/** Most compiled schemas kept; the oldest is dropped beyond this. */
const MAX_COMPILED = 500;

/**
 * Compiles and caches tool input validators.
 */
export class ToolArgumentChecker {
  private readonly instances = new Map<Dialect, Promise<AjvInstance>>();
  private readonly compiled = new Map<string, CompiledSchema | null>();
  /** The validator of each schema object seen, per dialect: a tool's schema object is checked without serializing it again. */
  private readonly bySchema = new WeakMap<object, Map<Dialect, CompiledSchema | null>>();
  /** Schemas compiled so far (for tests: proves compile-once). */
  compilations = 0;

  private readonly validatorCache: ToolValidatorCache | undefined;

  /**
   * @param options.validatorCache where compiled validators are kept between processes (default:
   *   the user's, ./tool-validator-cache.ts; `null`: none)
   */
  constructor(
    private readonly log?: Logger,
    options: { validatorCache?: ToolValidatorCache | null } = {},
  ) {
    this.validatorCache = options.validatorCache === undefined ? ToolValidatorCache.forUser() : (options.validatorCache ?? undefined);
  }

  /**
   * Validates `args` against `schema`.
   * @param schema the tool's `inputSchema`
   * @param args `params.arguments` (absent is checked as `{}`)
   * @param protocolVersion the request's MCP revision (picks the default dialect)
   * @returns `null` when valid (or when the schema cannot be compiled), else the first problem
   */
  async check(schema: Record<string, unknown>, args: Record<string, unknown> | undefined, protocolVersion: string): Promise<ArgumentProblem | null> {
    const dialect = dialectOf(schema, protocolVersion);
    let seen = this.bySchema.get(schema);
    let validate = seen?.get(dialect);
    if (validate === undefined) {
      const key = `${dialect}\u0000${JSON.stringify(schema)}`;
      validate = this.compiled.get(key);
      if (validate === undefined) {
        validate = await this.compile(schema, dialect);
        if (this.compiled.size >= MAX_COMPILED) this.compiled.delete(this.compiled.keys().next().value as string);
        this.compiled.set(key, validate);
      }
      if (!seen) this.bySchema.set(schema, (seen = new Map()));
      seen.set(dialect, validate);
    }
    if (validate === null) return null;
    if (validate(args ?? {})) return null;
    const error = validate.errors?.[0];
    if (!error) return { pointer: "", reason: "does not match the tool's input schema" };
    return { pointer: error.instancePath, reason: reasonOf(error) };
  }

  /**
   * Why `schema` cannot be compiled as a tool's `inputSchema` (ajv's meta-schema check and
   * compilation, in the dialect its `$schema` names, else in both defaults: draft-07 and 2020-12),
   * or undefined when it compiles. Used to refuse a bad schema where a tool is defined.
   * @returns e.g. `schema is invalid: data/required must be array` (2020-12)
   */
  async schemaProblem(schema: Record<string, unknown>): Promise<string | undefined> {
    const dialects: Dialect[] = typeof schema.$schema === "string" ? [dialectOf(schema, "")] : ["draft-07", "2020-12"];
    for (const dialect of dialects) {
      try {
        const ajv = await this.instance(dialect);
        const { $id: _id, ...copy } = schema;
        ajv.compile(copy);
      } catch (err) {
        return `${(err as Error).message}${dialects.length > 1 ? ` (JSON Schema ${dialect})` : ""}`;
      }
    }
    return undefined;
  }

  private instance(dialect: Dialect): Promise<AjvInstance> {
    let ajv = this.instances.get(dialect);
    if (!ajv) {
      ajv = loadAjv(dialect);
      this.instances.set(dialect, ajv);
    }
    return ajv;
  }

  private async compile(schema: Record<string, unknown>, dialect: Dialect): Promise<CompiledSchema | null> {
    // `$id`s would collide across tools compiled into one instance: compile a copy without it.
    const { $id: _id, ...copy } = schema;
    // A validator compiled by an earlier process (./tool-validator-cache.ts): no ajv to load.
    const cache = this.validatorCache;
    const key = cache !== undefined && ownDialect(copy, dialect) ? validatorKey(dialect, JSON.stringify(copy)) : undefined;
    const cached = key === undefined ? undefined : cache!.read(key);
    if (cached !== undefined) return cached;
    const ajv = await this.instance(dialect);
    try {
      const fn = ajv.compile(copy);
      this.compilations++;
      if (key !== undefined) {
        ajv.standaloneCode(fn).then(
          (source) => cache!.write(key, source),
          () => undefined,
        );
      }
      return fn;
    } catch (err) {
      this.log?.warn({ err: (err as Error).message }, "a tool's inputSchema does not compile; its arguments are not checked by the bridge");
      return null;
    }
  }
}

function dialectOf(schema: Record<string, unknown>, protocolVersion: string): Dialect {
  const declared = typeof schema.$schema === "string" ? schema.$schema : "";
  if (declared.includes("2020-12")) return "2020-12";
  if (declared.includes("2019-09")) return "2019-09";
  if (declared !== "") return "draft-07";
  // No `$schema`: the dialect of the protocol revision's own schema (2020-12 from MCP 2025-11-25).
  return versionFacts(governingVersion(protocolVersion))!.jsonSchemaDialect;
}

const require = createRequire(import.meta.url);

/**
 * Whether `schema` is compiled by the dialect's own instance (no `$schema`, or the dialect's), whose
 * validators can be kept: as `compile` decides (the meta-schema validator is loaded for a `$schema`).
 */
function ownDialect(schema: Record<string, unknown>, dialect: Dialect): boolean {
  const declared = schema.$schema;
  return declared === undefined || (typeof declared === "string" && declared.replace(/#$/, "") === metaValidator(dialect).metaSchemaId);
}

/** A dialect's generated meta-schema validator, with the meta-schema's id (`$schema` without the empty fragment). */
type MetaValidator = CompiledSchema & { metaSchemaId: string };

/** The dialect's generated meta-schema validator (loaded on first use, once). */
function metaValidator(dialect: Dialect): MetaValidator {
  switch (dialect) {
    case "draft-07":
      return require("../gen/mcp/json-schema/draft-07.cjs") as MetaValidator;
    case "2019-09":
      return require("../gen/mcp/json-schema/2019-09.cjs") as MetaValidator;
    case "2020-12":
      return require("../gen/mcp/json-schema/2020-12.cjs") as MetaValidator;
  }
}

/** The ajv class of each dialect (only the dialect asked for is loaded). */
const AJV_CLASSES: Record<Dialect, () => Promise<{ default: unknown }>> = {
  "draft-07": () => import("ajv"),
  "2019-09": () => import("ajv/dist/2019.js"),
  "2020-12": () => import("ajv/dist/2020.js"),
};

/** An ajv instance for `dialect`, with ajv-formats; ajv and its dialect's class load on first use. */
async function loadAjv(dialect: Dialect): Promise<AjvInstance> {
  const [dialectClass, formats] = await Promise.all([AJV_CLASSES[dialect](), import("ajv-formats")]);
  // CJS modules: `default` is module.exports, the class / plugin function (library boundary).
  type Ajv = Omit<AjvInstance, "standaloneCode"> & { errorsText(errors: ErrorObject[] | null | undefined): string };
  const AjvClass = dialectClass.default as new (opts: Record<string, unknown>) => Ajv;
  // ajv's code template tag: the standalone code requires the formats ajv-formats added.
  const code = (dialectClass.default as { _: (strings: TemplateStringsArray) => unknown })._;
  const addFormats = formats.default as unknown as (ajv: Ajv) => void;
  const make = (validateSchema: boolean, options: Record<string, unknown> = {}) => {
    const ajv = new AjvClass({ strict: false, allErrors: false, messages: true, logger: false, validateSchema, ...options });
    addFormats(ajv);
    return ajv;
  };
  const fast = make(false, { code: { source: true, formats: code`require("ajv-formats/dist/formats").fullFormats` } });
  let checked: Ajv | undefined;
  return {
    compile(schema: Record<string, unknown>): CompiledSchema {
      if (!ownDialect(schema, dialect)) {
        // Another meta-schema (or a malformed `$schema`): ajv's own check, as it always was.
        checked ??= make(true);
        return checked.compile(schema);
      }
      const meta = metaValidator(dialect);
      if (!meta(schema)) throw new Error(`schema is invalid: ${fast.errorsText(meta.errors)}`);
      return fast.compile(schema);
    },
    async standaloneCode(validate: CompiledSchema): Promise<string> {
      const standalone = (await import("ajv/dist/standalone/index.js")).default as unknown as (ajv: Ajv, validate: CompiledSchema) => string;
      return standalone(fast, validate);
    },
  };
}

function reasonOf(error: ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return `must have required property '${String(p.missingProperty)}'`;
    case "additionalProperties":
      return `must NOT have additional property '${String(p.additionalProperty)}'`;
    default:
      return error.message ?? `fails ${error.keyword}`;
  }
}
