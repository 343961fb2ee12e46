/**
 * MCP tools ⇄ Orchestra protobuf messages (pure functions).
 *
 * MCP side: `tools/list` and `tools/call` (server/tools, every revision from 2024-11-05; output
 * shaped per revision through {@link VersionFeatures}). Orchestra side: `ListToolsResponse`,
 * `ToolDefinition`, `ToolRequest`, `ToolResponse`, and `StreamStart` for calls that report
 * progress (orchestra-protocol.md).
 */
import { create } from "@bufbuild/protobuf";
import { v7 as uuidv7 } from "uuid";
import {
  PluginRequestSchema,
  StreamStartSchema,
  ToolRequestSchema,
  type ListToolsResponse,
  type PluginRequest,
  type ToolDefinition,
  type ToolResponse,
} from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import type { CallToolRequest, CallToolResult, ListToolsResult, Tool } from "../gen/mcp/2025-06-18/types.js";
import type { VersionFeatures } from "./features.js";
import { objectToStruct, structToObject } from "./struct.js";

/** `caller_plugin` the bridge puts on every `ToolRequest` (as the Go bridge does). */
export const CALLER_PLUGIN = "transport.stdio";

/**
 * `ToolDefinition` → MCP `Tool`. An empty description is omitted; a missing `input_schema`
 * becomes `{ "type": "object" }` and one without `type` gets `"type": "object"`, because MCP
 * requires tool input schemas to be object schemas.
 */
export function toolDefinitionToMcpTool(definition: ToolDefinition): Tool {
  const schema = structToObject(definition.inputSchema);
  const inputSchema = (schema.type === undefined ? { ...schema, type: "object" } : schema) as Tool["inputSchema"];
  const tool: Tool = { name: definition.name, inputSchema };
  if (definition.description) tool.description = definition.description;
  return tool;
}

/** `ListToolsResponse` → MCP `ListToolsResult` (one page; the orchestrator does not paginate). */
export function listToolsResponseToResult(response: ListToolsResponse): ListToolsResult {
  return { tools: response.tools.map(toolDefinitionToMcpTool) };
}

/**
 * `ToolResponse` → MCP `CallToolResult`.
 * - failure: one text block with `error_message` (or `tool error: <error_code>`), `isError: true`;
 * - success: one text block holding the result's `text` string if it has one, else the result as
 *   JSON; when the result is anything other than exactly `{ text: string }` (and not empty) it is
 *   also returned as `structuredContent`, in revisions that have it (≥ 2025-06-18; `features`
 *   absent means yes).
 */
export function toolResponseToCallToolResult(response: ToolResponse, features?: VersionFeatures): CallToolResult {
  if (!response.success) {
    const text = response.errorMessage || `tool error: ${response.errorCode || "unknown"}`;
    return { content: [{ type: "text", text }], isError: true };
  }
  const result = structToObject(response.result);
  const keys = Object.keys(result);
  const hasText = typeof result.text === "string";
  const text = hasText ? (result.text as string) : JSON.stringify(result);
  const out: CallToolResult = { content: [{ type: "text", text }] };
  if (keys.length > 0 && !(hasText && keys.length === 1) && (features?.structuredContent ?? true)) out.structuredContent = result;
  return out;
}

/**
 * `error_code` of a `ToolResponse` / `StreamEnd` for a tool the orchestrator has no provider for:
 * ours says `unknown tool "NAME"`, the upstream Go orchestrator `no plugin provides tool "NAME"`,
 * both with this code.
 */
export const TOOL_NOT_FOUND_CODE = "tool_not_found";

/**
 * `ToolResponse.error_code` with which an orchestrator refuses a request kind it does not
 * implement, in a `PluginResponse{tool_call}` (the protocol has no error response; the upstream
 * Go orchestrator: `error_message` "unrecognized request type").
 */
export const UNKNOWN_REQUEST_CODE = "unknown_request";

/** Whether a failed tool answer (`ToolResponse`, `StreamEnd`) says the tool does not exist. */
export function isUnknownToolAnswer(answer: { success: boolean; errorCode: string }): boolean {
  return !answer.success && answer.errorCode === TOOL_NOT_FOUND_CODE;
}

/** Per-call context the bridge supplies. */
export interface ToolCallContext {
  /** Orchestra session id of this bridge session (`ToolRequest.session_id`). */
  sessionId: string;
  /** Request id for the `PluginRequest`; defaults to a fresh UUIDv7. */
  requestId?: string;
}

/**
 * MCP `tools/call` params → `PluginRequest{tool_call}` with `caller_plugin` "transport.stdio",
 * a UUIDv7 `request_id` and the session id. A W3C `traceparent` in `params._meta` is carried
 * as `trace_parent`.
 * @throws StructConversionError when the arguments cannot be carried by a Struct.
 */
export function callToolParamsToPluginRequest(params: CallToolRequest["params"], ctx: ToolCallContext): PluginRequest {
  const meta = (params as { _meta?: Record<string, unknown> })._meta;
  const traceParent = typeof meta?.traceparent === "string" ? meta.traceparent : "";
  return create(PluginRequestSchema, {
    requestId: ctx.requestId ?? uuidv7(),
    request: {
      case: "toolCall",
      value: create(ToolRequestSchema, {
        toolName: params.name,
        arguments: objectToStruct(params.arguments),
        callerPlugin: CALLER_PLUGIN,
        sessionId: ctx.sessionId,
        traceParent,
      }),
    },
  });
}

/**
 * MCP `tools/call` params → `PluginRequest{stream_start}` for a call that asked for progress:
 * `stream_id` is the request id (a fresh UUIDv7), `caller_plugin` "transport.stdio".
 * @throws StructConversionError when the arguments cannot be carried by a Struct.
 */
export function callToolParamsToStreamStart(params: CallToolRequest["params"], requestId: string = uuidv7()): PluginRequest {
  return create(PluginRequestSchema, {
    requestId,
    request: {
      case: "streamStart",
      value: create(StreamStartSchema, {
        streamId: requestId,
        toolName: params.name,
        arguments: objectToStruct(params.arguments),
        callerPlugin: CALLER_PLUGIN,
      }),
    },
  });
}

/**
 * The `CallToolResult` for arguments rejected before the network hop, in revisions where input
 * validation errors are tool execution errors (≥ 2025-11-25): one text block naming the tool and
 * the first failing JSON pointer, `isError: true`.
 * @param problem e.g. `/text: must be string (got number)`
 */
export function invalidArgumentsResult(toolName: string, problem: string): CallToolResult {
  return { content: [{ type: "text", text: `Invalid arguments for tool ${toolName}: ${problem}` }], isError: true };
}

/** A `PluginRequest{list_tools}` with a fresh UUIDv7 request id. */
export function listToolsPluginRequest(requestId: string = uuidv7()): PluginRequest {
  return create(PluginRequestSchema, { requestId, request: { case: "listTools", value: {} } });
}
