/** `json/parse-error`: see `meta.description`. */
import { defineRule } from "../rule.js";

export default defineRule({
  meta: {
    id: "json/parse-error",
    severity: "error",
    description: "A message is not valid JSON.",
    spec: "MCP basic: messages MUST be JSON-RPC 2.0, UTF-8 encoded; JSON-RPC 2.0 §5.1 (-32700)",
  },
  create: (context) => ({
    unparsable(m, raw, error) {
      const excerpt = raw.length > 80 ? `${raw.slice(0, 77)}...` : raw;
      context.report(m.origin, m.dir, `not valid JSON (${error}): ${JSON.stringify(excerpt)}`);
    },
  }),
});
