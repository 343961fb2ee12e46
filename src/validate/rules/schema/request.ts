/** `schema/request`: see `meta.description`. */
import { defineRule } from "../rule.js";

export default defineRule({
  meta: {
    id: "schema/request",
    severity: "error",
    description: "A request fails the schema definition of its method.",
    spec: "MCP schema: the method's request definition",
  },
  only: { request: { status: ["defined"] } },
  create: (context) => ({
    request(m) {
      const s = context.session;
      context.check(s.m.info!.defCheck!, "message", m, m.prefix, m.aboutId, m.facts.method, s.m.envelope);
    },
  }),
});
