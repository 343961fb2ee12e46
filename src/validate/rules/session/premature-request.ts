/** `session/premature-request`: see `meta.description`. */
import { defineRule } from "../rule.js";

export default defineRule({
  meta: {
    id: "session/premature-request",
    severity: "warning",
    description: "Client request other than ping before the initialize result, or server request other than ping before notifications/initialized.",
    spec: "MCP lifecycle: the client SHOULD NOT send requests other than pings before the server has responded to initialize; the server SHOULD NOT send requests other than pings and logging before the initialized notification",
  },
  create: (context) => ({
    request(m) {
      const s = context.session;
      const method = m.facts.method;
      if (!s.m.lifecycle || s.phase === "pre" || !s.ctx.bidirectional || method === "ping") return;
      if (m.dir === "c2s") {
        if (s.phase === "sent") context.report(m.origin, m.dir, `client sent ${method} before the server answered initialize`, m.aboutId, method);
      } else if (!s.initializedSent && s.phase !== "failed") {
        context.report(m.origin, m.dir, `server sent ${method} before the client's notifications/initialized`, m.aboutId, method);
      }
    },
  }),
});
