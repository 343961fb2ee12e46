/** `jsonrpc/invalid`: see `meta.description`. */
import { defineRule } from "../rule.js";
import { isId, SHAPE_BAD_METHOD, SHAPE_BOTH, SHAPE_NOT_OBJECT, SHAPE_NOTIFICATION, SHAPE_REQUEST } from "../../facts.js";
import { showId } from "../../session-state.js";

/** The id when it is a string or number (findings about invalid messages leave out null). */
const idOnly = (raw: unknown): string | number | undefined => (isId(raw) ? raw : undefined);

export default defineRule({
  meta: {
    id: "jsonrpc/invalid",
    severity: "error",
    description: "A JSON value that is not a JSON-RPC 2.0 request, notification or response.",
    spec: "MCP basic: all messages MUST follow the JSON-RPC 2.0 specification; JSON-RPC 2.0 §4, §5",
  },
  create: (context) => ({
    message(m) {
      const f = m.facts;
      if (f.jsonrpcOk) return;
      const method = f.shape === SHAPE_REQUEST || f.shape === SHAPE_NOTIFICATION ? f.method : undefined;
      context.report(m.origin, m.dir, `"jsonrpc" must be "2.0", got ${showId(f.jsonrpc)}`, idOnly(f.id), method, `${m.prefix}/jsonrpc`);
    },
    invalid(m) {
      const f = m.facts;
      if (f.shape === SHAPE_NOT_OBJECT)
        context.report(m.origin, m.dir, `a JSON-RPC message must be an object, got ${f.kind}`, undefined, undefined, m.prefix === "" ? undefined : m.prefix);
      else if (f.shape === SHAPE_BAD_METHOD) context.report(m.origin, m.dir, `"method" must be a string, got ${f.kind}`, undefined, undefined, `${m.prefix}/method`);
      else if (f.shape === SHAPE_BOTH) context.report(m.origin, m.dir, 'a response must not contain both "result" and "error"', idOnly(f.id), undefined, m.prefix);
      else context.report(m.origin, m.dir, 'neither a request/notification ("method") nor a response ("result"/"error")', idOnly(f.id), undefined, m.prefix);
    },
    batch(m, items) {
      if (items.length === 0) context.report(m.origin, m.dir, "empty JSON-RPC batch");
    },
  }),
});
