/** `jsonrpc/kind-mismatch`: see `meta.description`. */
import { defineRule } from "../rule.js";
import { showId } from "../../session-state.js";

export default defineRule({
  meta: {
    id: "jsonrpc/kind-mismatch",
    severity: "error",
    description: "A notification method sent with an id (which makes it a request), or a request method sent without one (which makes it a notification).",
    spec: "MCP basic: requests MUST include an ID, notifications MUST NOT; JSON-RPC 2.0 §4",
  },
  only: { request: { status: ["other-kind"] }, notification: { status: ["other-kind"] } },
  create: (context) => ({
    request(m) {
      context.report(m.origin, m.dir, `${m.facts.method} is a notification but was sent with id ${showId(m.facts.id)}`, m.aboutId, m.facts.method, `${m.prefix}/id`);
    },
    notification(m) {
      context.report(m.origin, m.dir, `${m.facts.method} is a request but was sent without an id`, undefined, m.facts.method, m.prefix);
    },
  }),
});
