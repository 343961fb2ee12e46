/** `session/unadvertised-notification`: see `meta.description`. */
import { CAPABILITY_NOTIFICATION_METHODS } from "../../capabilities.js";
import { defineRule } from "../rule.js";

export default defineRule({
  meta: {
    id: "session/unadvertised-notification",
    severity: "warning",
    description: "A notification whose capability (listChanged, subscribe, logging) the sender did not advertise.",
    spec: "MCP lifecycle: both parties SHOULD only use capabilities that were successfully negotiated",
  },
  only: { notification: { methods: CAPABILITY_NOTIFICATION_METHODS } },
  create: (context) => ({
    notification(m) {
      const req = context.session.missingCapability(m.dir, "notification", m.facts.method);
      if (req !== undefined)
        context.report(m.origin, m.dir, `${m.facts.method} sent without advertising the ${req.side} capability ${req.path.join(".")}`, undefined, m.facts.method);
    },
  }),
});
