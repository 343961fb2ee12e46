/** `schema/unknown-method`: see `meta.description`. */
import { defineRule } from "../rule.js";

export default defineRule({
  meta: {
    id: "schema/unknown-method",
    severity: "warning",
    description: "The method is not defined by the protocol version's schema (custom or newer method).",
    spec: "MCP schema (custom methods are allowed: a warning)",
  },
  only: { request: { status: ["unknown"] }, notification: { status: ["unknown"] } },
  create: (context) => ({
    request(m) {
      context.report(m.origin, m.dir, `method ${m.facts.method} is not defined by ${context.session.schemaLabel()}`, m.aboutId, m.facts.method);
    },
    notification(m) {
      context.report(m.origin, m.dir, `method ${m.facts.method} is not defined by ${context.session.schemaLabel()}`, undefined, m.facts.method);
    },
  }),
});
