/**
 * What a method module of the bridge works with: the typed {@link MethodRegistry} it registers
 * its handlers in, the {@link RequestScope} each call gets, and the {@link MethodServices} the
 * session lends (the orchestrator's sender, settings, client log). A method absent from the
 * registry is `-32601` Method not found (the session's answer); a handler answers by returning
 * the result or by throwing a {@link JsonRpcError} carrying its code.
 *
 * Handler types come from the generated per-revision types (`src/gen/mcp/<revision>/methods.ts`
 * `ProtocolTypes`): a method's params are the union of its params in every revision that defines
 * it, its result the union of its results (without the members the session adds in stateless
 * revisions: `resultType`, `ttlMs`, `cacheScope`, see src/mcp/negotiation.ts `decorateResult`).
 * A schema change that breaks a handler shows up in `tsc`.
 */
import type { GeneratedTypes, GeneratedVersion } from "../../gen/mcp/catalog.js";
import type { Implementation, ProgressToken } from "../../gen/mcp/2025-06-18/types.js";
import type { JSONRPCNotification } from "../../jsonrpc/message.js";
import type { ExactId } from "../../jsonrpc/request-id.js";
import type { Logger } from "../../log.js";
import type { ProtocolValidators } from "../../mcp/validation.js";
import type { CancelSignal, Sender } from "../../transport/sender.js";
import type { VersionFeatures } from "../../translate/features.js";
import type { LoggingLevel } from "../client-log.js";

/** A JSON-RPC request method of any generated revision, e.g. `tools/call`. */
export type RequestMethod = { [V in GeneratedVersion]: keyof GeneratedTypes[V]["requests"] & string }[GeneratedVersion];

type Requests<V extends GeneratedVersion> = GeneratedTypes[V]["requests"];
type RequestOf<M> = { [V in GeneratedVersion]: M extends keyof Requests<V> ? (Requests<V>[M] extends { readonly request: infer R } ? R : never) : never }[GeneratedVersion];
type ResultOf<M> = { [V in GeneratedVersion]: M extends keyof Requests<V> ? (Requests<V>[M] extends { readonly result: infer R } ? R : never) : never }[GeneratedVersion];
type Undecorated<R> = R extends unknown ? Omit<R, "resultType" | "ttlMs" | "cacheScope"> : never;

/** The params of `method` in any revision that defines it (`{}` when the request has none). */
export type MethodParams<M extends RequestMethod> = NonNullable<RequestOf<M> extends { params?: infer P } ? P : never>;
/** The result of `method` in any revision that defines it, as a handler returns it. */
export type MethodResult<M extends RequestMethod> = Undecorated<ResultOf<M>>;

/** Whether a request may still produce output (read by notifications about it). */
export interface RequestState {
  /** Set once answered (or dropped): no notification for it may follow. */
  readonly done: boolean;
  /** Set when the client cancelled it: no response may follow (MCP cancellation). */
  readonly cancelled: boolean;
}

/** Per-request context handed to method handlers. */
export interface RequestScope {
  /** The request's id exactly as written (responses carry its token text). */
  readonly id: ExactId;
  readonly method: string;
  /** The revision governing the request (src/mcp/negotiation.ts `requestProtocolVersion`). */
  readonly version: string;
  readonly validators: ProtocolValidators;
  readonly features: VersionFeatures;
  /** Aborted when the client cancels the request or the bridge fails it at shutdown. */
  readonly signal: CancelSignal;
  readonly entry: RequestState;
  /** `params._meta.progressToken`, exactly as written when it is id-like. */
  readonly progressToken?: ProgressToken | ExactId;
  /** Per-request log level (`_meta` `io.modelcontextprotocol/logLevel`, stateless revisions). */
  readonly logLevel?: LoggingLevel;
  /** `tools/call`: the tool's name (named in errors about the call or its result). */
  tool?: string;
}

/** A typed handler of `method`. */
export type MethodHandler<M extends RequestMethod> = (params: MethodParams<M>, scope: RequestScope) => MethodResult<M> | Promise<MethodResult<M>>;

/** A handler as the session calls it. */
export type AnyMethodHandler = (params: Record<string, unknown>, scope: RequestScope) => object | Promise<object>;

/**
 * The methods a bridge serves: method name → handler. The session answers a request whose
 * method is absent with `-32601`, and capabilities advertise only what is registered.
 */
export class MethodRegistry {
  private readonly handlers = new Map<string, AnyMethodHandler>();

  /**
   * Registers the handler of `method`.
   * @throws Error when `method` already has one (one owner per method)
   */
  register<M extends RequestMethod>(method: M, handler: MethodHandler<M>): void {
    if (this.handlers.has(method)) throw new Error(`method ${method} is registered twice`);
    this.handlers.set(method, handler as unknown as AnyMethodHandler);
  }

  /** The handler of `method`, or undefined (`-32601`). */
  get(method: string): AnyMethodHandler | undefined {
    return this.handlers.get(method);
  }

  /** Whether `method` is served. */
  has(method: string): boolean {
    return this.handlers.has(method);
  }
}

/** Settings of one bridge session (defaults resolved; see `HandlerOptions` in ../handler.ts). */
export interface BridgeSettings {
  readonly serverInfo: Implementation;
  readonly instructions?: string;
  /** `ToolRequest.session_id`. */
  readonly sessionId: string;
  /** Deadline of `tools/call` RPCs, ms. */
  readonly toolCallTimeoutMs: number;
  /** Deadline of list, prompt and storage RPCs, ms. */
  readonly listTimeoutMs: number;
  /** Items per page of the list methods. */
  readonly pageSize: number;
  /** Storage path prefixes exposed as resources. */
  readonly resourcePrefixes: readonly string[];
  /** `storage_type` of the storage requests. */
  readonly storageType: string;
}

/** What the session lends method modules. */
export interface MethodServices {
  readonly sender: Sender;
  readonly settings: BridgeSettings;
  readonly log: Logger;
  /** Writes a server→client notification. */
  notify(message: JSONRPCNotification): void;
  /**
   * Sends a `notifications/message` (from `logger`, default the bridge's name) when the log level
   * that applies to `scope` lets `level` through and the request is still open.
   */
  clientLog(scope: RequestScope | undefined, level: LoggingLevel, data: unknown, logger?: string): void;
  /** The log level that applies to `scope` (per request in stateless revisions, else the session's); undefined: no log messages. */
  logThreshold(scope: RequestScope | undefined): LoggingLevel | undefined;
}

/** The session's lifecycle state, as `initialize`, `logging/setLevel` and change announcements see it. */
export interface SessionState {
  /** Revision negotiated by `initialize`; undefined before. */
  readonly sessionVersion: string | undefined;
  /** True once `initialize` was answered. */
  readonly initializeAnswered: boolean;
  /** The session's revision (negotiated, else the newest initialize-based one). */
  readonly protocolVersion: string;
  /** Validators of {@link protocolVersion}. */
  readonly validators: ProtocolValidators;
  /** Session log level set by `logging/setLevel`. */
  logLevel: LoggingLevel | undefined;
  /** `initialize`: the session speaks `version` from now on. */
  adopt(version: string): void;
}
