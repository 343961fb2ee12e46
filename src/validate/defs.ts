/**
 * Cached schema-definition lookups for one set of {@link ProtocolValidators}: the JSON-RPC envelope
 * definitions of the version and, per direction and method, the message definition and result
 * definition. The MCP validation facade answers `messageDefinition` with a fresh object on every
 * call; the checker asks for every message, so the answers are cached here (one {@link Defs} per
 * validator set, shared by every checker and by the `--jobs` workers).
 */
import type { Direction, ProtocolValidators } from "./types.js";

type MessageDef = NonNullable<ReturnType<ProtocolValidators["messageDefinition"]>>;

/** What a method means in one direction, cached. */
export interface MethodInfo {
  /** The method's definition in this direction, if the version has one. */
  readonly def: MessageDef | undefined;
  /** The definition's result definition when the version defines it (`has`), else undefined. */
  readonly result: string | undefined;
}

/** The four JSON-RPC envelope definitions of a version; "" when the schema lacks one. */
export interface Envelopes {
  readonly request: string;
  readonly notification: string;
  readonly result: string;
  readonly error: string;
}

const NONE: MethodInfo = { def: undefined, result: undefined };

/** Cached lookups over one validator set; see the module comment. Obtain with {@link defsFor}. */
export class Defs {
  readonly envelope: Envelopes;
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
  }

  /** Definition and result definition of `method` sent in `dir` (cached; unknown methods too). */
  method(dir: Direction, method: string): MethodInfo {
    const table = this.methods[dir];
    let info = table.get(method);
    if (info === undefined) {
      const def = this.validators.messageDefinition(dir, method);
      info =
        def === undefined
          ? NONE
          : { def, result: def.resultDefinition !== undefined && this.validators.has(def.resultDefinition) ? def.resultDefinition : undefined };
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
