/**
 * The session checker's dispatch tables: which rule handlers an event reaches, worked out from the
 * rules' filters (`only` in `defineRule`, rules/rule.ts) once per session and kept, so that a
 * message calls no handler that has nothing to say about it.
 */
import type { MethodFilter, MethodStatus, ResponseFilter, Subject } from "./rules/rule.js";
import type { Pairing } from "./session-state.js";

export type MethodHandler = (s: Subject) => void;

/** The {@link MethodStatus}es, indexed as the checker's dispatch tables are. */
const STATUSES: readonly MethodStatus[] = ["defined", "other-kind", "other-direction", "unknown"];
export const DEFINED = 0;
export const OTHER_KIND = 1;
export const OTHER_DIRECTION = 2;
export const UNKNOWN = 3;
/** Methods remembered per status in one dispatch table (custom traffic could invent unlimited names). */
const MAX_TABLE_METHODS = 4096;

/** The {@link Pairing}s, indexed as the checker's response dispatch table is. */
const PAIRINGS: readonly Pairing[] = ["budget", "null-result", "null-error", "quiet", "answered", "unseen", "paired"];
export const PAIRING_INDEX = new Map(PAIRINGS.map((p, i) => [p, i]));

/**
 * The `response` handlers of one session per (pairing, result or error), in {@link EVENT_ORDER}:
 * those whose rule's {@link ResponseFilter} lets such a response through.
 */
export function responseTable(entries: ReadonlyArray<{ handler: MethodHandler; filter: ResponseFilter | undefined }>): MethodHandler[][] {
  const table: MethodHandler[][] = [];
  for (const pairing of PAIRINGS) {
    for (const kind of ["result", "error"] as const) {
      table.push(
        entries
          .filter(({ filter }) => (filter?.kind === undefined || filter.kind.includes(kind)) && (filter?.pairing === undefined || filter.pairing.includes(pairing)))
          .map((e) => e.handler),
      );
    }
  }
  return table;
}

/**
 * The handlers of one method event (`request` or `notification`) for one session, in
 * {@link EVENT_ORDER}: per method status and method, the handlers whose rule's {@link MethodFilter}
 * lets the message through, worked out on a method's first message and kept.
 */
export class MethodDispatch {
  private readonly tables = STATUSES.map(() => new Map<string, MethodHandler[]>());
  /** The last answer (most traffic repeats one method): no table lookup for it. */
  private lastStatus = -1;
  private lastMethod = "";
  private lastList: MethodHandler[] = [];

  constructor(private readonly entries: ReadonlyArray<{ handler: MethodHandler; filter: MethodFilter | undefined }>) {}

  handlers(status: number, method: string): MethodHandler[] {
    if (status === this.lastStatus && method === this.lastMethod) return this.lastList;
    const table = this.tables[status]!;
    let list = table.get(method);
    if (list === undefined) {
      const name = STATUSES[status]!;
      list = [];
      for (const { handler, filter } of this.entries) {
        if (filter?.methods !== undefined && !filter.methods.includes(method)) continue;
        if (filter?.status !== undefined && !filter.status.includes(name)) continue;
        list.push(handler);
      }
      if (table.size < MAX_TABLE_METHODS) table.set(method, list);
    }
    this.lastStatus = status;
    this.lastMethod = method;
    this.lastList = list;
    return list;
  }
}
