/**
 * The facts about one JSON-RPC message that the session checker and its rules act on.
 *
 * {@link factsOf} classifies a parsed JSON value (JSON-RPC 2.0 §4/§5: request, notification,
 * response, or one of the invalid shapes) and copies out the members the session rules read:
 * ids, the method, progress tokens, cancellation targets, and the initialize handshake fields.
 * Schema checks need the whole message: {@link MessageFacts.value} holds it.
 */

/** A JSON value that is not an object (array, string, number, boolean, null). */
export const SHAPE_NOT_OBJECT = 0;
/** An object whose `method` member is not a string. */
export const SHAPE_BAD_METHOD = 1;
/** `method` string and an `id` member. */
export const SHAPE_REQUEST = 2;
/** `method` string and no `id` member. */
export const SHAPE_NOTIFICATION = 3;
/** No `method`; both `result` and `error`. */
export const SHAPE_BOTH = 4;
/** No `method`, `result` or `error`. */
export const SHAPE_NEITHER = 5;
/** No `method`; `result`. */
export const SHAPE_RESULT = 6;
/** No `method`; `error`. */
export const SHAPE_ERROR = 7;

/** Which value a schema check applies to: the message, or its `result` member. */
export type CheckTarget = "message" | "result";

type Json = Record<string, unknown>;
type Id = string | number;

/**
 * Mutable facts of one message (one object is reused for every message of a checker).
 * Fields not relevant to the shape keep whatever the last message left there; the checker only
 * reads the ones its shape defines.
 */
export interface MessageFacts {
  shape: number;
  /** The parsed message. */
  value: unknown;
  /** `kindOf(value)` (SHAPE_NOT_OBJECT) or `kindOf(value.method)` (SHAPE_BAD_METHOD). */
  kind: string;
  /** `jsonrpc === "2.0"`. */
  jsonrpcOk: boolean;
  /** The raw `jsonrpc` member (for messages when it is wrong). */
  jsonrpc: unknown;
  /** The method (requests and notifications). */
  method: string;
  /** The raw `id` member; undefined when absent. */
  id: unknown;
  /** Requests: `params._meta.progressToken`; notifications: `params.progressToken`; when string/number. */
  token: Id | undefined;
  /** Notifications: `params` is an object. */
  paramsObject: boolean;
  /** Notifications: the raw `params.requestId`. */
  requestId: unknown;
  /** Notifications: the raw `params.progress`. */
  progress: unknown;
  /** initialize requests: `params.capabilities` when an object. */
  clientCaps: Json | undefined;
  /** initialize requests: `params.protocolVersion` when a string. */
  requestedVersion: string | undefined;
  /** Responses: the `result` member. */
  result: unknown;
}

/** A fresh facts object. */
export function newFacts(): MessageFacts {
  return {
    shape: SHAPE_NOT_OBJECT,
    value: undefined,
    kind: "",
    jsonrpcOk: false,
    jsonrpc: undefined,
    method: "",
    id: undefined,
    token: undefined,
    paramsObject: false,
    requestId: undefined,
    progress: undefined,
    clientCaps: undefined,
    requestedVersion: undefined,
    result: undefined,
  };
}

export const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
export const isId = (v: unknown): v is Id => typeof v === "string" || typeof v === "number";

/** "null", "an array", or the `typeof` name. */
export function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v;
}

/** Fills `f` from the parsed message `msg` (not a batch: the checker splits those). Returns `f`. */
export function factsOf(msg: unknown, f: MessageFacts): MessageFacts {
  f.value = msg;
  if (!isObject(msg)) {
    f.shape = SHAPE_NOT_OBJECT;
    f.kind = kindOf(msg);
    return f;
  }
  f.jsonrpc = msg.jsonrpc;
  f.jsonrpcOk = msg.jsonrpc === "2.0";
  const id = msg.id;
  f.id = id;
  // One property load answers most messages; `in` only when it reads undefined (same outcome as `"method" in msg`).
  const method = msg.method;
  if (method !== undefined || "method" in msg) {
    if (typeof method !== "string") {
      f.shape = SHAPE_BAD_METHOD;
      f.kind = kindOf(method);
      return f;
    }
    f.method = method;
    const params = msg.params;
    if (id !== undefined) {
      f.shape = SHAPE_REQUEST;
      const meta = isObject(params) ? params._meta : undefined;
      const token = isObject(meta) ? meta.progressToken : undefined;
      f.token = isId(token) ? token : undefined;
      if (method === "initialize") {
        const p = isObject(params) ? params : undefined;
        f.clientCaps = p !== undefined && isObject(p.capabilities) ? p.capabilities : undefined;
        const requested = p?.protocolVersion;
        f.requestedVersion = typeof requested === "string" ? requested : undefined;
      }
    } else {
      f.shape = SHAPE_NOTIFICATION;
      f.paramsObject = isObject(params);
      if (f.paramsObject) {
        const p = params as Json;
        f.requestId = p.requestId;
        f.token = isId(p.progressToken) ? p.progressToken : undefined;
        f.progress = p.progress;
      } else {
        f.requestId = undefined;
        f.token = undefined;
        f.progress = undefined;
      }
    }
    return f;
  }
  const hasResult = "result" in msg;
  const hasError = "error" in msg;
  if (hasResult && hasError) f.shape = SHAPE_BOTH;
  else if (!hasResult && !hasError) f.shape = SHAPE_NEITHER;
  else {
    f.shape = hasError ? SHAPE_ERROR : SHAPE_RESULT;
  }
  f.result = msg.result;
  return f;
}
