// Baseline for `npm run bench`: the same `echo` tool served directly by the official MCP SDK's
// McpServer over stdio (no translation, no QUIC hop).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "baseline-echo", version: "1.0.0" });
server.registerTool("echo", { description: "Echoes text", inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: "text", text }] }));
await server.connect(new StdioServerTransport());
