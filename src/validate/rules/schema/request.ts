/** `schema/request`: see `meta.description`. */
import { defineRule } from "../rule.js";

export default defineRule({
  meta: {
    id: "schema/request",
    severity: "error",
    description: "A request fails the schema definition of its method.",
    spec: "MCP schema: the method's request definition",
  },
  create: (context) => ({
    request(m) {
      const s = context.session;
      const info = s.m.info;
      if (info !== undefined && info.def!.kind !== "notification") context.check(info.defCheck!, "message", m, m.prefix, m.aboutId, m.facts.method, s.m.envelope);
    },
  }),
});
