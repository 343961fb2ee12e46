// A module for the reference orchestrator with one tool that returns an image (docs/modules.md):
//
//   orchestra-stdio serve --tools examples/image-tool.mjs
//
// A result that is an MCP CallToolResult ({ content: [...blocks], isError?, structuredContent?,
// _meta? } and nothing else) reaches the client as it is. ctx.log reaches the client as
// notifications/message when it set a log level: the bridge then calls the tool's `stream` form.

/** A 1×1 PNG of each colour. */
const PIXELS = {
  red: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC",
  blue: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNgYPgPAAEDAQAIicLsAAAAAElFTkSuQmCC",
};

async function pixel({ colour = "red" }, ctx) {
  ctx.log("info", `drawing one ${colour} pixel`);
  return {
    content: [
      { type: "text", text: `One ${colour} pixel:` },
      { type: "image", data: PIXELS[colour], mimeType: "image/png" },
    ],
  };
}

export const tools = [
  {
    name: "pixel",
    description: "Returns a 1x1 PNG image of the given colour.",
    inputSchema: { type: "object", properties: { colour: { type: "string", enum: Object.keys(PIXELS) } } },
    handler: pixel,
    stream: pixel,
  },
];
