/**
 * Valid MCP 2025-06-18 instances for every definition in schemas/mcp/2025-06-18/schema.json,
 * written by hand from the specification, plus a mutation generator that derives (mostly
 * invalid) variants from them. Shared by the mcp-*.test.ts files; not a test file itself.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const text = { type: "text", text: "hello" };
const textFull = {
  type: "text",
  text: "with extras",
  annotations: { audience: ["user", "assistant"], priority: 0.25, lastModified: "2025-06-18T09:30:00Z" },
  _meta: { "example.com/trace": "t-1" },
};
const image = { type: "image", data: "aGVsbG8gd29ybGQ=", mimeType: "image/png" };
const audio = { type: "audio", data: "UklGRg==", mimeType: "audio/wav", annotations: { priority: 1 } };
const resourceLink = {
  type: "resource_link",
  uri: "file:///var/data/report.csv",
  name: "report.csv",
  title: "Quarterly report",
  description: "CSV export",
  mimeType: "text/csv",
  size: 1024,
};
const textResource = { uri: "file:///etc/motd", mimeType: "text/plain", text: "welcome" };
const blobResource = { uri: "https://example.com/blob.bin", blob: "AAECAw==", _meta: {} };
const embeddedText = { type: "resource", resource: textResource };
const embeddedBlob = { type: "resource", resource: blobResource, annotations: { audience: ["assistant"] } };

const implementation = { name: "orchestra-test", version: "1.2.3" };
const implementationTitled = { name: "orchestra-test", title: "Orchestra Test", version: "0.0.1" };
const clientCaps = { roots: { listChanged: true }, sampling: {}, elicitation: {}, experimental: { "x-feature": { on: true } } };
const serverCaps = {
  tools: { listChanged: true },
  prompts: { listChanged: false },
  resources: { subscribe: true, listChanged: true },
  logging: {},
  completions: {},
  experimental: { batch: {} },
};

const toolMinimal = { name: "echo", inputSchema: { type: "object" } };
const toolFull = {
  name: "search",
  title: "Search",
  description: "Full-text search",
  inputSchema: {
    type: "object",
    properties: { query: { type: "string" }, limit: { type: "integer", minimum: 1 } },
    required: ["query"],
    additionalProperties: false,
  },
  outputSchema: { type: "object", properties: { hits: { type: "array" } }, required: ["hits"] },
  annotations: { title: "Search", readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  _meta: { owner: "team" },
};
const promptArg = { name: "topic", description: "What to write about", required: true };
const prompt = { name: "essay", title: "Essay", description: "Writes an essay", arguments: [promptArg, { name: "tone" }] };
const promptMessage = { role: "user", content: text };

const rpc = <T extends object>(id: number | string, body: T) => ({ jsonrpc: "2.0", id, ...body });
const note = <T extends object>(body: T) => ({ jsonrpc: "2.0", ...body });

const initializeRequest = rpc(0, {
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: clientCaps, clientInfo: implementationTitled },
});
const initializeRequestBare = rpc("init", {
  method: "initialize",
  params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: implementation },
});
const pingRequest = rpc(7, { method: "ping" });
const pingRequestMeta = rpc("p-1", { method: "ping", params: { _meta: { progressToken: "tok" } } });
const listToolsRequest = rpc(2, { method: "tools/list" });
const listToolsRequestCursor = rpc(3, { method: "tools/list", params: { cursor: "page-2" } });
const callToolRequest = rpc(4, { method: "tools/call", params: { name: "echo", arguments: { text: "hi", n: 2 } } });
const callToolRequestNoArgs = rpc("c", { method: "tools/call", params: { name: "now" } });
const listPromptsRequest = rpc(5, { method: "prompts/list", params: { cursor: "p" } });
const getPromptRequest = rpc(6, { method: "prompts/get", params: { name: "essay", arguments: { topic: "sea" } } });
const initialized = note({ method: "notifications/initialized" });
const initializedParams = note({ method: "notifications/initialized", params: { _meta: { a: 1 } } });
const cancelled = note({ method: "notifications/cancelled", params: { requestId: 4, reason: "user aborted" } });
const cancelledString = note({ method: "notifications/cancelled", params: { requestId: "c" } });
const progress = note({
  method: "notifications/progress",
  params: { progressToken: "tok", progress: 50, total: 100, message: "halfway" },
});
const progressMinimal = note({ method: "notifications/progress", params: { progressToken: 9, progress: 0.5 } });

const initializeResult = {
  protocolVersion: "2025-06-18",
  capabilities: serverCaps,
  serverInfo: implementation,
  instructions: "Use search first.",
};
const initializeResultMinimal = { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: implementationTitled };
const listToolsResult = { tools: [toolMinimal, toolFull], nextCursor: "more" };
const listToolsResultEmpty = { tools: [] };
const callToolResult = { content: [text, image, audio, resourceLink, embeddedText, embeddedBlob] };
const callToolResultError = {
  content: [textFull],
  structuredContent: { hits: [] },
  isError: true,
  _meta: { took: 3 },
};
const listPromptsResult = { prompts: [prompt, { name: "bare" }] };
const getPromptResult = {
  description: "essay prompt",
  messages: [promptMessage, { role: "assistant", content: image }, { role: "user", content: embeddedText }],
};

const response = (id: number | string, result: object) => ({ jsonrpc: "2.0", id, result });
const errorResponse = { jsonrpc: "2.0", id: 4, error: { code: -32602, message: "Invalid params", data: { field: "name" } } };
const errorResponseBare = { jsonrpc: "2.0", id: "x", error: { code: -32601, message: "Method not found" } };

const requests = [
  initializeRequest,
  initializeRequestBare,
  pingRequest,
  pingRequestMeta,
  listToolsRequest,
  listToolsRequestCursor,
  callToolRequest,
  callToolRequestNoArgs,
  listPromptsRequest,
  getPromptRequest,
];
const clientNotifications = [initialized, initializedParams, cancelled, cancelledString, progress, progressMinimal];
const results = [
  initializeResult,
  initializeResultMinimal,
  listToolsResult,
  listToolsResultEmpty,
  callToolResult,
  callToolResultError,
  listPromptsResult,
  getPromptResult,
  {},
];
const responses = [response(0, initializeResult), response("p-1", {}), response(4, callToolResult), response(5, listPromptsResult)];

/** Definition name → valid instances (JSON-RPC messages carry their full envelope). */
export const SAMPLES: Readonly<Record<string, readonly unknown[]>> = {
  Annotations: [{}, textFull.annotations, { priority: 0 }, { audience: [] }],
  AudioContent: [audio, { type: "audio", data: "", mimeType: "audio/ogg" }],
  BlobResourceContents: [blobResource],
  CallToolRequest: [callToolRequest, callToolRequestNoArgs],
  CallToolResult: [callToolResult, callToolResultError, { content: [] }],
  CancelledNotification: [cancelled, cancelledString],
  ClientCapabilities: [{}, clientCaps],
  ClientNotification: clientNotifications,
  ClientRequest: requests,
  ClientResult: [{}, { _meta: { x: 1 } }],
  ContentBlock: [text, textFull, image, audio, resourceLink, embeddedText, embeddedBlob],
  Cursor: ["abc", ""],
  EmbeddedResource: [embeddedText, embeddedBlob],
  EmptyResult: [{}, { _meta: {} }],
  GetPromptRequest: [getPromptRequest],
  GetPromptResult: [getPromptResult],
  ImageContent: [image],
  Implementation: [implementation, implementationTitled],
  InitializeRequest: [initializeRequest, initializeRequestBare],
  InitializeResult: [initializeResult, initializeResultMinimal],
  InitializedNotification: [initialized, initializedParams],
  JSONRPCError: [errorResponse, errorResponseBare],
  JSONRPCMessage: [...requests, ...clientNotifications, ...responses, errorResponse],
  JSONRPCNotification: [...clientNotifications, note({ method: "custom/event", params: { any: [1, 2] } })],
  JSONRPCRequest: [...requests, rpc(99, { method: "custom/thing" })],
  JSONRPCResponse: responses,
  ListPromptsRequest: [listPromptsRequest, rpc(8, { method: "prompts/list" })],
  ListPromptsResult: [listPromptsResult, { prompts: [], nextCursor: "n" }],
  ListToolsRequest: [listToolsRequest, listToolsRequestCursor],
  ListToolsResult: [listToolsResult, listToolsResultEmpty],
  Notification: [{ method: "x" }, { method: "y", params: { _meta: {}, v: 1 } }],
  PaginatedRequest: [rpc(10, { method: "resources/list" }), rpc(11, { method: "x/list", params: { cursor: "c" } })],
  PaginatedResult: [{}, { nextCursor: "n", _meta: {} }],
  PingRequest: [pingRequest, pingRequestMeta],
  ProgressNotification: [progress, progressMinimal],
  ProgressToken: ["tok", 12],
  Prompt: [prompt, { name: "bare" }],
  PromptArgument: [promptArg, { name: "x", title: "X" }],
  PromptMessage: [promptMessage, { role: "assistant", content: resourceLink }],
  Request: [{ method: "anything" }, { method: "x", params: { _meta: { progressToken: 3 }, y: true } }],
  RequestId: [1, "abc", 0, -7],
  ResourceLink: [resourceLink, { type: "resource_link", uri: "urn:isbn:0451450523", name: "book" }],
  Result: results,
  Role: ["user", "assistant"],
  ServerCapabilities: [{}, serverCaps],
  ServerNotification: [cancelled, progress, progressMinimal],
  ServerRequest: [pingRequest, pingRequestMeta],
  ServerResult: results,
  TextContent: [text, textFull],
  TextResourceContents: [textResource, { uri: "mem://x", text: "" }],
  Tool: [toolMinimal, toolFull],
  ToolAnnotations: [{}, toolFull.annotations],
};

/** Every distinct sample, for cross-validation against all definitions. */
export function allSamples(): unknown[] {
  return [...new Set(Object.values(SAMPLES).flat())];
}

const REPLACEMENTS: readonly Json[] = [null, true, 0, 1.5, -1, 2, "", "x", "not base64!", "relative/path", [], {}];

/**
 * Deterministic variants of `value`: at every position, delete the member, replace it with each
 * of a fixed set of values of other types/shapes, add a stray member to objects, and empty or
 * extend arrays. Most variants are invalid; some stay valid (which is fine: verdicts are
 * compared, not assumed).
 */
export function mutations(value: unknown): unknown[] {
  const out: unknown[] = [];
  // `rebuild(x)` returns a copy of the whole sample with the current position replaced by x.
  const visit = (node: unknown, rebuild: (replacement: unknown) => unknown): void => {
    for (const r of REPLACEMENTS) out.push(rebuild(r));
    if (Array.isArray(node)) {
      out.push(rebuild([]), rebuild([...node, {}]), rebuild([...node, "x"]));
      node.forEach((child, i) => visit(child, (rep) => rebuild(node.map((c, j) => (j === i ? rep : c)))));
    } else if (node !== null && typeof node === "object") {
      const obj = node as Record<string, unknown>;
      out.push(rebuild({ ...obj, zz_extra: 1 }));
      for (const key of Object.keys(obj)) {
        const { [key]: _removed, ...without } = obj;
        out.push(rebuild(without));
        visit(obj[key], (rep) => rebuild({ ...obj, [key]: rep }));
      }
    }
  };
  visit(value, (r) => r);
  return out;
}
