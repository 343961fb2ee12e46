// Node's floor for `npm run bench` (bench/anchors.mjs): the least an MCP stdio server written in
// Node can do. Lines from stdin with node:readline, JSON.parse, and one response line per request:
// `initialize` (echoing the client's protocolVersion, tools capability), `tools/call` of `echo`
// ({text} → one text block), everything else -32601. No schemas, no SDK, no validation.
import { createInterface } from "node:readline";

const answer = (id, body) => process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id, ...body })}\n`);

createInterface({ input: process.stdin }).on("line", (line) => {
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return answer(null, { error: { code: -32700, message: "Parse error" } });
  }
  if (m.id === undefined || m.method === undefined) return; // notification or response
  if (m.method === "initialize") {
    answer(m.id, {
      result: { protocolVersion: m.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "bare-node", version: "1.0.0" } },
    });
  } else if (m.method === "tools/call" && m.params?.name === "echo") {
    answer(m.id, { result: { content: [{ type: "text", text: String(m.params.arguments?.text ?? "") }] } });
  } else {
    answer(m.id, { error: { code: -32601, message: `Method not found: ${m.method}` } });
  }
});
