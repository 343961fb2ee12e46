/** `schema/error-response`: see `meta.description`. */
import { defineRule } from "../rule.js";

export default defineRule({
  meta: {
    id: "schema/error-response",
    severity: "error",
    description: "An error response fails JSONRPCError (a null id alone is jsonrpc/null-id-error).",
    spec: "MCP basic: error codes MUST be integers; JSONRPCError",
  },
  only: { response: { kind: ["error"] } },
  create: (context) => ({
    response(m) {
      const s = context.session;
      const f = m.facts;
      if (!f.jsonrpcOk) return;
      const check = s.defs.envelopeChecks.error;
      // A null id alone is jsonrpc/null-id-error; with other problems, every envelope issue is reported here.
      if (f.id === null) {
        const issues = s.m.nullId;
        if (Array.isArray(issues)) s.reportIssues(issues, check.definition, context.meta, m.origin, m.dir, m.prefix, null, undefined);
        return;
      }
      s.m.envelope = context.check(check, "message", m, m.prefix, m.aboutId, undefined);
    },
  }),
});
