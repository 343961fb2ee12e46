/**
 * The generated validators, loaded one protocol revision at a time, on demand (for the
 * `validate --jobs` workers, which otherwise spend their start-up importing ~6 MB of validators
 * for five revisions when a capture uses one).
 *
 * {@link lazyValidatorsFor} answers at once, for every generated revision, with a validator set
 * whose method tables and definition names are there (they come from the small `methods.ts`
 * modules) but whose validators may not be loaded yet: until {@link loadValidators} has loaded
 * them, `validate` throws {@link ValidatorsNotLoadedError} and the revision is remembered
 * ({@link takeRequestedVersions}) so that the caller can load it and try again. Once loaded, the
 * set behaves exactly like `validatorsFor(version)` from `./validation.ts` (same generated code,
 * same {@link ValidatorSet}).
 */
import {
  GENERATED_TABLES,
  loadGeneratedValidators,
  type GeneratedTypes,
  type GeneratedValidators,
  type GeneratedVersion,
} from "../gen/mcp/catalog.js";
import { ValidatorSet, type ProtocolValidators, type TypedProtocolValidators } from "./validator-set.js";

/** Thrown by a lazy set's `validate` while its revision's validators are not loaded. */
export class ValidatorsNotLoadedError extends Error {
  constructor(readonly version: string) {
    super(`the generated validators of MCP ${version} are not loaded yet`);
    this.name = "ValidatorsNotLoadedError";
  }
}

interface Entry {
  set: ValidatorSet;
  validators?: GeneratedValidators;
  loading?: Promise<void>;
}

const entries = new Map<string, Entry>();
/** Revisions whose validators were asked for before they were loaded. */
const requested = new Set<string>();

/**
 * The validator set of a generated revision (cached), loaded or not; undefined for a revision
 * without generated validators (the same revisions `validatorsFor` knows). Typed by the revision's
 * generated types when `version` is known at compile time, as `validatorsFor`.
 */
export function lazyValidatorsFor<V extends GeneratedVersion>(version: V): TypedProtocolValidators<GeneratedTypes[V]>;
export function lazyValidatorsFor(version: string): ProtocolValidators | undefined;
export function lazyValidatorsFor(version: string): ProtocolValidators | undefined {
  return entryOf(version)?.set;
}

function entryOf(version: string): Entry | undefined {
  let entry = entries.get(version);
  if (entry !== undefined) return entry;
  if (!Object.hasOwn(GENERATED_TABLES, version)) return undefined;
  const tables = GENERATED_TABLES[version]!;
  const created: Entry = {
    set: new ValidatorSet(version, tables.definitions, tables.methods, tables.discriminators, (name) => {
      const loaded = created.validators;
      if (loaded === undefined) {
        requested.add(version);
        throw new ValidatorsNotLoadedError(version);
      }
      const v = loaded[name];
      if (!v) throw new Error(`generated validators for MCP ${version} lack "${name}" (run npm run generate)`);
      return v;
    }),
  };
  entry = created;
  entries.set(version, entry);
  return entry;
}

/** Whether the validators of `version` are loaded (false for unknown revisions). */
export function validatorsLoaded(version: string): boolean {
  return entries.get(version)?.validators !== undefined;
}

/**
 * Loads the validators of each generated revision in `versions` (others are ignored); resolves
 * when all are loaded. Each revision is imported once.
 */
export async function loadValidators(versions: Iterable<string>): Promise<void> {
  const waits: Promise<void>[] = [];
  for (const version of versions) {
    const entry = entryOf(version);
    if (entry === undefined || entry.validators !== undefined) continue;
    entry.loading ??= loadGeneratedValidators(version)!.then((validators) => {
      entry.validators = validators;
    });
    waits.push(entry.loading);
  }
  await Promise.all(waits);
}

/** The revisions whose validators were asked for while not loaded, since the last call (then forgotten). */
export function takeRequestedVersions(): string[] {
  const out = [...requested];
  requested.clear();
  return out;
}
