/**
 * Resolves which validators a run uses: the MCP validation facade (`src/mcp/validation.ts`,
 * `src/mcp/versions.ts`), a schema compiled at run time (`--schema`), or injected ones.
 * The facade is imported lazily so that `--schema` runs and embedders with their own
 * validators do not pay for loading the built-in ones.
 */
import { readFile } from "node:fs/promises";
import type { SchemaMeta } from "../mcp/schema-meta.js";
import { openFailure } from "./open-failure.js";
import { ValidateUsageError, type ProtocolValidators, type ValidateOptions, type ValidatorResolver } from "./types.js";

/** What the checkers of one run need to pick validators. */
export interface ValidatorSetup {
  resolve: ValidatorResolver;
  /** Version assumed before the initialize exchange (latest, or the forced/schema label). */
  defaultVersion: string;
  /** `--protocol-version`, when given. */
  forcedVersion?: string;
  /** With a schema (`--schema`): how messages name it ("the schema FILE") instead of a protocol version. */
  schemaName?: string;
}

/**
 * Builds the {@link ValidatorSetup} for `options`.
 * @throws ValidateUsageError for an unreadable or non-JSON `schemaPath`, or a
 *   `protocolVersion` that has no validators.
 */
export async function prepareValidators(options: ValidateOptions): Promise<ValidatorSetup> {
  const forced = options.protocolVersion;
  if (options.validators !== undefined) {
    const { resolve, latest } = options.validators;
    return finish(resolve, forced ?? latest, forced, []);
  }
  let schema = options.schema;
  if (schema === undefined && options.schemaPath !== undefined) schema = await loadSchema(options.schemaPath);
  if (schema !== undefined) {
    // (validator-set.js, not the facade: a schema run needs none of the generated validators)
    const { compileValidatorsFromSchema } = await import("../mcp/validator-set.js");
    const { deriveSchemaMeta } = await import("../mcp/schema-meta.js");
    const label = forced ?? "custom";
    const file = options.schemaPath ?? "(given object)";
    let compiled;
    try {
      compiled = compileValidatorsFromSchema(schema, label);
      checkSchema(compiled, deriveSchemaMeta(schema));
    } catch (err) {
      const reason = (err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, "; ");
      throw new ValidateUsageError(`bad schema file: ${file}: ${reason}`);
    }
    return { ...finish(() => compiled, label, forced, []), schemaName: `the schema ${file}` };
  }
  const [facade, versions] = await Promise.all([import("../mcp/validation.js"), import("../mcp/versions.js")]);
  return finish(facade.validatorsFor, forced ?? versions.LATEST_PROTOCOL_VERSION, forced, versions.SUPPORTED_PROTOCOL_VERSIONS);
}

/** The JSON-RPC envelopes the checker needs, each as alternatives (newer name first). */
const NEEDED_ENVELOPES = [["JSONRPCRequest"], ["JSONRPCNotification"], ["JSONRPCResultResponse", "JSONRPCResponse"], ["JSONRPCErrorResponse", "JSONRPCError"]];
/** The message and result unions of an MCP schema; the first two must exist. */
const NEEDED_UNIONS = ["ClientRequest", "ServerResult"];
const OPTIONAL_UNIONS = ["ClientNotification", "ClientResult", "ServerRequest", "ServerNotification"];

/**
 * Checks at start-up that a run-time schema has every definition the checker needs (the JSON-RPC
 * envelopes, the message and result unions) and that those and every method's request,
 * notification and result definition compile, i.e. all their `$ref`s resolve: a definition that
 * is missing or dangling is the schema's fault, not each input's.
 * @throws Error naming the first problem
 */
function checkSchema(v: ProtocolValidators, meta: SchemaMeta): void {
  const needed = new Set<string>();
  for (const names of NEEDED_ENVELOPES) {
    const found = names.find((n) => v.has(n));
    if (found === undefined) throw new Error(`missing definition ${names.join(" or ")}`);
    needed.add(found);
  }
  for (const name of NEEDED_UNIONS) {
    if (!v.has(name)) throw new Error(`missing definition ${name}`);
    needed.add(name);
  }
  for (const name of OPTIONAL_UNIONS) if (v.has(name)) needed.add(name);
  for (const table of [meta.methods.c2s, meta.methods.s2c]) {
    for (const entry of Object.values(table)) {
      needed.add(entry.definition);
      if (entry.resultDefinition !== undefined) needed.add(entry.resultDefinition);
    }
  }
  for (const name of needed) {
    if (!v.has(name)) throw new Error(`missing definition ${name}`);
    try {
      v.validate(name, null); // compiles the definition (and everything it refers to)
    } catch (err) {
      throw new Error(`definition ${name} does not compile: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  }
}

function finish(resolve: ValidatorResolver, defaultVersion: string, forced: string | undefined, supported: readonly string[]): ValidatorSetup {
  if (resolve(defaultVersion) === undefined) {
    const list = supported.length > 0 ? ` (supported: ${supported.join(", ")})` : "";
    throw new ValidateUsageError(`unsupported protocol version ${defaultVersion}${list}`);
  }
  return forced === undefined ? { resolve, defaultVersion } : { resolve, defaultVersion, forcedVersion: forced };
}

/** Reads and parses a schema.json. @throws ValidateUsageError */
export async function loadSchema(path: string): Promise<object> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new ValidateUsageError(`bad schema file: ${openFailure(path, err, "expected an MCP schema.json file")}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ValidateUsageError(`bad schema file: ${path}: not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ValidateUsageError(`bad schema file: ${path}: not a JSON object`);
  }
  return value;
}
