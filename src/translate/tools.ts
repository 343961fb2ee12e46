/**
 * MCP tools ⇄ Orchestra protobuf messages (pure functions).
 *
 * MCP side: `tools/list` and `tools/call` (server/tools, every revision from 2024-11-05; output
 * shaped per revision through {@link VersionFeatures}). Orchestra side: `ListToolsResponse`,
 * `ToolDefinition`, `ToolRequest`, `ToolResponse`, and `StreamStart` for calls that report
 * progress (orchestra-protocol.md).
 */
import type { Message } from "@bufbuild/protobuf";
import { newRequestId } from "./request-id.js";
import type { ListToolsResponse, PluginRequest, StreamStart, ToolDefinition, ToolRequest, ToolResponse } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { createPluginRequest, createStreamStart, createToolRequest } from "../gen/proto/orchestra/plugin/v1/plugin_codec.js";
import type { CallToolRequest, CallToolResult, ListToolsResult, Tool } from "../gen/mcp/2025-06-18/types.js";
import { TRACE_PARENT_META_KEY } from "../mcp/versions.js";
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

/** The content block types of MCP tool results, in every revision that has them. */
const CONTENT_BLOCK_TYPES: ReadonlySet<string> = new Set(["text", "image", "audio", "resource_link", "resource"]);

/** The top-level properties of an MCP `CallToolResult` (server/tools, "Tool Result"). */
const CALL_TOOL_RESULT_KEYS: ReadonlySet<string> = new Set(["content", "structuredContent", "isError", "_meta"]);

/**
 * Whether a tool's result object is an MCP `CallToolResult` to pass through (rather than a plain
 * object to wrap). It is one exactly when:
 * - it has a `content` property that is an array, and
 * - every element of `content` is an object whose `type` is one of `text`, `image`, `audio`,
 *   `resource_link`, `resource`, and
 * - it has no property other than `content`, `structuredContent`, `isError`, `_meta`.
 * So `{content: "x"}`, `{content: [1]}` or `{content: [...blocks], count: 2}` are plain objects.
 * An empty `content` array is a CallToolResult (MCP allows it).
 */
export function isCallToolResult(result: Record<string, unknown>): boolean {
  const content = result.content;
  if (!Array.isArray(content)) return false;
  for (const key of Object.keys(result)) if (!CALL_TOOL_RESULT_KEYS.has(key)) return false;
  return content.every((block) => typeof block === "object" && block !== null && !Array.isArray(block) && CONTENT_BLOCK_TYPES.has((block as { type?: unknown }).type as string));
}

/**
 * One content block in the nearest form `features.version` has (docs/mcp-orchestra-mapping.md,
 * "Content blocks"):
 * - `audio` before 2025-03-26 → an embedded resource `{type: "resource", resource: {uri:
 *   "orchestra://content/<index>", mimeType, blob: data}}` (annotations kept);
 * - `resource_link` before 2025-06-18 → a text block `"<name> <uri>"` (`": <description>"` appended
 *   when there is one; annotations kept);
 * - everything else as it is.
 */
export function contentBlockForVersion(block: Record<string, unknown>, index: number, features: VersionFeatures): Record<string, unknown> {
  if (block.type === "audio" && !features.audioContent) {
    const out: Record<string, unknown> = {
      type: "resource",
      resource: { uri: `${CONTENT_URI_PREFIX}${index}`, mimeType: block.mimeType, blob: block.data },
    };
    if (block.annotations !== undefined) out.annotations = block.annotations;
    return out;
  }
  if (block.type === "resource_link" && !features.resourceLinks) {
    const name = typeof block.title === "string" ? block.title : block.name;
    const description = typeof block.description === "string" && block.description !== "" ? `: ${block.description}` : "";
    const out: Record<string, unknown> = { type: "text", text: `${String(name)} <${String(block.uri)}>${description}` };
    if (block.annotations !== undefined) out.annotations = block.annotations;
    return out;
  }
  return block;
}

/** URI prefix of the embedded resources that stand for audio blocks in revisions without audio. */
export const CONTENT_URI_PREFIX = "orchestra://content/";

/**
 * A tool's result object (`ToolResponse.result`, or the result chunk of a stream) → MCP
 * `CallToolResult`:
 * - a {@link isCallToolResult CallToolResult} passes through: its blocks in the revision's form
 *   ({@link contentBlockForVersion}), `structuredContent` dropped in revisions without it
 *   (< 2025-06-18), `isError` and `_meta` kept. The handler validates the final result against the
 *   revision's schema (an invalid one is answered with `-32603` naming the failing pointer);
 * - `{text: string}` → one text block;
 * - any other object → one text block with the object as JSON, and the object as
 *   `structuredContent` (revisions ≥ 2025-06-18) unless it is empty.
 * `features` absent means the newest revision.
 */
export function toolResultToCallToolResult(result: Record<string, unknown>, features?: VersionFeatures): CallToolResult {
  if (isCallToolResult(result)) {
    const blocks = result.content as Array<Record<string, unknown>>;
    const content = features ? blocks.map((b, i) => contentBlockForVersion(b, i, features)) : blocks;
    const out: Record<string, unknown> = { ...result, content };
    if (features && !features.structuredContent) delete out.structuredContent;
    return out as unknown as CallToolResult;
  }
  const keys = Object.keys(result);
  const hasText = typeof result.text === "string";
  const text = hasText ? (result.text as string) : JSON.stringify(result);
  const out: CallToolResult = { content: [{ type: "text", text }] };
  if (keys.length > 0 && !(hasText && keys.length === 1) && (features?.structuredContent ?? true)) out.structuredContent = result;
  return out;
}

/** A failed call (`ToolResponse` or `StreamEnd` with `success: false`) → an `isError` result with one text block. */
export function toolErrorResult(errorMessage: string, errorCode: string): CallToolResult {
  return { content: [{ type: "text", text: errorMessage || `tool error: ${errorCode || "unknown"}` }], isError: true };
}

/**
 * `ToolResponse` → MCP `CallToolResult`.
 * - failure: one text block with `error_message` (or `tool error: <error_code>`), `isError: true`;
 * - success: the result object mapped by {@link toolResultToCallToolResult}.
 */
export function toolResponseToCallToolResult(response: ToolResponse, features?: VersionFeatures): CallToolResult {
  if (!response.success) return toolErrorResult(response.errorMessage, response.errorCode);
  return toolResultToCallToolResult(structToObject(response.result), features);
}

/**
 * `error_code` of a `ToolResponse` / `StreamEnd` for a tool the orchestrator has no provider for:
 * ours says `unknown tool "NAME"`, the upstream Go orchestrator `no plugin provides tool "NAME"`,
 * both with this code.
 */
export const TOOL_NOT_FOUND_CODE = "tool_not_found";

export { UNKNOWN_REQUEST_CODE } from "./request-codes.js";

/**
 * Orchestra event topic of tool-set changes: the reference orchestrator publishes an event of
 * type `list_changed` on it (payload `{change, name}`) whenever a tool is added, replaced or
 * removed, and the bridge subscribes to it to send `notifications/tools/list_changed`. A
 * convention of this project (orchestra-protocol.md fixes only the `Subscribe` / `Publish`
 * messages); upstream Go orchestrators publish nothing on it.
 */
export const TOOLS_TOPIC = "tools";

/** Whether a failed tool answer (`ToolResponse`, `StreamEnd`) says the tool does not exist. */
export function isUnknownToolAnswer(answer: { success: boolean; errorCode: string }): boolean {
  return !answer.success && answer.errorCode === TOOL_NOT_FOUND_CODE;
}

/** Per-call context the bridge supplies. */
export interface ToolCallContext {
  /** Orchestra session id of this bridge session (`ToolRequest.session_id`). */
  sessionId: string;
  /** Request id for the `PluginRequest` (and `StreamStart.stream_id`); defaults to a fresh UUIDv7. */
  requestId?: string;
}

/** What every field source of a tool call reads: the MCP params and the bridge's context. */
interface ToolCallInput {
  readonly params: CallToolRequest["params"];
  readonly meta: Readonly<Record<string, unknown>>;
  readonly sessionId: string;
  readonly requestId: string;
}

/** The protobuf fields of a generated message type (without `Message`'s `$typeName` / `$unknown`). */
type MessageFields<M extends Message> = Omit<M, keyof Message>;

/**
 * A field the bridge leaves at its protobuf default because nothing in an MCP `tools/call`
 * supplies it; `reason` says why (it is documentation, read by people).
 */
interface NotFromMcp {
  readonly notFromMcp: string;
}

/**
 * Where each field of message `M` comes from in a `tools/call`: a function of the call, or
 * {@link NotFromMcp}. Keyed by every field of the generated type, so a field added to the
 * `.proto` fails to compile here until it is mapped or marked.
 */
type ToolCallFields<M extends Message> = { readonly [K in keyof MessageFields<M>]-?: ((call: ToolCallInput) => MessageFields<M>[K]) | NotFromMcp };

/** A string-valued `_meta` key of the call (the key is owned by src/mcp/versions.ts); "" when absent or not a string. */
const metaString =
  (key: string) =>
  (call: ToolCallInput): string => {
    const value = call.meta[key];
    return typeof value === "string" ? value : "";
  };

/** `ToolRequest` (the unary `tool_call`) from a `tools/call`: the one `_meta` → protobuf mapping of tool calls. */
const TOOL_REQUEST_FIELDS = {
  toolName: (call) => call.params.name,
  arguments: (call) => objectToStruct(call.params.arguments),
  callerPlugin: () => CALLER_PLUGIN,
  traceParent: metaString(TRACE_PARENT_META_KEY),
  provider: { notFromMcp: "the orchestrator routes a tool to its provider; MCP clients name tools only" },
  sessionId: (call) => call.sessionId,
} satisfies ToolCallFields<ToolRequest>;

/**
 * `ToolRequest` fields that `StreamStart` (the streaming `stream_start`) has no field for, and so
 * streamed calls do not carry. Keyed by exactly the fields `ToolRequest` has and `StreamStart`
 * lacks: a new `ToolRequest` field fails to compile here until the streaming path is decided (a
 * `StreamStart` field of its own, which then must be mapped in {@link STREAM_START_FIELDS}, or
 * an entry here saying why not).
 */
export const NOT_IN_STREAM_START: { readonly [K in Exclude<keyof MessageFields<ToolRequest>, keyof MessageFields<StreamStart>>]-?: string } = {
  traceParent: "orchestra-protocol.md: StreamStart has no trace_parent field",
  provider: "orchestra-protocol.md: StreamStart has no provider field",
  sessionId: "orchestra-protocol.md: StreamStart has no session_id field",
};

/** `StreamStart` from a `tools/call`: the fields it shares with `ToolRequest` come from the same sources. */
const STREAM_START_FIELDS = {
  streamId: (call) => call.requestId,
  toolName: TOOL_REQUEST_FIELDS.toolName,
  arguments: TOOL_REQUEST_FIELDS.arguments,
  callerPlugin: TOOL_REQUEST_FIELDS.callerPlugin,
} satisfies ToolCallFields<StreamStart>;

/** The message init of a field table: every mapped field's value; {@link NotFromMcp} fields are left out (protobuf defaults). */
function fieldsOf(table: Readonly<Record<string, ((call: ToolCallInput) => unknown) | NotFromMcp>>, call: ToolCallInput): Record<string, unknown> {
  const init: Record<string, unknown> = {};
  for (const [field, source] of Object.entries(table)) if (typeof source === "function") init[field] = source(call);
  return init;
}

/** How a tool call travels: a unary `tool_call`, or a `stream_start` for a call that reports progress. */
export type ToolCallKind = "toolCall" | "streamStart";

/**
 * MCP `tools/call` params → `PluginRequest{tool_call}` (`kind` "toolCall", the default) or
 * `PluginRequest{stream_start}` (`kind` "streamStart", `stream_id` = the request id), both from
 * the same field tables: `caller_plugin` "transport.stdio", a UUIDv7 `request_id` (or
 * `ctx.requestId`), the session id, and a W3C `traceparent` in `params._meta`
 * ({@link TRACE_PARENT_META_KEY}) as `trace_parent` (fields `StreamStart` lacks are not carried).
 * @throws StructConversionError when the arguments cannot be carried by a Struct.
 */
export function callToolParamsToPluginRequest(params: CallToolRequest["params"], ctx: ToolCallContext, kind: ToolCallKind = "toolCall"): PluginRequest {
  const meta = (params as { _meta?: Record<string, unknown> })._meta;
  const call: ToolCallInput = { params, meta: meta ?? {}, sessionId: ctx.sessionId, requestId: ctx.requestId ?? newRequestId() };
  const request: PluginRequest["request"] =
    kind === "toolCall"
      ? { case: "toolCall", value: createToolRequest(fieldsOf(TOOL_REQUEST_FIELDS, call)) }
      : { case: "streamStart", value: createStreamStart(fieldsOf(STREAM_START_FIELDS, call)) };
  return createPluginRequest({ requestId: call.requestId, request });
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
export function listToolsPluginRequest(requestId: string = newRequestId()): PluginRequest {
  return createPluginRequest({ requestId, request: { case: "listTools", value: {} } });
}
