/**
 * MCP prompts ⇄ Orchestra protobuf messages (pure functions).
 *
 * MCP side: `prompts/list`, `prompts/get` (server/prompts, every revision from 2024-11-05).
 * Orchestra side: `ListPromptsRequest/Response`, `PromptDefinition`, `PromptArgument`,
 * `PromptGetRequest{prompt_name, arguments map<string,string>}`, `PromptGetResponse{description,
 * messages: PromptMessage{role, content: ContentBlock{type "text"|"resource", text}}}`.
 *
 * A `resource` content block's `text` names a storage entry (a path, or an
 * `orchestra://storage/...` URI); the bridge reads it (`storage_read`) and embeds it as an MCP
 * `EmbeddedResource`, which every revision supports. {@link resourcePathsOf} lists the paths to
 * read; {@link promptGetResponseToResult} assembles the result from what was read.
 *
 * Media (this project's convention): a `ContentBlock{type: "image" | "audio"}` carries the media as
 * an RFC 2397 `data:<mimeType>;base64,<data>` URL in `text` ({@link mediaDataUrl}) → MCP
 * `ImageContent` / `AudioContent` (audio in the nearest block before 2025-03-26, as for tools).
 */
import { newRequestId } from "./request-id.js";
import type { ListPromptsResponse, PluginRequest, PromptDefinition, PromptGetResponse } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { createPluginRequest, createPromptGetRequest } from "../gen/proto/orchestra/plugin/v1/plugin_codec.js";
import type { BlobResourceContents, ContentBlock, GetPromptRequest, GetPromptResult, Prompt, PromptMessage, TextResourceContents } from "../gen/mcp/2025-06-18/types.js";
import type { VersionFeatures } from "./features.js";
import { ErrorCode, JsonRpcError } from "../jsonrpc/errors.js";
import { storagePathOf } from "./resources.js";
import { contentBlockForVersion } from "./tools.js";

/** The `ContentBlock.text` of an image or audio prompt block: `data:<mimeType>;base64,<base64 data>` (RFC 2397). */
export function mediaDataUrl(mimeType: string, base64Data: string): string {
  return `data:${mimeType};base64,${base64Data}`;
}

/** {@link mediaDataUrl}'s inverse; undefined for anything else. */
export function parseMediaDataUrl(text: string): { mimeType: string; data: string } | undefined {
  const m = /^data:([^;,]+);base64,([A-Za-z0-9+/]*={0,2})$/.exec(text);
  return m ? { mimeType: m[1]!, data: m[2]! } : undefined;
}

/**
 * Thrown when the orchestrator's prompt cannot be expressed in MCP (bad role or content type):
 * `-32603`, the orchestrator's fault.
 */
export class PromptTranslationError extends JsonRpcError {
  override readonly name = "PromptTranslationError";
  constructor(
    /** What cannot be expressed, e.g. `prompt message 0 has no content`. */
    readonly detail: string,
  ) {
    super(ErrorCode.InternalError, `Internal error: the orchestrator's prompt cannot be expressed in MCP: ${detail}`);
  }
}

/** A `PluginRequest{list_prompts}` with a fresh UUIDv7 request id. */
export function listPromptsPluginRequest(requestId: string = newRequestId()): PluginRequest {
  return createPluginRequest({ requestId, request: { case: "listPrompts", value: {} } });
}

/**
 * `PromptDefinition` → MCP `Prompt`: empty descriptions omitted; `arguments` omitted when there
 * are none; an argument's `required` is written only when true.
 */
export function promptDefinitionToMcpPrompt(definition: PromptDefinition): Prompt {
  const prompt: Prompt = { name: definition.name };
  if (definition.description) prompt.description = definition.description;
  if (definition.arguments.length > 0) {
    prompt.arguments = definition.arguments.map((a) => {
      const arg: NonNullable<Prompt["arguments"]>[number] = { name: a.name };
      if (a.description) arg.description = a.description;
      if (a.required) arg.required = true;
      return arg;
    });
  }
  return prompt;
}

/** `ListPromptsResponse` → every prompt, in the orchestrator's order (the bridge pages them). */
export function listPromptsResponseToPrompts(response: ListPromptsResponse): Prompt[] {
  return response.prompts.map(promptDefinitionToMcpPrompt);
}

/**
 * The names of required arguments of `prompt` that `args` lacks (MCP: a missing required
 * argument is answered with `-32602`).
 */
export function missingPromptArguments(prompt: Prompt, args: Record<string, string> | undefined): string[] {
  return (prompt.arguments ?? []).filter((a) => a.required && (args === undefined || !Object.hasOwn(args, a.name))).map((a) => a.name);
}

/** MCP `prompts/get` params → `PluginRequest{prompt_get}`. */
export function getPromptParamsToPluginRequest(params: GetPromptRequest["params"], requestId: string = newRequestId()): PluginRequest {
  return createPluginRequest({
    requestId,
    request: {
      case: "promptGet",
      value: createPromptGetRequest({ promptName: params.name, arguments: { ...(params.arguments ?? {}) } }),
    },
  });
}

/** Storage paths named by the `resource` content blocks of a prompt, deduplicated, in order. */
export function resourcePathsOf(response: PromptGetResponse): string[] {
  const paths = new Set<string>();
  for (const m of response.messages) {
    if (m.content?.type === "resource") paths.add(storagePathOf(m.content.text));
  }
  return [...paths];
}

/**
 * `PromptGetResponse` → MCP `GetPromptResult`.
 * - role must be `user` or `assistant`;
 * - `text` blocks → `TextContent`; `resource` blocks → `EmbeddedResource` with the contents read
 *   for that path (`embedded`, keyed by storage path, see {@link resourcePathsOf}); `image` and
 *   `audio` blocks holding a {@link mediaDataUrl} → `ImageContent` / `AudioContent`, shaped for
 *   `features`' revision (absent: the newest).
 * @throws PromptTranslationError for another role, another content type, a missing content, a
 *   media block that is not a base64 data URL, or a resource path absent from `embedded`
 */
export function promptGetResponseToResult(
  response: PromptGetResponse,
  embedded: ReadonlyMap<string, TextResourceContents | BlobResourceContents> = new Map(),
  features?: VersionFeatures,
): GetPromptResult {
  const messages: PromptMessage[] = response.messages.map((m, i) => {
    if (m.role !== "user" && m.role !== "assistant") {
      throw new PromptTranslationError(`prompt message ${i} has role ${JSON.stringify(m.role)} (MCP allows "user" and "assistant")`);
    }
    const block = m.content;
    if (!block) throw new PromptTranslationError(`prompt message ${i} has no content`);
    let content: ContentBlock;
    if (block.type === "text") {
      content = { type: "text", text: block.text };
    } else if (block.type === "resource") {
      const path = storagePathOf(block.text);
      const resource = embedded.get(path);
      if (!resource) throw new PromptTranslationError(`prompt message ${i} embeds ${JSON.stringify(path)}, which was not read`);
      content = { type: "resource", resource };
    } else if (block.type === "image" || block.type === "audio") {
      const media = parseMediaDataUrl(block.text);
      if (!media) throw new PromptTranslationError(`prompt message ${i} has content type ${JSON.stringify(block.type)} whose text is not a base64 data: URL`);
      const raw = { type: block.type, data: media.data, mimeType: media.mimeType };
      content = (features ? contentBlockForVersion(raw, i, features) : raw) as ContentBlock;
    } else {
      throw new PromptTranslationError(`prompt message ${i} has content type ${JSON.stringify(block.type)} (expected "text", "resource", "image" or "audio")`);
    }
    return { role: m.role, content };
  });
  const result: GetPromptResult = { messages };
  if (response.description) result.description = response.description;
  return result;
}
