/**
 * The MCP server side of the bridge, one instance per stdio session: the session core
 * (./session.ts: parse → classify → version → validate → in-flight / cancel / batch → dispatch →
 * result check → sink) with the method modules registered on it (./methods/: lifecycle, tools,
 * prompts, resources, listen) and the tool-change watch (./tool-watch.ts). Every supported MCP
 * revision is served (docs/mcp-orchestra-mapping.md has the method × revision table); the method
 * table of a revision is what is registered here and defined by its schema, anything else is
 * `-32601`, and capabilities advertise exactly that.
 *
 * Input: one JSON-RPC line at a time ({@link McpHandler.handleLine}). Output: JSON-RPC messages
 * (or batch answers) handed to {@link HandlerOptions.sink}. Nothing here throws to the caller.
 */
import { randomUUID } from "node:crypto";
import type { Implementation, Prompt, Tool } from "../gen/mcp/2025-06-18/types.js";
import type { Logger } from "../log.js";
import { childLogger } from "../log.js";
import { featuresOf } from "../translate/features.js";
import { DEFAULT_PAGE_SIZE } from "../translate/pagination.js";
import type { Sender } from "../transport/sender.js";
import type { NamedCatalog } from "./catalog.js";
import type { LoggingLevel } from "./client-log.js";
import { MethodRegistry, type BridgeSettings, type MethodServices } from "./methods/context.js";
import { registerLifecycle } from "./methods/lifecycle.js";
import { ListenStreams } from "./methods/listen.js";
import { senderFailure } from "./methods/orchestrator.js";
import { PromptMethods } from "./methods/prompts.js";
import { registerResources } from "./methods/resources.js";
import { ToolMethods } from "./methods/tools.js";
import { McpSession, type MessageSink } from "./session.js";
import { ToolWatch } from "./tool-watch.js";

export { JsonRpcError } from "../jsonrpc/errors.js";
export { negotiateInitializeVersion } from "../mcp/negotiation.js";
export type { MessageSink } from "./session.js";
export { WATCH_RETRY_MAX_MS } from "./tool-watch.js";

export interface HandlerOptions {
  sender: Sender;
  sink: MessageSink;
  /** `serverInfo` in the initialize result (and `_meta` serverInfo in stateless results). */
  serverInfo: Implementation;
  /** `instructions` in the initialize / discover result, when set. */
  instructions?: string;
  /** `ToolRequest.session_id` for this session; a fresh UUID by default. */
  sessionId?: string;
  /** Deadline for `tools/call` RPCs, ms (default 300 000). */
  toolCallTimeoutMs?: number;
  /** Deadline for list, prompt and storage RPCs, ms (default 10 000). */
  listTimeoutMs?: number;
  /** Items per page of `tools/list`, `prompts/list`, `resources/list`, `resources/templates/list` (default 100). */
  pageSize?: number;
  /** Storage path prefixes exposed as resources (default `[""]`: everything). */
  resourcePrefixes?: readonly string[];
  /** `storage_type` of the storage requests (default `""`: the orchestrator's default). */
  storageType?: string;
  /**
   * Subscribe to the orchestrator's `tools` topic to send `notifications/tools/list_changed`
   * (default true; effective only when the sender can stream, see ./streaming.ts).
   */
  watchToolChanges?: boolean;
  logger?: Logger;
  /** Called whenever a request stops being in flight (answered, dropped or failed). */
  onSettled?: () => void;
}

/** {@link HandlerOptions} with defaults applied. */
function settingsOf(options: HandlerOptions): BridgeSettings {
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(pageSize) || pageSize < 1) throw new RangeError(`pageSize must be a positive integer, got ${options.pageSize}`);
  return {
    serverInfo: options.serverInfo,
    ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
    sessionId: options.sessionId ?? randomUUID(),
    toolCallTimeoutMs: options.toolCallTimeoutMs ?? 300_000,
    listTimeoutMs: options.listTimeoutMs ?? 10_000,
    pageSize,
    resourcePrefixes: options.resourcePrefixes && options.resourcePrefixes.length > 0 ? [...options.resourcePrefixes] : [""],
    storageType: options.storageType ?? "",
  };
}

export class McpHandler {
  private readonly session: McpSession;
  private readonly watch: ToolWatch;
  private readonly listen: ListenStreams;
  private readonly toolMethods: ToolMethods;
  private readonly log: Logger;
  /** The orchestrator's tools (input schemas for argument checks). */
  readonly tools: NamedCatalog<Tool>;
  /** The orchestrator's prompts (names and required arguments). */
  readonly prompts: NamedCatalog<Prompt>;

  constructor(options: HandlerOptions) {
    const settings = settingsOf(options);
    this.log = options.logger ?? childLogger("bridge");
    const registry = new MethodRegistry();
    const services: MethodServices = {
      sender: options.sender,
      settings,
      log: this.log,
      notify: (message) => this.session.notify(message),
      clientLog: (scope, level, data, logger) => this.session.clientLog(scope, level, data, logger),
      logThreshold: (scope) => this.session.logThreshold(scope),
    };
    this.session = new McpSession({
      registry,
      sink: options.sink,
      serverInfo: settings.serverInfo,
      log: this.log,
      failure: (scope, err) => senderFailure(services, scope, err),
      onDispatch: (scope) => {
        if (scope.features.stateless) this.watch.start();
      },
      onAdopt: () => this.watch.start(),
      ...(options.onSettled ? { onSettled: options.onSettled } : {}),
    });
    this.toolMethods = new ToolMethods(services);
    const promptMethods = new PromptMethods(services);
    this.tools = this.toolMethods.catalog;
    this.prompts = promptMethods.catalog;
    this.watch = new ToolWatch({
      sender: options.sender,
      catalog: this.tools,
      log: this.log,
      enabled: options.watchToolChanges !== false,
      onChanged: (eventType) => this.onToolsChanged(eventType),
    });
    this.listen = new ListenStreams(services, () => this.watch.active);
    registerLifecycle(registry, services, { session: this.session, watchesToolChanges: () => this.watch.active });
    this.toolMethods.register(registry);
    promptMethods.register(registry);
    registerResources(registry, services);
    this.listen.register(registry);
  }

  /** Revision negotiated by `initialize`; undefined before (and in a purely stateless session). */
  get sessionVersion(): string | undefined {
    return this.session.sessionVersion;
  }

  /** True once `initialize` was answered. */
  get initializeAnswered(): boolean {
    return this.session.initializeAnswered;
  }

  /** True once the client sent `notifications/initialized`. */
  get initialized(): boolean {
    return this.session.initialized;
  }

  /** Session log level set by `logging/setLevel`; no log notifications while undefined. */
  get logLevel(): LoggingLevel | undefined {
    return this.session.logLevel;
  }

  /** The session's revision: negotiated by `initialize`, else our newest initialize-family one. */
  get protocolVersion(): string {
    return this.session.protocolVersion;
  }

  /** Number of requests received and not yet answered. */
  get pending(): number {
    return this.session.pending;
  }

  /** Bytes of input lines whose requests are still in flight (a batch's line is shared by its requests). */
  get unansweredBytes(): number {
    return this.session.unansweredBytes;
  }

  /**
   * Whether the bridge will send `notifications/tools/list_changed` (and advertises it): the
   * sender can stream and the orchestrator has not refused the tool-change subscription.
   */
  get watchesToolChanges(): boolean {
    return this.watch.active;
  }

  /**
   * Handles one inbound line (without its terminator). Never throws.
   * @param line UTF-8 bytes or text of one JSON-RPC message or batch.
   */
  handleLine(line: Buffer | string): void {
    this.session.handleLine(line);
  }

  /**
   * Handles a line that exceeded the size cap (its bytes were discarded). Answers with
   * `-32600` using the id recovered from the line's first bytes, or `null`.
   */
  handleOversizedLine(head: Buffer, bytes: number, maxBytes: number): void {
    this.session.handleOversizedLine(head, bytes, maxBytes);
  }

  /** Handles one parsed JSON value (a message or a batch). Never throws. */
  handleMessage(message: unknown): void {
    this.session.handleMessage(message);
  }

  /** Resolves when no request is in flight. */
  idle(): Promise<void> {
    return this.session.idle();
  }

  /**
   * Fails every in-flight request with `-32603` (`reason`) and aborts its RPC. Used on shutdown
   * after the grace period.
   */
  failAll(reason: string): void {
    this.session.failAll(reason);
  }

  /**
   * Stops background work: the tool-change subscription, and every open `subscriptions/listen`
   * stream, which is answered with its closing result (ended gracefully). Idempotent; other
   * in-flight requests are not touched.
   */
  close(): void {
    this.listen.close();
    this.watch.close();
  }

  /** The orchestrator's tool set changed: listen streams, and an initialize-based session, are told. */
  private onToolsChanged(eventType: string): void {
    this.toolMethods.onToolsChanged();
    this.log.debug({ eventType }, "orchestrator tool set changed");
    this.listen.toolsChanged();
    const session = this.session;
    if (!session.initializeAnswered || featuresOf(session.protocolVersion).stateless) return;
    if (!session.validators.messageDefinition("s2c", "notifications/tools/list_changed")) return;
    session.notify({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    session.clientLog(undefined, "info", { message: "the orchestrator's tool set changed", eventType });
  }
}
