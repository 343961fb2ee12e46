/** `schema/unknown-method`: see `meta.description`. */
import { defineRule } from "../rule.js";

export default defineRule({
  meta: {
    id: "schema/unknown-method",
    severity: "warning",
    description: "The method is not defined by the protocol version's schema (custom or newer method).",
    spec: "MCP schema (custom methods are allowed: a warning)",
  },
  create: (context) => ({
    request(m) {
      const s = context.session;
      if (s.m.info === undefined && !s.m.otherDirection)
        context.report(m.origin, m.dir, `method ${m.facts.method} is not defined by ${s.schemaLabel()}`, m.aboutId, m.facts.method);
    },
    notification(m) {
      const s = context.session;
      if (s.m.info === undefined && !s.m.otherDirection)
        context.report(m.origin, m.dir, `method ${m.facts.method} is not defined by ${s.schemaLabel()}`, undefined, m.facts.method);
    },
  }),
});
