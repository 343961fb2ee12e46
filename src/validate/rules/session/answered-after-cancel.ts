/** `session/answered-after-cancel`: see `meta.description`. */
import { defineRule } from "../rule.js";

export default defineRule({
  meta: {
    id: "session/answered-after-cancel",
    severity: "warning",
    description: "A response to a request its sender had cancelled.",
    spec: "MCP cancellation: receivers of a cancellation SHOULD NOT send a response for the cancelled request",
  },
  only: { response: { pairing: ["paired"] } },
  create: (context) => ({
    response(m) {
      const pending = context.session.m.pending;
      if (pending === undefined || pending.notificationMethod || !pending.cancelled) return;
      context.report(m.origin, m.dir, `response to ${pending.method} (line ${pending.line}) after its sender cancelled it`, m.aboutId, pending.method);
    },
  }),
});
