/** `session/initialize-first`: see `meta.description`. */
import { defineRule } from "../rule.js";
import type { Subject } from "../rule.js";

export default defineRule({
  meta: {
    id: "session/initialize-first",
    severity: "error",
    description: "A message before the client's initialize request (initialize-based versions; not in a stateless 2026-07-28 session).",
    spec: "MCP lifecycle: the initialization phase MUST be the first interaction between client and server",
  },
  create: (context) => {
    /** Reports the first message of each side before the initialize request (once per side). */
    const first = (m: Subject, what: string, aboutId: Subject["aboutId"]): void => {
      const s = context.session;
      if ((!s.ctx.bidirectional && m.dir === "s2c") || s.ctx.partial === true) return;
      if (s.initializeFirstReported[m.dir]) return;
      s.initializeFirstReported[m.dir] = true;
      context.report(
        m.origin,
        m.dir,
        m.dir === "c2s"
          ? `client sent ${what} before the initialize request (later ones are not reported)`
          : `server sent ${what} before the client's initialize request (later ones are not reported)`,
        aboutId,
        m.facts.method,
      );
    };
    return {
      request(m) {
        const s = context.session;
        if (s.m.lifecycle && s.phase === "pre") first(m, `request ${m.facts.method}`, m.aboutId);
      },
      notification(m) {
        const s = context.session;
        // (`initialize` without an id is an attempt at the initialize request: its kind-mismatch says it.)
        if (s.phase === "pre" && s.era !== "stateless" && !(m.facts.method === "initialize" && m.dir === "c2s")) first(m, `notification ${m.facts.method}`, undefined);
      },
    };
  },
});
