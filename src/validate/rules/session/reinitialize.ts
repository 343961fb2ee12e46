/** `session/reinitialize`: see `meta.description`. */
import { defineRule } from "../rule.js";

export default defineRule({
  meta: {
    id: "session/reinitialize",
    severity: "warning",
    description: "A second initialize request in one session (checking restarts with a fresh session).",
    spec: "MCP lifecycle (one initialization per session: a warning)",
  },
  create: (context) => ({
    restart(m) {
      if (!context.session.ctx.restartsExpected) context.report(m.origin, "c2s", "second initialize request; checking continues as a new session", undefined, "initialize");
    },
  }),
});
