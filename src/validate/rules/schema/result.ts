/** `schema/result`: see `meta.description`. */
import { defineRule } from "../rule.js";
import { other } from "../../session-state.js";

/** Pointers of envelope issues inside `/result`, relative to the result (undefined when none). */
function insideResult(pointers: ReadonlySet<string> | undefined): ReadonlySet<string> | undefined {
  if (pointers === undefined) return undefined;
  const inside = new Set<string>();
  for (const p of pointers) if (p === "/result" || p.startsWith("/result/")) inside.add(p.slice("/result".length));
  return inside.size === 0 ? undefined : inside;
}

export default defineRule({
  meta: {
    id: "schema/result",
    severity: "error",
    description: "A result fails the result definition of the request it answers.",
    spec: "MCP schema: the result definition of the request answered (a union where the response definition declares one: the branch its resultType names), with the MUST of InputRequiredResult's description (at least one of inputRequests or requestState)",
  },
  create: (context) => ({
    result(m) {
      const s = context.session;
      const pending = s.m.pending!;
      const resultCheck = s.defs.method(other(m.dir), pending.method).resultCheck;
      if (resultCheck !== undefined) context.check(resultCheck, "result", m, `${m.prefix}/result`, m.aboutId, pending.method, insideResult(s.m.envelope));
    },
  }),
});
