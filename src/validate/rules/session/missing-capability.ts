/** `session/missing-capability`: see `meta.description`. */
import { CAPABILITY_REQUEST_METHODS } from "../../capabilities.js";
import { defineRule } from "../rule.js";

export default defineRule({
  meta: {
    id: "session/missing-capability",
    severity: "warning",
    description: "A request that needs a capability the peer did not advertise in the initialize exchange (or the server/discover result).",
    spec: "MCP lifecycle: both parties SHOULD only use capabilities that were successfully negotiated",
  },
  only: { request: { methods: CAPABILITY_REQUEST_METHODS, status: ["defined", "other-direction", "unknown"] } },
  create: (context) => ({
    request(m) {
      const s = context.session;
      const req = s.missingCapability(m.dir, "request", m.facts.method);
      if (req === undefined) return;
      const source = s.era === "stateless" ? "server/discover result" : "initialize exchange";
      context.report(m.origin, m.dir, `${m.facts.method} needs the ${req.side} capability ${req.path.join(".")}, which the ${source} did not advertise`, m.aboutId, m.facts.method);
    },
  }),
});
