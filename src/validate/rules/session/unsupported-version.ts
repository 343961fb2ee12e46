/** `session/unsupported-version`: see `meta.description`. */
import { defineRule } from "../rule.js";

export default defineRule({
  meta: {
    id: "session/unsupported-version",
    severity: "warning",
    description: "The negotiated protocol version has no validators here; another version is used.",
    spec: "MCP lifecycle: Version Negotiation (a limit of this tool: a warning)",
  },
  create: (context) => ({
    version(e) {
      if (e.unsupported !== undefined) context.report(e.origin, e.dir, e.unsupported, e.aboutId, e.method, e.pointer);
    },
  }),
});
