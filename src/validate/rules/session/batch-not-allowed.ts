/** `session/batch-not-allowed`: see `meta.description`. */
import { defineRule } from "../rule.js";
import { isId, isObject } from "../../facts.js";
import { BATCH_PROTOCOL_VERSIONS } from "../../../mcp/versions.js";

export default defineRule({
  meta: {
    id: "session/batch-not-allowed",
    severity: "error",
    description: "A JSON-RPC batch in a protocol version after 2025-03-26 (2024-11-05 follows JSON-RPC 2.0, batches included), or initialize inside a batch.",
    spec: "MCP basic 2025-03-26: the initialize request MUST NOT be part of a JSON-RPC batch; later versions define no batch; 2024-11-05 basic: all messages MUST follow the JSON-RPC 2.0 specification (which defines batches, §6)",
  },
  create: (context) => ({
    batch(m, items) {
      const s = context.session;
      if (!s.m.batchRejected) return;
      const speaks = s.speaks();
      const n = items.length;
      context.report(
        m.origin,
        m.dir,
        `JSON-RPC batch of ${n} message${n === 1 ? "" : "s"}; batches are only allowed in protocol version ${BATCH_PROTOCOL_VERSIONS.join(", ")} (session: ${speaks})`,
      );
    },
    batchItem(m, item, index) {
      if (isObject(item) && item.method === "initialize") {
        context.report(m.origin, m.dir, "the initialize request MUST NOT be part of a JSON-RPC batch", isId(item.id) ? item.id : undefined, "initialize", `/${index}`);
      }
    },
  }),
});
