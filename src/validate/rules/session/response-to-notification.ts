/** `session/response-to-notification`: see `meta.description`. */
import { defineRule } from "../rule.js";
import { arrow, other } from "../../session-state.js";

export default defineRule({
  meta: {
    id: "session/response-to-notification",
    severity: "error",
    description:
      "A response to a notification: a success response with a null/missing id, or an error response with a null id when the peer sent no unparseable/invalid message or batch its revision does not define (forbidden after 2025-03-26, optional in 2024-11-05). (A notification method sent with an id is a request: its kind-mismatch is the one finding, and an answer to it is fine.)",
    spec: "JSON-RPC 2.0 §4.1: notifications MUST NOT be answered",
  },
  only: { response: { pairing: ["null-result", "null-error"] } },
  create: (context) => ({
    response(m) {
      const s = context.session;
      const from = other(m.dir);
      // (a result without any id: the envelope check's finding is the one; with id null, both)
      if (s.m.pairing === "null-result" && (m.facts.id === null || s.m.envelope === undefined)) {
        context.report(m.origin, m.dir, "a result without a request id can only answer a notification; notifications MUST NOT be answered", m.aboutId);
      } else if (s.m.pairing === "null-error" && s.s.notified[from]) {
        context.report(
          m.origin,
          m.dir,
          `error response with a null id, but the ${arrow(from)} side sent no unparseable or invalid message to reject; notifications MUST NOT be answered`,
          m.aboutId,
        );
      }
    },
  }),
});
