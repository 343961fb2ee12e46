/** `session/unknown-progress-token`: see `meta.description`. */
import { defineRule } from "../rule.js";
import { arrow, other, showId } from "../../session-state.js";

export default defineRule({
  meta: {
    id: "session/unknown-progress-token",
    severity: "error",
    description: "A progress notification whose token belongs to no in-flight request of the other side.",
    spec: "MCP progress: progress notifications MUST only reference tokens that were provided in an active request",
  },
  only: { notification: { methods: ["notifications/progress"] } },
  create: (context) => ({
    notification(m) {
      const s = context.session;
      const token = s.m.progressToken;
      // (unknown: may belong to a request on a dropped line, or before the excerpt)
      if (token === undefined || s.m.progressOf !== undefined || s.lostLines > 0 || s.ctx.partial === true) return;
      context.report(m.origin, m.dir, `progress token ${showId(token)} belongs to no in-flight ${arrow(other(m.dir))} request`, undefined, m.facts.method, "/params/progressToken");
    },
  }),
});
