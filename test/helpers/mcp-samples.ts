/**
 * Valid MCP 2025-06-18 instances for every definition in schemas/mcp/2025-06-18/schema.json,
 * written by hand from the specification, plus a mutation generator that derives (mostly
 * invalid) variants from them. Shared by the mcp-*.test.ts files; not a test file itself.
 * mcp-schema-agreement.test.ts checks that every sample is valid under both our schema and the
 * official one and that every definition has samples; the bulk agreement corpus is generated
 * from the official schema by test/helpers/schema-instances.ts.
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
const clientCaps = {
  roots: { listChanged: true },
  sampling: {},
  elicitation: {},
  experimental: { "x-feature": { on: true } },
};
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
  annotations: {
    title: "Search",
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  _meta: { owner: "team" },
};
const promptArg = { name: "topic", description: "What to write about", required: true };
const prompt = {
  name: "essay",
  title: "Essay",
  description: "Writes an essay",
  arguments: [promptArg, { name: "tone" }],
};
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
const callToolRequest = rpc(4, {
  method: "tools/call",
  params: { name: "echo", arguments: { text: "hi", n: 2 } },
});
const callToolRequestNoArgs = rpc("c", { method: "tools/call", params: { name: "now" } });
const listPromptsRequest = rpc(5, { method: "prompts/list", params: { cursor: "p" } });
const getPromptRequest = rpc(6, {
  method: "prompts/get",
  params: { name: "essay", arguments: { topic: "sea" } },
});
const initialized = note({ method: "notifications/initialized" });
const initializedParams = note({ method: "notifications/initialized", params: { _meta: { a: 1 } } });
const cancelled = note({
  method: "notifications/cancelled",
  params: { requestId: 4, reason: "user aborted" },
});
const cancelledString = note({ method: "notifications/cancelled", params: { requestId: "c" } });
const progress = note({
  method: "notifications/progress",
  params: { progressToken: "tok", progress: 50, total: 100, message: "halfway" },
});
const progressMinimal = note({
  method: "notifications/progress",
  params: { progressToken: 9, progress: 0.5 },
});

// Resources, logging, completion (client → server)
const resource = {
  uri: "file:///var/data/report.csv",
  name: "report.csv",
  title: "Quarterly report",
  description: "CSV export",
  mimeType: "text/csv",
  size: 2048,
  annotations: { audience: ["user"], priority: 0.5 },
  _meta: { owner: "finance" },
};
const resourceTemplate = {
  uriTemplate: "file:///logs/{date}.log",
  name: "daily-log",
  mimeType: "text/plain",
};
const listResourcesRequest = rpc(20, { method: "resources/list", params: { cursor: "r-2" } });
const listResourceTemplatesRequest = rpc(21, { method: "resources/templates/list" });
const readResourceRequest = rpc(22, {
  method: "resources/read",
  params: { uri: "file:///var/data/report.csv" },
});
const subscribeRequest = rpc(23, { method: "resources/subscribe", params: { uri: "mem://counter" } });
const unsubscribeRequest = rpc(24, { method: "resources/unsubscribe", params: { uri: "mem://counter" } });
const setLevelRequest = rpc(25, { method: "logging/setLevel", params: { level: "warning" } });
const promptRef = { type: "ref/prompt", name: "essay", title: "Essay" };
const templateRef = { type: "ref/resource", uri: "file:///logs/{date}.log" };
const completeRequest = rpc(26, {
  method: "completion/complete",
  params: {
    ref: promptRef,
    argument: { name: "topic", value: "se" },
    context: { arguments: { tone: "calm" } },
  },
});
const completeRequestTemplate = rpc(27, {
  method: "completion/complete",
  params: { ref: templateRef, argument: { name: "date", value: "2025-" } },
});
const rootsListChanged = note({ method: "notifications/roots/list_changed" });

// Sampling, roots, elicitation (server → client)
const samplingMessage = { role: "user", content: text };
const modelPreferences = {
  hints: [{ name: "sonnet" }, {}],
  costPriority: 0.2,
  speedPriority: 1,
  intelligencePriority: 0,
};
const createMessageRequest = rpc("s-1", {
  method: "sampling/createMessage",
  params: {
    messages: [samplingMessage, { role: "assistant", content: image }, { role: "user", content: audio }],
    modelPreferences,
    systemPrompt: "Be brief.",
    includeContext: "thisServer",
    temperature: 0.7,
    maxTokens: 256,
    stopSequences: ["\n\n"],
    metadata: { provider: { topK: 5 } },
  },
});
const createMessageRequestMinimal = rpc("s-2", {
  method: "sampling/createMessage",
  params: { messages: [], maxTokens: 1 },
});
const listRootsRequest = rpc("s-3", { method: "roots/list" });
const stringField = {
  type: "string",
  title: "Email",
  description: "Where to reach you",
  minLength: 3,
  maxLength: 200,
  format: "email",
};
const numberField = { type: "integer", title: "Age", minimum: 0, maximum: 150 };
const booleanField = { type: "boolean", title: "Subscribe", default: false };
const enumField = { type: "string", title: "Plan", enum: ["free", "pro"], enumNames: ["Free", "Pro"] };
const elicitRequest = rpc("s-4", {
  method: "elicitation/create",
  params: {
    message: "Please fill in your details",
    requestedSchema: {
      type: "object",
      properties: { email: stringField, age: numberField, subscribe: booleanField, plan: enumField },
      required: ["email"],
    },
  },
});

// Server notifications
const resourceListChanged = note({ method: "notifications/resources/list_changed" });
const resourceUpdated = note({ method: "notifications/resources/updated", params: { uri: "mem://counter" } });
const promptListChanged = note({ method: "notifications/prompts/list_changed", params: {} });
const toolListChanged = note({ method: "notifications/tools/list_changed", params: { _meta: { seq: 3 } } });
const loggingMessage = note({
  method: "notifications/message",
  params: { level: "error", logger: "db", data: { error: "connection lost", retries: 3 } },
});
const loggingMessageText = note({
  method: "notifications/message",
  params: { level: "debug", data: "tick" },
});

// Results
const listResourcesResult = {
  resources: [resource, { uri: "mem://counter", name: "counter" }],
  nextCursor: "r-3",
};
const listResourceTemplatesResult = { resourceTemplates: [resourceTemplate] };
const readResourceResult = { contents: [textResource, blobResource] };
const completeResult = { completion: { values: ["sea", "season"], total: 12, hasMore: true } };
const createMessageResult = {
  role: "assistant",
  content: text,
  model: "claude-sonnet",
  stopReason: "endTurn",
};
const listRootsResult = {
  roots: [{ uri: "file:///home/user/project", name: "project" }, { uri: "file:///tmp" }],
};
const elicitResult = { action: "accept", content: { email: "a@example.com", age: 42, subscribe: true } };

const initializeResult = {
  protocolVersion: "2025-06-18",
  capabilities: serverCaps,
  serverInfo: implementation,
  instructions: "Use search first.",
};
const initializeResultMinimal = {
  protocolVersion: "2025-06-18",
  capabilities: {},
  serverInfo: implementationTitled,
};
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
const errorResponse = {
  jsonrpc: "2.0",
  id: 4,
  error: { code: -32602, message: "Invalid params", data: { field: "name" } },
};
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
  listResourcesRequest,
  listResourceTemplatesRequest,
  readResourceRequest,
  subscribeRequest,
  unsubscribeRequest,
  setLevelRequest,
  completeRequest,
  completeRequestTemplate,
];
const serverRequests = [pingRequest, pingRequestMeta, createMessageRequest, createMessageRequestMinimal, listRootsRequest, elicitRequest];
const clientNotifications = [initialized, initializedParams, cancelled, cancelledString, progress, progressMinimal, rootsListChanged];
const serverNotifications = [cancelled, progress, progressMinimal, resourceListChanged, resourceUpdated, promptListChanged, toolListChanged, loggingMessage, loggingMessageText];
const results = [
  initializeResult,
  initializeResultMinimal,
  listToolsResult,
  listToolsResultEmpty,
  callToolResult,
  callToolResultError,
  listPromptsResult,
  getPromptResult,
  listResourcesResult,
  listResourceTemplatesResult,
  readResourceResult,
  completeResult,
  {},
];
const clientResults = [{}, { _meta: { x: 1 } }, createMessageResult, listRootsResult, elicitResult, { action: "decline" }];
const responses = [response(0, initializeResult), response("p-1", {}), response(4, callToolResult), response(5, listPromptsResult)];

/** Definition name → valid instances (JSON-RPC messages carry their full envelope). */
export const SAMPLES: Readonly<Record<string, readonly unknown[]>> = {
  Annotations: [{}, textFull.annotations, { priority: 0 }, { audience: [] }],
  AudioContent: [audio, { type: "audio", data: "", mimeType: "audio/ogg" }],
  BaseMetadata: [{ name: "x" }, { name: "search", title: "Search" }],
  BlobResourceContents: [blobResource],
  BooleanSchema: [booleanField, { type: "boolean" }],
  CallToolRequest: [callToolRequest, callToolRequestNoArgs],
  CallToolResult: [callToolResult, callToolResultError, { content: [] }],
  CancelledNotification: [cancelled, cancelledString],
  ClientCapabilities: [{}, clientCaps],
  ClientNotification: clientNotifications,
  ClientRequest: requests,
  ClientResult: clientResults,
  CompleteRequest: [completeRequest, completeRequestTemplate],
  CompleteResult: [completeResult, { completion: { values: [] } }],
  ContentBlock: [text, textFull, image, audio, resourceLink, embeddedText, embeddedBlob],
  CreateMessageRequest: [createMessageRequest, createMessageRequestMinimal],
  CreateMessageResult: [createMessageResult, { role: "user", content: audio, model: "m" }],
  Cursor: ["abc", ""],
  ElicitRequest: [elicitRequest],
  ElicitResult: [elicitResult, { action: "cancel" }, { action: "decline", _meta: {} }],
  EmbeddedResource: [embeddedText, embeddedBlob],
  EmptyResult: [{}, { _meta: {} }],
  EnumSchema: [enumField, { type: "string", enum: [] }],
  GetPromptRequest: [getPromptRequest],
  GetPromptResult: [getPromptResult],
  ImageContent: [image],
  Implementation: [implementation, implementationTitled],
  InitializeRequest: [initializeRequest, initializeRequestBare],
  InitializeResult: [initializeResult, initializeResultMinimal],
  InitializedNotification: [initialized, initializedParams],
  JSONRPCError: [errorResponse, errorResponseBare],
  JSONRPCMessage: [...requests, ...serverRequests, ...clientNotifications, ...serverNotifications, ...responses, errorResponse],
  JSONRPCNotification: [...clientNotifications, note({ method: "custom/event", params: { any: [1, 2] } })],
  JSONRPCRequest: [...requests, rpc(99, { method: "custom/thing" })],
  JSONRPCResponse: responses,
  ListPromptsRequest: [listPromptsRequest, rpc(8, { method: "prompts/list" })],
  ListPromptsResult: [listPromptsResult, { prompts: [], nextCursor: "n" }],
  ListResourceTemplatesRequest: [listResourceTemplatesRequest, rpc(28, { method: "resources/templates/list", params: { cursor: "t" } })],
  ListResourceTemplatesResult: [listResourceTemplatesResult, { resourceTemplates: [], nextCursor: "n" }],
  ListResourcesRequest: [listResourcesRequest, rpc(29, { method: "resources/list" })],
  ListResourcesResult: [listResourcesResult, { resources: [] }],
  ListRootsRequest: [listRootsRequest, rpc(30, { method: "roots/list", params: { _meta: { progressToken: 1 } } })],
  ListRootsResult: [listRootsResult, { roots: [] }],
  ListToolsRequest: [listToolsRequest, listToolsRequestCursor],
  ListToolsResult: [listToolsResult, listToolsResultEmpty],
  LoggingLevel: ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"],
  LoggingMessageNotification: [loggingMessage, loggingMessageText],
  ModelHint: [{ name: "sonnet" }, {}],
  ModelPreferences: [modelPreferences, {}],
  Notification: [{ method: "x" }, { method: "y", params: { _meta: {}, v: 1 } }],
  NumberSchema: [numberField, { type: "number" }],
  PaginatedRequest: [rpc(10, { method: "resources/list" }), rpc(11, { method: "x/list", params: { cursor: "c" } })],
  PaginatedResult: [{}, { nextCursor: "n", _meta: {} }],
  PingRequest: [pingRequest, pingRequestMeta],
  PrimitiveSchemaDefinition: [stringField, numberField, booleanField, enumField],
  ProgressNotification: [progress, progressMinimal],
  ProgressToken: ["tok", 12],
  Prompt: [prompt, { name: "bare" }],
  PromptArgument: [promptArg, { name: "x", title: "X" }],
  PromptListChangedNotification: [promptListChanged, note({ method: "notifications/prompts/list_changed" })],
  PromptMessage: [promptMessage, { role: "assistant", content: resourceLink }],
  PromptReference: [promptRef, { type: "ref/prompt", name: "p" }],
  ReadResourceRequest: [readResourceRequest],
  ReadResourceResult: [readResourceResult, { contents: [] }],
  Request: [{ method: "anything" }, { method: "x", params: { _meta: { progressToken: 3 }, y: true } }],
  RequestId: [1, "abc", 0, -7],
  Resource: [resource, { uri: "mem://counter", name: "counter" }],
  ResourceContents: [{ uri: "file:///etc/motd" }, { uri: "mem://x", mimeType: "text/plain", _meta: {} }],
  ResourceLink: [resourceLink, { type: "resource_link", uri: "urn:isbn:0451450523", name: "book" }],
  ResourceListChangedNotification: [resourceListChanged],
  ResourceTemplate: [resourceTemplate, { uriTemplate: "https://example.com/{+path}{?q}", name: "t", title: "T", annotations: {} }],
  ResourceTemplateReference: [templateRef, { type: "ref/resource", uri: "mem://counter" }],
  ResourceUpdatedNotification: [resourceUpdated],
  Result: results,
  Role: ["user", "assistant"],
  Root: [
    { uri: "file:///home/user/project", name: "project" },
    { uri: "file:///tmp", _meta: {} },
  ],
  RootsListChangedNotification: [rootsListChanged, note({ method: "notifications/roots/list_changed", params: { _meta: {} } })],
  SamplingMessage: [samplingMessage, { role: "assistant", content: image }],
  ServerCapabilities: [{}, serverCaps],
  ServerNotification: serverNotifications,
  ServerRequest: serverRequests,
  ServerResult: results,
  SetLevelRequest: [setLevelRequest],
  StringSchema: [stringField, { type: "string" }],
  SubscribeRequest: [subscribeRequest],
  TextContent: [text, textFull],
  TextResourceContents: [textResource, { uri: "mem://x", text: "" }],
  Tool: [toolMinimal, toolFull],
  ToolAnnotations: [{}, toolFull.annotations],
  ToolListChangedNotification: [toolListChanged],
  UnsubscribeRequest: [unsubscribeRequest],
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
