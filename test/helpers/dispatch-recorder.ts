/**
 * A {@link Dispatch} that records every reader event as a JSON string (values compared
 * structurally, strings in full), for tests that compare two ways of reading the same line.
 */
import type { Dispatch } from "../../src/validate/readers/dispatch.js";

export function dispatchRecorder(): { out: Dispatch; events: string[] } {
  const events: string[] = [];
  const out: Dispatch = {
    message: (value, origin, dir, session) => void events.push(JSON.stringify(["message", value, origin, dir, session ?? null])),
    unparsable: (raw, error, origin, dir, session) => void events.push(JSON.stringify(["unparsable", raw, error, origin, dir, session ?? null])),
    problem: (rule, origin, message) => void events.push(JSON.stringify(["problem", rule, origin, message])),
    skip: () => void events.push("skip"),
  };
  return { out, events };
}
