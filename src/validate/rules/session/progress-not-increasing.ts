/** `session/progress-not-increasing`: see `meta.description`. */
import { defineRule } from "../rule.js";
import { showId } from "../../session-state.js";

export default defineRule({
  meta: {
    id: "session/progress-not-increasing",
    severity: "error",
    description: "A progress value not greater than the previous one for the same token.",
    spec: "MCP progress: the progress value MUST increase with each notification",
  },
  only: { notification: { methods: ["notifications/progress"] } },
  create: (context) => ({
    notification(m) {
      const state = context.session.m.progressOf;
      const value = m.facts.progress;
      if (state === undefined || typeof value !== "number" || state.last === undefined || value > state.last) return;
      context.report(
        m.origin,
        m.dir,
        `progress ${value} for token ${showId(m.facts.token)} does not increase (previous ${state.last})`,
        state.id,
        m.facts.method,
        "/params/progress",
      );
    },
  }),
});
