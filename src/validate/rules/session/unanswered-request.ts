/** `session/unanswered-request`: see `meta.description`. */
import { defineRule } from "../rule.js";
import { arrow, showId } from "../../session-state.js";

export default defineRule({
  meta: {
    id: "session/unanswered-request",
    severity: "error",
    description: "A request that was neither answered nor cancelled by the end of the session.",
    spec: "JSON-RPC 2.0 §5: when a rpc call is made, the Server MUST reply with a Response (use --partial for an excerpt that ends mid-request)",
  },
  create: (context) => ({
    end() {
      const s = context.session;
      if (!s.ctx.bidirectional || s.ctx.partial === true) return; // (an excerpt may end mid-request)
      for (const dir of ["c2s", "s2c"] as const) {
        for (const p of s.s.inflight[dir].values()) {
          // A dropped line may have answered it; a subscriptions/listen stream may stay open to the end.
          if (p.cancelled || p.notificationMethod || s.lostLines > 0 || p.method === "subscriptions/listen") continue;
          const origin = p.location === undefined ? { line: p.line } : { line: p.line, location: p.location };
          context.report(origin, dir, `${arrow(dir)} request ${p.method} id ${showId(p.id)} was never answered`, p.id, p.method);
        }
      }
    },
  }),
});
