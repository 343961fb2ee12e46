/** `schema/notification`: see `meta.description`. */
import { defineRule } from "../rule.js";

export default defineRule({
  meta: {
    id: "schema/notification",
    severity: "error",
    description: "A notification fails the schema definition of its method.",
    spec: "MCP schema: the method's notification definition",
  },
  create: (context) => ({
    notification(m) {
      const s = context.session;
      const info = s.m.info;
      if (info !== undefined && info.def!.kind !== "request") context.check(info.defCheck!, "message", m, m.prefix, undefined, m.facts.method, s.m.envelope);
    },
  }),
});
