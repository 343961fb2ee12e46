// `node bench/call-direct.mjs DIST PORT CERTS_DIR WARMUP CALLS IN_FLIGHT`: the floor subject of
// bench/call-instructions.mjs (`--direct`): this process's `QuicSender` (DIST/quic/quic-link.js)
// alone, no stdio hop and no MCP, makes WARMUP echo `tool_call`s of 100 bytes at 8 in flight,
// then CALLS at IN_FLIGHT, against the orchestrator on 127.0.0.1:PORT, and exits (status 1 on a
// wrong answer). The same request per call as `serve` sends for the bench's `tools/call`
// (`caller_plugin`, a session id, a fresh UUIDv7 request id), built with the same translator.
import { join } from "node:path";

const [dist, port, certsDir, warmup, calls, inFlight] = process.argv.slice(2);
const { QuicSender } = await import(join(dist, "quic/quic-link.js"));
const { callToolParamsToPluginRequest } = await import(join(dist, "translate/tools.js"));
const text = "x".repeat(100);
const context = { sessionId: "0193a5c4-52a1-7c3e-9f0b-6d2e8a41c5f7" };
const sender = new QuicSender({ host: "127.0.0.1", port: Number(port), certsDir, serverName: "localhost", callTimeoutMs: 120_000 });

async function drive(n, parallel) {
  let next = 0;
  const worker = async () => {
    while (next++ < n) {
      const r = await sender.send(callToolParamsToPluginRequest({ name: "echo", arguments: { text } }, context), { timeoutMs: 120_000 });
      if (r.response.case !== "toolCall" || r.response.value.result?.text !== text) throw new Error(`unexpected answer ${r.response.case}`);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

try {
  await drive(Number(warmup), 8);
  await drive(Number(calls), Number(inFlight));
} catch (e) {
  console.error(`call-direct: ${e.message}`);
  process.exitCode = 1;
} finally {
  await sender.close();
}
