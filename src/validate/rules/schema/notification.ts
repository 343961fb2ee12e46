/** `schema/notification`: see `meta.description`. */
import { defineRule } from "../rule.js";

export default defineRule({
  meta: {
    id: "schema/notification",
    severity: "error",
    description: "A notification fails the schema definition of its method.",
    spec: "MCP schema: the method's notification definition",
  },
  only: { notification: { status: ["defined"] } },
  create: (context) => ({
    notification(m) {
      const s = context.session;
      context.check(s.m.info!.defCheck!, "message", m, m.prefix, undefined, m.facts.method, s.m.envelope);
    },
  }),
});
