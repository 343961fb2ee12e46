/** `session/reused-request-id`: see `meta.description`. */
import { defineRule } from "../rule.js";
import { isId } from "../../facts.js";
import { arrow, showId } from "../../session-state.js";

export default defineRule({
  meta: {
    id: "session/reused-request-id",
    severity: "error",
    description: "A request id the same sender already used earlier in the session.",
    spec: "MCP basic: the id MUST NOT have been previously used by the requestor within the same session",
  },
  create: (context) => ({
    request(m) {
      const s = context.session;
      const firstLine = s.m.firstLine;
      if (!isId(m.facts.id) || (s.ctx.bidirectional && s.m.earlier !== undefined) || firstLine === undefined) return;
      context.report(m.origin, m.dir, `request id ${showId(m.facts.id)} was already used by the ${arrow(m.dir)} side at line ${firstLine}`, m.aboutId, m.facts.method);
    },
  }),
});
