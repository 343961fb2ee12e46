/**
 * `google.protobuf.Struct` ⇄ JSON object.
 *
 * protobuf-es v2 represents a `Struct` field as a `JsonObject`, so the work here is making sure
 * what crosses is valid JSON: MCP params arrive from `JSON.parse` (already JSON), but values
 * built in code may hold `undefined`, functions, non-finite numbers or class instances.
 *
 * Precision: `Struct` numbers are IEEE-754 doubles (protobuf `Value.number_value`); integers
 * beyond 2^53 lose precision, exactly as in the Go orchestrators.
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { ErrorCode, JsonRpcError } from "../jsonrpc/errors.js";

/** A `Struct` field as received (absent → `undefined`) → a plain object (`{}` for absent). */
export function structToObject(struct: JsonObject | undefined | null): Record<string, unknown> {
  return struct ?? {};
}

/**
 * Thrown by {@link objectToStruct} when a value cannot be carried by `google.protobuf.Struct`:
 * `-32602` (the value came in a request's params), `data: {pointer}`.
 */
export class StructConversionError extends JsonRpcError {
  override readonly name = "StructConversionError";
  constructor(
    /** JSON pointer of the offending value, e.g. `/a/0/b`. */
    readonly pointer: string,
    reason: string,
  ) {
    super(ErrorCode.InvalidParams, `Invalid params: ${pointer || "/"}: ${reason}`, { pointer });
  }
}

/**
 * A plain object → a `Struct`-compatible `JsonObject`. Properties whose value is `undefined`
 * are dropped (as `JSON.stringify` would). Non-finite numbers, bigints, functions and symbols
 * throw {@link StructConversionError}; `toJSON()` is honoured (e.g. `Date`).
 * Values that are already plain JSON are returned without copying.
 */
export function objectToStruct(value: Record<string, unknown> | undefined): JsonObject {
  if (value === undefined) return {};
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new StructConversionError("", "a Struct must be a JSON object");
  }
  return toJson(value, "") as JsonObject;
}

function toJson(value: unknown, pointer: string): JsonValue {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value)) throw new StructConversionError(pointer, `${value} is not a JSON number`);
      return value;
    case "object": {
      if (value === null) return null;
      const withToJson = value as { toJSON?: () => unknown };
      if (typeof withToJson.toJSON === "function") return toJson(withToJson.toJSON(), pointer);
      if (Array.isArray(value)) {
        let out: JsonValue[] | undefined;
        for (let i = 0; i < value.length; i++) {
          const item = value[i] === undefined ? null : toJson(value[i], `${pointer}/${i}`);
          if (out) out.push(item);
          else if (item !== value[i]) out = [...(value.slice(0, i) as JsonValue[]), item];
        }
        return out ?? (value as JsonValue[]);
      }
      let copy: Record<string, JsonValue> | undefined;
      const entries = Object.entries(value);
      for (let i = 0; i < entries.length; i++) {
        const [key, v] = entries[i]!;
        if (v === undefined) {
          copy ??= Object.fromEntries(entries.slice(0, i)) as Record<string, JsonValue>;
          continue;
        }
        const converted = toJson(v, `${pointer}/${escapePointer(key)}`);
        if (copy) copy[key] = converted;
        else if (converted !== v) {
          copy = Object.fromEntries(entries.slice(0, i)) as Record<string, JsonValue>;
          copy[key] = converted;
        }
      }
      return copy ?? (value as JsonObject);
    }
    default:
      throw new StructConversionError(pointer, `a ${typeof value} cannot be carried by a Struct`);
  }
}

function escapePointer(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}
