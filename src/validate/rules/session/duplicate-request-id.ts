/** `session/duplicate-request-id`: see `meta.description`. */
import { defineRule } from "../rule.js";
import { isId } from "../../facts.js";
import { showId } from "../../session-state.js";

export default defineRule({
  meta: {
    id: "session/duplicate-request-id",
    severity: "error",
    description: "A request id reused by the same sender while the earlier request is still in flight.",
    spec: "MCP basic: the request ID MUST NOT have been previously used by the requestor within the same session",
  },
  create: (context) => ({
    request(m) {
      const s = context.session;
      const earlier = s.m.earlier;
      if (!isId(m.facts.id) || !s.ctx.bidirectional || earlier === undefined) return;
      context.report(
        m.origin,
        m.dir,
        `request id ${showId(m.facts.id)} reused while the ${earlier.method} request with that id (line ${earlier.line}) is still in flight`,
        m.aboutId,
        m.facts.method,
      );
    },
  }),
});
