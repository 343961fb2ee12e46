/** `schema/envelope`: see `meta.description`. */
import { defineRule } from "../rule.js";

export default defineRule({
  meta: {
    id: "schema/envelope",
    severity: "error",
    description: "The JSON-RPC envelope fails JSONRPCRequest / JSONRPCNotification / JSONRPCResponse / JSONRPCError.",
    spec: "MCP basic: requests MUST include a string or integer ID; either a result or an error MUST be set (schema: JSONRPCRequest, JSONRPCNotification, JSONRPCResponse)",
  },
  only: { response: { kind: ["result"] } },
  create: (context) => ({
    request(m) {
      const s = context.session;
      if (m.facts.jsonrpcOk) s.m.envelope = context.check(s.defs.envelopeChecks.request, "message", m, m.prefix, m.aboutId, m.facts.method);
    },
    notification(m) {
      const s = context.session;
      if (m.facts.jsonrpcOk) s.m.envelope = context.check(s.defs.envelopeChecks.notification, "message", m, m.prefix, undefined, m.facts.method);
    },
    response(m) {
      const s = context.session;
      if (m.facts.jsonrpcOk) s.m.envelope = context.check(s.defs.envelopeChecks.result, "message", m, m.prefix, m.aboutId, undefined);
    },
  }),
});
