/** `session/initialized-after-result`: see `meta.description`. */
import { defineRule } from "../rule.js";
import type { Subject } from "../rule.js";

export default defineRule({
  meta: {
    id: "session/initialized-after-result",
    severity: "error",
    description: "notifications/initialized sent before the initialize result, or missing before the client's first operation.",
    spec: "MCP lifecycle: after successful initialization, the client MUST send an initialized notification",
  },
  only: { notification: { methods: ["notifications/initialized"] } },
  create: (context) => {
    /** A client operation after the result without the notification was reported (once a session). */
    let missingReported = false;
    /** The client's notifications/initialized (also sent with an id) before the initialize result. */
    const tooEarly = (m: Subject): void => {
      const s = context.session;
      if (s.ctx.bidirectional && s.phase === "sent") context.report(m.origin, m.dir, "notifications/initialized sent before the initialize result", undefined, m.facts.method);
    };
    return {
      request(m) {
        const s = context.session;
        if (s.m.initialized) {
          tooEarly(m);
          return;
        }
        const method = m.facts.method;
        if (!s.m.lifecycle || s.phase !== "answered" || !s.ctx.bidirectional || method === "ping" || m.dir !== "c2s") return;
        if (s.initializedSent || missingReported) return;
        missingReported = true;
        context.report(m.origin, m.dir, `client sent ${method} after the initialize result without sending notifications/initialized first`, m.aboutId, method);
      },
      notification(m) {
        if (context.session.m.initialized) tooEarly(m);
      },
    };
  },
});
