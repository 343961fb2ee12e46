/**
 * Validation facade over the MCP JSON Schemas.
 *
 * Two sources of validators share one interface, {@link ProtocolValidators}:
 * - {@link validatorsFor}: ahead-of-time ajv standalone validators generated from our own
 *   `schemas/mcp/<version>/schema.json` (`src/gen/mcp/`); no schema compilation at start-up, and
 *   a revision's validators are loaded only when one of them is first used.
 * - {@link compileValidatorsFromSchema}: any MCP `schema.json` (draft-07 `definitions` or
 *   2020-12 `$defs`) compiled with ajv at run time, e.g. for `validate --schema FILE`.
 *
 * Both use the same format checks (`./formats.ts`) and the same method/direction derivation
 * (`./schema-meta.ts`), so verdicts match. Validation is a pure function of (definition, data).
 *
 * Fast path: a valid message costs one generated validator call and allocates nothing. Only a
 * failure builds {@link SchemaIssue}s; for a failed `anyOf` whose data carries a discriminating
 * `type`/`method` constant (content blocks, request unions), the matching branch is re-validated
 * so the first issue explains that branch instead of the first branch tried.
 */
import {
  GENERATED_TABLES,
  generatedValidatorsBuilt,
  loadGeneratedValidatorsSync,
  loadStartValidatorsSync,
  START_DEFINITIONS,
  type GeneratedTypes,
  type GeneratedVersion,
} from "../gen/mcp/catalog.js";
import { ValidatorSet } from "./validator-set.js";
import type { ProtocolValidators, TypedProtocolValidators } from "./validator-set.js";

export * from "./validator-set.js";

const generatedCache = new Map<string, ValidatorSet>();

/**
 * Validators generated ahead of time for a protocol revision (see `src/gen/mcp/catalog.ts`).
 * Cheap: no schema compilation; the set is created once per revision and cached, from the
 * revision's method tables alone, so a session holds only the revisions it uses. Its validators
 * load synchronously on first use, in two steps: a definition of a session's start and its tool
 * calls (`START_DEFINITIONS`: the envelopes, `initialize`, `ping`, `server/discover`, `tools/list`,
 * `tools/call` and their results, `notifications/cancelled`) comes from the revision's small
 * `validators-start.cjs` as long as the whole `validators.cjs` (0.6–1.6 MB of code) is not loaded;
 * any other definition loads the whole one, once.
 *
 * For a revision known at compile time (`validatorsFor("2025-11-25")`, or a `GeneratedVersion`)
 * the answer is typed by that revision's generated types ({@link TypedProtocolValidators}:
 * `request("tools/call").is(x)` narrows `x` to its `CallToolRequest`); for any string it is the
 * untyped {@link ProtocolValidators}, or undefined.
 *
 * @param version an MCP protocol revision, e.g. "2025-06-18"
 * @returns the validators, or undefined when no schema for `version` was generated
 */
export function validatorsFor<V extends GeneratedVersion>(version: V): TypedProtocolValidators<GeneratedTypes[V]>;
export function validatorsFor(version: string): ProtocolValidators | undefined;
export function validatorsFor(version: string): ProtocolValidators | undefined {
  const cached = generatedCache.get(version);
  if (cached) return cached;
  if (!Object.hasOwn(GENERATED_TABLES, version)) return undefined;
  const gen = GENERATED_TABLES[version];
  if (!gen) return undefined;
  const set = new ValidatorSet(version, gen.definitions, gen.methods, gen.discriminators, (name) => {
    const early = START_DEFINITIONS.has(name) && !generatedValidatorsBuilt(version);
    const v = (early ? loadStartValidatorsSync(version) : loadGeneratedValidatorsSync(version))![name];
    if (!v) throw new Error(`generated validators for MCP ${version} lack "${name}" (run npm run generate)`);
    return v;
  });
  generatedCache.set(version, set);
  return set;
}
