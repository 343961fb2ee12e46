/** `session/unmatched-response`: see `meta.description`. */
import { defineRule } from "../rule.js";
import { arrow, other, showId } from "../../session-state.js";

export default defineRule({
  meta: {
    id: "session/unmatched-response",
    severity: "error",
    description: "A response whose id matches no in-flight request of the other side.",
    spec: "MCP basic: responses MUST include the same ID as the request they correspond to; JSON-RPC 2.0 §5",
  },
  only: { response: { pairing: ["null-error", "answered", "unseen"] } },
  create: (context) => ({
    response(m) {
      const s = context.session;
      const from = other(m.dir);
      const pairing = s.m.pairing;
      if (pairing === "null-error" && !s.s.notified[from]) context.report(m.origin, m.dir, "error response with a null id answers no invalid message", m.aboutId);
      else if (pairing === "answered") {
        context.report(m.origin, m.dir, `response id ${showId(m.facts.id)}: the ${arrow(from)} request with this id (line ${s.m.firstLine}) was already answered`, m.aboutId);
      } else if (pairing === "unseen") context.report(m.origin, m.dir, `response id ${showId(m.facts.id)} matches no ${arrow(from)} request`, m.aboutId);
    },
  }),
});
