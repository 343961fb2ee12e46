/** `session/cancel-initialize`: see `meta.description`. */
import { defineRule } from "../rule.js";

export default defineRule({
  meta: {
    id: "session/cancel-initialize",
    severity: "error",
    description: "notifications/cancelled for the initialize request.",
    spec: "MCP cancellation: the initialize request MUST NOT be cancelled by clients",
  },
  only: { notification: { methods: ["notifications/cancelled"] } },
  create: (context) => ({
    notification(m) {
      // Invalid cancellation: the receiver must ignore it, so answering stays correct.
      const target = context.session.m.cancelled;
      if (target?.method === "initialize") context.report(m.origin, m.dir, "the initialize request MUST NOT be cancelled", target.id, m.facts.method);
    },
  }),
});
