/**
 * Cached schema-definition lookups for one set of {@link ProtocolValidators}: the JSON-RPC envelope
 * definitions of the version and, per direction and method, the message definition and result
 * definition. The MCP validation facade answers `messageDefinition` with a fresh object on every
 * call; the checker asks for every message, so the answers are cached here (one {@link Defs} per
 * validator set, shared by every checker of a thread).
 *
 * Each definition also comes as a {@link SchemaCheck}, which keeps the definition's validator
 * function once resolved, so that checking a valid message costs one call of the generated
 * validator (no lookup of the definition by name per message).
 */
import type { SchemaIssue } from "../mcp/validation.js";
import type { Direction, ProtocolValidators } from "./types.js";

type MessageDef = NonNullable<ReturnType<ProtocolValidators["messageDefinition"]>>;

/**
 * One schema definition of a validator set, checked as `validators.validate(definition, data)`
 * would: `run` gives the same answer. The validator function is looked up (`lookup`, when the set
 * has one) on the first run, not before, so that a definition that cannot be compiled throws from
 * `run`, where `validate` would; a valid value then costs one call of it, and only a value it
 * rejects goes through `validate` (which validates again and explains the failure).
 */
export class SchemaCheck {
  /** null: not resolved yet; undefined: no fast path (no `lookup`, or an unknown definition). */
  private fn: ((data: unknown) => boolean) | undefined | null = null;
  constructor(
    /** The definition name; "" when the schema lacks it (callers skip the check). */
    readonly definition: string,
    private readonly validators: ProtocolValidators,
  ) {}

  /** Issues of `definition` on `data`: null when valid. @throws Error as `validate` does */
  run(data: unknown): SchemaIssue[] | null {
    let fn = this.fn;
    if (fn === null) fn = this.fn = this.validators.lookup?.(this.definition);
    if (fn !== undefined && fn(data)) return null;
    return this.validators.validate(this.definition, data);
  }
}

/**
 * The definition a result with `resultType: "input_required"` is (MCP 2026-07-28 schema,
 * `ResultType`: "input_required - the request requires additional input and the result contains
 * an InputRequiredResult object").
 */
const INPUT_REQUIRED_RESULT = "InputRequiredResult";

/**
 * The check of a request's result where the method's response definition allows
 * `InputRequiredResult | XResult` (`MessageDefinition.resultUnion`: MCP 2026-07-28 `tools/call`,
 * `prompts/get`, `resources/read`). The schema's `ResultType` names the branch, so the result is
 * checked against that branch alone and explained by its issues only:
 * - `resultType: "input_required"`: an `InputRequiredResult`; its issues, then the union's
 *   `anyOf` at the result's root, as for a union tagged by a `type` constant. Its schema requires
 *   `resultType` alone; its description adds "At least one of `inputRequests` or `requestState`
 *   MUST be present", so a result with neither is one issue at the root (keyword `required`);
 * - any other (`"complete"`, another value, none): an `XResult` and its issues, as `serve`
 *   judges the results it sends.
 * Without this, any result with a string `resultType` would pass as an `InputRequiredResult`.
 * A valid result costs one call of its branch's validator.
 */
export class ResultUnionCheck extends SchemaCheck {
  private readonly inputRequired: SchemaCheck;

  constructor(
    result: string,
    /** The response definition whose `result` is the union, e.g. `CallToolResultResponse` (named in the `anyOf` issue). */
    private readonly response: string,
    validators: ProtocolValidators,
  ) {
    super(result, validators);
    this.inputRequired = new SchemaCheck(INPUT_REQUIRED_RESULT, validators);
  }

  override run(data: unknown): SchemaIssue[] | null {
    if (!isInputRequired(data)) return super.run(data);
    const issues = this.inputRequired.run(data);
    if (issues !== null) return [...issues, { pointer: "", reason: "must match one of the allowed shapes (anyOf)", keyword: "anyOf", definition: this.response }];
    const value = data as Record<string, unknown>;
    if (Object.hasOwn(value, "inputRequests") || Object.hasOwn(value, "requestState")) return null;
    return [
      {
        pointer: "",
        reason: "must have property 'inputRequests' or 'requestState' (at least one of them MUST be present)",
        keyword: "required",
        definition: INPUT_REQUIRED_RESULT,
      },
    ];
  }
}

/** Whether `data` says it is an `InputRequiredResult` (2026-07-28 `ResultType` `"input_required"`). */
function isInputRequired(data: unknown): boolean {
  return typeof data === "object" && data !== null && (data as { resultType?: unknown }).resultType === "input_required";
}

/** What a method means in one direction, cached. */
export interface MethodInfo {
  /** The method's definition in this direction, if the version has one. */
  readonly def: MessageDef | undefined;
  /** `def.definition` as a check, when `def` is defined. */
  readonly defCheck: SchemaCheck | undefined;
  /** The definition's result definition when the version defines it (`has`), else undefined. */
  readonly result: string | undefined;
  /** `result` as a check, when `result` is defined. */
  readonly resultCheck: SchemaCheck | undefined;
}

/** The four JSON-RPC envelope definitions of a version; "" when the schema lacks one. */
export interface Envelopes {
  readonly request: string;
  readonly notification: string;
  readonly result: string;
  readonly error: string;
}

const NONE: MethodInfo = { def: undefined, defCheck: undefined, result: undefined, resultCheck: undefined };

/** Cached lookups over one validator set; see the module comment. Obtain with {@link defsFor}. */
export class Defs {
  readonly envelope: Envelopes;
  /** {@link envelope} as checks. */
  readonly envelopeChecks: { readonly request: SchemaCheck; readonly notification: SchemaCheck; readonly result: SchemaCheck; readonly error: SchemaCheck };
  private readonly methods = { c2s: new Map<string, MethodInfo>(), s2c: new Map<string, MethodInfo>() };

  constructor(readonly validators: ProtocolValidators) {
    const v = validators;
    const pick = (...names: string[]): string => names.find((n) => v.has(n)) ?? "";
    this.envelope = {
      request: pick("JSONRPCRequest"),
      notification: pick("JSONRPCNotification"),
      result: pick("JSONRPCResultResponse", "JSONRPCResponse"),
      error: pick("JSONRPCErrorResponse", "JSONRPCError"),
    };
    const e = this.envelope;
    this.envelopeChecks = {
      request: new SchemaCheck(e.request, v),
      notification: new SchemaCheck(e.notification, v),
      result: new SchemaCheck(e.result, v),
      error: new SchemaCheck(e.error, v),
    };
  }

  /** The last method asked for per direction, and its answer (most traffic repeats one method). */
  private lastC2s: string | undefined = undefined;
  private lastC2sInfo: MethodInfo = NONE;
  private lastS2c: string | undefined = undefined;
  private lastS2cInfo: MethodInfo = NONE;

  /** Definition and result definition of `method` sent in `dir` (cached; unknown methods too). */
  method(dir: Direction, method: string): MethodInfo {
    if (dir === "c2s") {
      if (method === this.lastC2s) return this.lastC2sInfo;
      const info = this.lookupMethod(dir, method);
      this.lastC2s = method;
      this.lastC2sInfo = info;
      return info;
    }
    if (method === this.lastS2c) return this.lastS2cInfo;
    const info = this.lookupMethod(dir, method);
    this.lastS2c = method;
    this.lastS2cInfo = info;
    return info;
  }

  private lookupMethod(dir: Direction, method: string): MethodInfo {
    const table = this.methods[dir];
    let info = table.get(method);
    if (info === undefined) {
      const def = this.validators.messageDefinition(dir, method);
      if (def === undefined) info = NONE;
      else {
        const v = this.validators;
        const result = def.resultDefinition !== undefined && v.has(def.resultDefinition) ? def.resultDefinition : undefined;
        const tagged = result !== undefined && def.resultUnion?.includes(INPUT_REQUIRED_RESULT) === true && v.has(INPUT_REQUIRED_RESULT);
        const resultCheck = result === undefined ? undefined : tagged ? new ResultUnionCheck(result, `${result}Response`, v) : new SchemaCheck(result, v);
        info = { def, defCheck: new SchemaCheck(def.definition, v), result, resultCheck };
      }
      // Bounded: custom traffic could invent unlimited method names.
      if (table.size < 4096) table.set(method, info);
    }
    return info;
  }
}

const cache = new WeakMap<ProtocolValidators, Defs>();

/** The (shared, cached) {@link Defs} of a validator set. */
export function defsFor(validators: ProtocolValidators): Defs {
  let d = cache.get(validators);
  if (d === undefined) {
    d = new Defs(validators);
    cache.set(validators, d);
  }
  return d;
}
