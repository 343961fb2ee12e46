/** `session/version-mismatch`: see `meta.description`. */
import { defineRule } from "../rule.js";

export default defineRule({
  meta: {
    id: "session/version-mismatch",
    severity: "warning",
    description: "The negotiated protocol version differs from --protocol-version (the forced version is used).",
    spec: "MCP lifecycle: Version Negotiation (a check of --protocol-version: a warning)",
  },
  create: (context) => ({
    version(e) {
      if (e.forced === undefined || e.version === e.forced) return;
      const what = e.how === "named" ? "the session's requests name" : "the session negotiated";
      context.report(e.origin, e.dir, `${what} protocol version ${e.version}; checking against --protocol-version ${e.forced}`, e.aboutId, e.method, e.pointer);
    },
  }),
});
