/**
 * Cursor pagination of MCP list results (MCP "Utilities / Pagination": `params.cursor` in,
 * `nextCursor` out; cursors are opaque to the client; an invalid cursor SHOULD be answered with
 * `-32602`).
 *
 * The orchestrator answers every list in one message, so the bridge pages the full list itself.
 * A cursor is `base64url(JSON {"l": <list kind>, "o": <offset>})`: stateless (any page can be
 * fetched again), bound to one list kind (a `tools/list` cursor is refused by `prompts/list`).
 * Items are paged in the orchestrator's order; a list that changes between pages may skip or
 * repeat items, as with any offset cursor.
 */
import { ErrorCode, JsonRpcError } from "../jsonrpc/errors.js";

/** Thrown by {@link paginate} for a cursor this module did not issue for that list kind: `-32602`. */
export class InvalidCursorError extends JsonRpcError {
  override readonly name = "InvalidCursorError";
  constructor(message: string) {
    super(ErrorCode.InvalidParams, message);
  }
}

/** One page of a list. */
export interface Page<T> {
  items: T[];
  /** Present when more items follow. */
  nextCursor?: string;
}

/** Default number of items per page. */
export const DEFAULT_PAGE_SIZE = 100;

/**
 * The opaque cursor for the page of `kind` starting at `offset`.
 * @param kind list name, e.g. `tools`
 * @param offset zero-based index of the page's first item
 */
export function encodeCursor(kind: string, offset: number): string {
  return Buffer.from(JSON.stringify({ l: kind, o: offset }), "utf8").toString("base64url");
}

/**
 * The offset encoded in `cursor` for list `kind`.
 * @throws InvalidCursorError when `cursor` is not one of ours, belongs to another list, or
 *   holds a negative / non-integer offset
 */
export function decodeCursor(kind: string, cursor: string): number {
  let value: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error("not base64url");
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw new InvalidCursorError(`Invalid cursor ${JSON.stringify(cursor)}: not issued by this server`);
  }
  const v = value as { l?: unknown; o?: unknown } | null;
  if (v === null || typeof v !== "object" || v.l !== kind) {
    throw new InvalidCursorError(`Invalid cursor ${JSON.stringify(cursor)}: not a cursor of the ${kind} list`);
  }
  if (typeof v.o !== "number" || !Number.isSafeInteger(v.o) || v.o < 0) {
    throw new InvalidCursorError(`Invalid cursor ${JSON.stringify(cursor)}: bad offset`);
  }
  return v.o;
}

/**
 * The page of `items` that `cursor` designates (the first page when `cursor` is undefined).
 * An offset past the end yields an empty last page.
 * @param kind list name the cursor must belong to
 * @param pageSize items per page (positive integer)
 * @throws InvalidCursorError see {@link decodeCursor}
 * @throws RangeError when `pageSize` is not a positive integer
 */
export function paginate<T>(items: readonly T[], kind: string, cursor: string | undefined, pageSize: number): Page<T> {
  if (!Number.isInteger(pageSize) || pageSize < 1) throw new RangeError(`page size must be a positive integer, got ${pageSize}`);
  const offset = cursor === undefined ? 0 : decodeCursor(kind, cursor);
  const end = offset + pageSize;
  const page: Page<T> = { items: items.slice(offset, end) };
  if (end < items.length) page.nextCursor = encodeCursor(kind, end);
  return page;
}
