/** `jsonrpc/null-id-error`: see `meta.description`. */
import { defineRule } from "../rule.js";

export default defineRule({
  meta: {
    id: "jsonrpc/null-id-error",
    severity: "warning",
    description: "An otherwise well-formed error response with id null (JSON-RPC's answer to an unparseable request), which the MCP schema's error response does not allow.",
    spec: "MCP basic: the ID MUST NOT be null; JSON-RPC 2.0 §5 (id null MUST be used when the id could not be read): a warning, as the bridge's answer to such input is right by JSON-RPC",
  },
  only: { response: { kind: ["error"] } },
  create: (context) => ({
    response(m) {
      if (context.session.m.nullId !== "null-only") return;
      context.report(
        m.origin,
        m.dir,
        "error response with id null: allowed by JSON-RPC 2.0 for unparseable or invalid requests, but the MCP schema's error response needs a string or integer id",
        null,
        undefined,
        `${m.prefix}/id`,
      );
    },
  }),
});
