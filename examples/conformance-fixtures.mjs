// The fixtures the MCP conformance suite (@modelcontextprotocol/conformance 0.1.13) expects of a
// server, written as an Orchestra module for the reference orchestrator (docs/modules.md):
//
//   orchestra-stdio orchestrator --no-builtins --tools examples/conformance-fixtures.mjs
//   orchestra-stdio serve --no-builtins --tools examples/conformance-fixtures.mjs
//
// Tools return MCP CallToolResults (passed through by the bridge); the tools that log or report
// progress have a `stream` form, which the bridge uses when the client set a log level or sent a
// progress token. docs/conformance.md lists the scenarios and why the others do not apply.

/** A 1×1 red PNG. */
const RED_PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/** A WAV file (RIFF, PCM, mono, 8 kHz, 16 bit) holding `samples` samples of silence, as base64. */
function silentWav(samples) {
  const data = samples * 2;
  const b = Buffer.alloc(44 + data);
  b.write("RIFF", 0, "ascii");
  b.writeUInt32LE(36 + data, 4);
  b.write("WAVEfmt ", 8, "ascii");
  b.writeUInt32LE(16, 16); // fmt chunk size
  b.writeUInt16LE(1, 20); // PCM
  b.writeUInt16LE(1, 22); // channels
  b.writeUInt32LE(8000, 24); // sample rate
  b.writeUInt32LE(16000, 28); // byte rate
  b.writeUInt16LE(2, 32); // block align
  b.writeUInt16LE(16, 34); // bits per sample
  b.write("data", 36, "ascii");
  b.writeUInt32LE(data, 40);
  return b.toString("base64");
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const noArguments = { type: "object", properties: {} };
const text = (t) => ({ content: [{ type: "text", text: t }] });

async function withLogging(_args, ctx) {
  ctx.log("info", "Tool execution started");
  await sleep(50);
  ctx.log("info", "Tool processing data");
  await sleep(50);
  ctx.log("info", "Tool execution completed");
  return text("Tool with logging executed successfully");
}

async function withProgress(_args, ctx) {
  ctx.progress(0, 100);
  await sleep(50);
  ctx.progress(50, 100);
  await sleep(50);
  ctx.progress(100, 100);
  return text("Tool with progress executed successfully");
}

export const tools = [
  {
    name: "test_simple_text",
    description: "Returns a simple text response",
    inputSchema: noArguments,
    handler: async () => text("This is a simple text response for testing."),
  },
  {
    name: "test_image_content",
    description: "Returns a 1x1 red PNG image",
    inputSchema: noArguments,
    handler: async () => ({ content: [{ type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" }] }),
  },
  {
    name: "test_audio_content",
    description: "Returns a short silent WAV clip",
    inputSchema: noArguments,
    handler: async () => ({ content: [{ type: "audio", data: silentWav(800), mimeType: "audio/wav" }] }),
  },
  {
    name: "test_embedded_resource",
    description: "Returns an embedded text resource",
    inputSchema: noArguments,
    handler: async () => ({
      content: [{ type: "resource", resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." } }],
    }),
  },
  {
    name: "test_multiple_content_types",
    description: "Returns text, an image and an embedded resource",
    inputSchema: noArguments,
    handler: async () => ({
      content: [
        { type: "text", text: "Multiple content types test:" },
        { type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" },
        {
          type: "resource",
          resource: { uri: "test://mixed-content-resource", mimeType: "application/json", text: JSON.stringify({ test: "data", value: 123 }) },
        },
      ],
    }),
  },
  {
    name: "test_tool_with_logging",
    description: "Sends three info log messages 50 ms apart while it runs",
    inputSchema: noArguments,
    handler: withLogging,
    stream: withLogging,
  },
  {
    name: "test_tool_with_progress",
    description: "Reports progress 0, 50 and 100 of 100, 50 ms apart",
    inputSchema: noArguments,
    handler: withProgress,
    stream: withProgress,
  },
  {
    name: "test_error_handling",
    description: "Always fails (a tool execution error)",
    inputSchema: noArguments,
    handler: async () => ({ content: [{ type: "text", text: "This tool intentionally returns an error for testing" }], isError: true }),
  },
  {
    name: "json_schema_2020_12_tool",
    description: "Tool with JSON Schema 2020-12 features",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: { address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } } },
      properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
      additionalProperties: false,
    },
    handler: async (args) => text(`Received ${JSON.stringify(args)}`),
  },
];

export const prompts = [
  {
    name: "test_simple_prompt",
    description: "A simple prompt without arguments",
    arguments: [],
    render: () => ({ messages: [{ role: "user", type: "text", text: "This is a simple prompt for testing." }] }),
  },
  {
    name: "test_prompt_with_arguments",
    description: "A prompt with two required arguments",
    arguments: [
      { name: "arg1", description: "First test argument", required: true },
      { name: "arg2", description: "Second test argument", required: true },
    ],
    render: (args) => ({ messages: [{ role: "user", type: "text", text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` }] }),
  },
  {
    name: "test_prompt_with_image",
    description: "A prompt with an image",
    arguments: [],
    render: () => ({
      messages: [
        { role: "user", type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" },
        { role: "user", type: "text", text: "Please analyze the image above." },
      ],
    }),
  },
  {
    name: "test_prompt_with_embedded_resource",
    description: "A prompt embedding the resource named by resourceUri",
    arguments: [{ name: "resourceUri", description: "URI of the resource to embed", required: true }],
    render: (args) => ({
      messages: [
        { role: "user", type: "resource", text: args.resourceUri },
        { role: "user", type: "text", text: "Please process the embedded resource above." },
      ],
    }),
  },
];

export const resources = [
  { uri: "test://static-text", name: "static-text", mimeType: "text/plain", text: "This is the content of the static text resource." },
  { uri: "test://static-binary", name: "static-binary", mimeType: "image/png", blob: RED_PIXEL_PNG },
  { uri: "test://example-resource", name: "example-resource", mimeType: "text/plain", text: "Embedded resource content for testing." },
  {
    uriTemplate: "test://template/{id}/data",
    name: "template-data",
    description: "JSON data for an id",
    mimeType: "application/json",
    read: ({ id }) => JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
  },
];
