/** `session/wrong-direction`: see `meta.description`. */
import { defineRule } from "../rule.js";
import { arrow, other } from "../../session-state.js";
import type { Subject } from "../rule.js";

export default defineRule({
  meta: {
    id: "session/wrong-direction",
    severity: "error",
    description: "A method defined only for the other direction (e.g. a client sending sampling/createMessage).",
    spec: "MCP schema: ClientRequest / ServerRequest, ClientNotification / ServerNotification",
  },
  only: { request: { status: ["other-direction"] }, notification: { status: ["other-direction"] } },
  create: (context) => {
    const report = (m: Subject, aboutId: Subject["aboutId"]): void => {
      const method = m.facts.method;
      context.report(m.origin, m.dir, `${method} is only defined ${arrow(other(m.dir))}, but was sent ${arrow(m.dir)}`, aboutId, method);
    };
    return {
      request(m) {
        report(m, m.aboutId);
      },
      notification(m) {
        report(m, undefined);
      },
    };
  },
});
