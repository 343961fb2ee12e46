/**
 * `tools/list` and `tools/call` (Server › Tools): the orchestrator's `list_tools` paged by the
 * bridge, and a call checked against the tool's input schema, then sent as `tool_call`, or as
 * `stream_start` when the client wants progress or log messages and the sender can stream
 * (docs/mcp-orchestra-mapping.md).
 */
import type { CallToolResult, ProgressToken, Tool } from "../../gen/mcp/2025-06-18/types.js";
import { ErrorCode, JsonRpcError } from "../../jsonrpc/errors.js";
import type { ExactId } from "../../jsonrpc/request-id.js";
import { paginate } from "../../translate/pagination.js";
import type { ToolCallContext } from "../../translate/tools.js";
import { NamedCatalog } from "../catalog.js";
import { canStream, StreamUnsupportedError } from "../../transport/sender.js";
import { ToolArgumentChecker } from "../tool-args.js";
import type { MethodParams, MethodRegistry, MethodServices, RequestScope } from "./context.js";
import { namingDeadline, rpc, unexpected, withSignal } from "./orchestrator.js";
import { translators } from "./translators.js";

type CallToolParams = MethodParams<"tools/call">;

/** The tool methods of one session and what they remember: the tool list, tools that do not stream. */
export class ToolMethods {
  /** The orchestrator's tools (input schemas for argument checks). */
  readonly catalog: NamedCatalog<Tool>;
  /** Tools the orchestrator refused to stream; called unary until the tool set changes. */
  private readonly unaryOnly = new Set<string>();
  private readonly argChecker: ToolArgumentChecker;

  constructor(private readonly services: MethodServices) {
    this.argChecker = new ToolArgumentChecker(services.log);
    this.catalog = new NamedCatalog(() => this.fetchTools());
  }

  register(registry: MethodRegistry): void {
    registry.register("tools/list", (params, scope) => this.listTools(params.cursor, scope));
    registry.register("tools/call", (params, scope) => this.callTool(params, scope));
  }

  /** The tool set changed: every tool may stream again. */
  onToolsChanged(): void {
    this.unaryOnly.clear();
  }

  private async fetchTools(): Promise<Tool[]> {
    const { listToolsPluginRequest, toolDefinitionToMcpTool } = (await translators()).tools;
    const request = listToolsPluginRequest();
    const response = await this.services.sender.send(request, { timeoutMs: this.services.settings.listTimeoutMs }).catch(namingDeadline(request));
    if (response.response.case !== "listTools") throw unexpected(response, "list_tools");
    return response.response.value.tools.map(toolDefinitionToMcpTool);
  }

  private async listTools(cursor: string | undefined, scope: RequestScope): Promise<{ tools: Tool[]; nextCursor?: string }> {
    let tools: Tool[];
    if (cursor === undefined) {
      const { listToolsPluginRequest, toolDefinitionToMcpTool } = (await translators()).tools;
      const response = await rpc(this.services, listToolsPluginRequest(), scope, this.services.settings.listTimeoutMs);
      if (response.response.case !== "listTools") throw unexpected(response, "list_tools");
      tools = response.response.value.tools.map(toolDefinitionToMcpTool);
      this.catalog.store(tools);
      this.unaryOnly.clear();
    } else {
      tools = await withSignal(this.catalog.current(), scope.signal);
    }
    const page = paginate(tools, "tools", cursor, this.services.settings.pageSize);
    return page.nextCursor === undefined ? { tools: page.items } : { tools: page.items, nextCursor: page.nextCursor };
  }

  private async callTool(params: CallToolParams, scope: RequestScope): Promise<CallToolResult> {
    scope.tool = params.name;
    const { callToolParamsToPluginRequest, invalidArgumentsResult, isUnknownToolAnswer, toolResponseToCallToolResult } = (await translators()).tools;
    // A cached tool is taken at once; a lookup that may fetch the list is left when the request is cancelled.
    const tool = this.catalog.peek(params.name) ?? (await withSignal(this.catalog.lookup(params.name), scope.signal));
    if (!tool) throw unknownTool(params.name, "not in the orchestrator's tool list");
    const problem = await this.argChecker.check(tool.inputSchema as Record<string, unknown>, params.arguments, scope.version);
    if (problem) {
      const text = `${problem.pointer || "/"}: ${problem.reason}`;
      if (scope.features.inputErrorsAreToolErrors) return invalidArgumentsResult(params.name, text);
      throw new JsonRpcError(ErrorCode.InvalidParams, `Invalid params: arguments of tool ${params.name}: ${text}`, {
        pointer: `/params/arguments${problem.pointer}`,
        reason: problem.reason,
        tool: params.name,
      });
    }
    // Progress and tool log messages travel only on the streaming path (docs/mcp-orchestra-mapping.md).
    const wantsStream = scope.progressToken !== undefined || this.services.logThreshold(scope) !== undefined;
    if (wantsStream && canStream(this.services.sender) && !this.unaryOnly.has(params.name)) {
      const streamed = await this.callToolStreaming(params, scope, scope.progressToken);
      if (streamed) return streamed;
      this.services.clientLog(scope, "debug", { message: `tool ${params.name} does not stream; called without progress or log messages` });
    }
    const request = callToolParamsToPluginRequest(params, this.callContext());
    const response = await rpc(this.services, request, scope, this.services.settings.toolCallTimeoutMs);
    if (response.response.case !== "toolCall") throw unexpected(response, "tool_call");
    if (isUnknownToolAnswer(response.response.value)) throw this.toolGone(params.name, response.response.value.errorMessage);
    return toolResponseToCallToolResult(response.response.value, scope.features);
  }

  /** The context of every tool call of this session, unary or streamed (one translator, one context). */
  private callContext(): ToolCallContext {
    return { sessionId: this.services.settings.sessionId };
  }

  /**
   * The orchestrator answered `tool_not_found` for `name`: the cached tool list is stale (the
   * next lookup fetches it), and the call is an unknown tool.
   */
  private toolGone(name: string, detail: string): JsonRpcError {
    this.catalog.invalidate();
    return unknownTool(name, detail);
  }

  /**
   * `tools/call` with a progress token or with log messages wanted: `stream_start`; each progress
   * or data `stream_chunk` → one `notifications/progress` (when there is a token), each log chunk
   * → one `notifications/message` (when the log level lets it through); `stream_end` → the result.
   * @returns undefined when the orchestrator refused to stream this tool (remembered until the
   *   tool set changes) or serves no `stream_start` (the sender remembers that per connection):
   *   the caller falls back
   */
  private async callToolStreaming(params: CallToolParams, scope: RequestScope, token: ProgressToken | ExactId | undefined): Promise<CallToolResult | undefined> {
    const { sender, settings } = this.services;
    if (!canStream(sender)) return undefined;
    const { tools, streams } = await translators();
    const { callToolParamsToPluginRequest, isUnknownToolAnswer, toolResponseToCallToolResult } = tools;
    const { isStreamRefusal, progressNotification, StreamAccumulator } = streams;
    const request = callToolParamsToPluginRequest(params, this.callContext(), "streamStart");
    const acc = new StreamAccumulator();
    let result: CallToolResult | undefined;
    let refused = false;
    try {
      await sender.stream(
        request,
        (frame) => {
          const r = frame.response;
          if (r.case === "streamChunk") {
            const event = acc.add(r.value);
            if (event.kind === "log") this.services.clientLog(scope, event.message.level, event.message.data, event.message.logger ?? params.name);
            else if (event.kind === "progress" && token !== undefined && !scope.entry.done && !scope.entry.cancelled) {
              this.services.notify(progressNotification(token, event.update));
            }
            return false;
          }
          if (r.case === "streamEnd") {
            if (isUnknownToolAnswer(r.value)) throw this.toolGone(params.name, r.value.errorMessage);
            if (isStreamRefusal(r.value, acc.chunks)) refused = true;
            else result = acc.result(r.value, scope.features);
            return true;
          }
          if (r.case === "toolCall") {
            // An orchestrator that answers a stream_start like a unary call (its refusal of the
            // kind, `unknown_request`, is a StreamUnsupportedError from the sender).
            if (isUnknownToolAnswer(r.value)) throw this.toolGone(params.name, r.value.errorMessage);
            result = toolResponseToCallToolResult(r.value, scope.features);
            return true;
          }
          throw unexpected(frame, "stream_start");
        },
        { signal: scope.signal, timeoutMs: settings.toolCallTimeoutMs },
      );
    } catch (err) {
      if (err instanceof StreamUnsupportedError) return undefined;
      namingDeadline(request)(err);
    }
    if (refused) {
      this.unaryOnly.add(params.name);
      return undefined;
    }
    if (!result) throw new JsonRpcError(ErrorCode.InternalError, `Orchestrator ended the stream of ${params.name} without stream_end`);
    this.services.clientLog(scope, "debug", { message: `${scope.method}: orchestrator stream_start answered`, chunks: acc.chunks });
    return result;
  }
}

/**
 * The one mapping of a tool the orchestrator does not have (missing from its tool list, or a
 * `tool_not_found` answer) to `-32602` (MCP server/tools, "Error Handling": unknown tools are
 * protocol errors, in every revision).
 */
function unknownTool(name: string, detail: string): JsonRpcError {
  return new JsonRpcError(ErrorCode.InvalidParams, `Unknown tool: ${name}`, { tool: name, detail });
}
