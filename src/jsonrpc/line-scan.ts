/**
 * One pass over an inbound line before `JSON.parse`, without recursion: the nesting depth (so a
 * line nested deeper than {@link MAX_NESTING_DEPTH} is refused before anything recursive sees
 * it) and the source text of the tokens whose exact value matters (request ids, see
 * ./request-id.ts).
 *
 * For each message of the line (the top-level object, or each element of a top-level array,
 * i.e. a JSON-RPC batch) it records the text of `id`, `params.requestId`
 * (`notifications/cancelled`) and `params._meta.progressToken` when they are strings or numbers.
 * Strings are skipped with `indexOf`, so a line made of a few large strings costs little.
 * The scan never throws; on text that is not JSON its output is meaningless (the caller parses
 * the line anyway and answers `-32700`).
 */

/**
 * Deepest nesting of arrays and objects accepted, both directions (inbound lines, results from
 * the orchestrator): `{}` is depth 1, `{"a":[1]}` depth 2.
 */
export const MAX_NESTING_DEPTH = 256;

/** Source texts of one message's exact tokens. */
export interface MessageTokens {
  id?: string;
  requestId?: string;
  progressToken?: string;
}

export interface LineScan {
  /** Whether the line nests deeper than the limit (the scan stopped there). */
  tooDeep: boolean;
  /**
   * Tokens per message: index 0 for a top-level object; index i for element i of a top-level
   * array. Entries of messages without such members are undefined.
   */
  messages: Array<MessageTokens | undefined>;
}

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;

/** Where in a message a member's value sits, by the keys leading to it. */
function slotOf(keys: readonly (string | undefined)[], base: number, depth: number): keyof MessageTokens | undefined {
  const rel = depth - base;
  const key = keys[depth];
  if (rel === 0) return key === "id" ? "id" : undefined;
  if (keys[base] !== "params") return undefined;
  if (rel === 1) return key === "requestId" ? "requestId" : undefined;
  if (rel === 2 && keys[base + 1] === "_meta") return key === "progressToken" ? "progressToken" : undefined;
  return undefined;
}

/**
 * The container kinds of {@link scanLine}, shared by every scan (a scan runs to its end without
 * yielding): a typed array of this size per line would be an allocation outside V8's heap. An
 * entry is written when its depth is entered, before it is read, so no scan sees another's.
 */
let sharedKinds = new Uint8Array(MAX_NESTING_DEPTH + 2);

/** Scans `text` (one line); see the module comment. */
export function scanLine(text: string, maxDepth: number = MAX_NESTING_DEPTH): LineScan {
  const messages: Array<MessageTokens | undefined> = [];
  const n = text.length;
  if (sharedKinds.length < maxDepth + 2) sharedKinds = new Uint8Array(maxDepth + 2);
  /** Container kind per depth (1 = object, 2 = array), 1-based. */
  const kinds = sharedKinds;
  /** Current member key per object depth, tracked for the first few levels only. */
  const keys: (string | undefined)[] = [];
  let depth = 0;
  /** Depth of the message objects' members: 1 for a top-level object, 2 in a batch. */
  let base = 0;
  let element = -1;
  /** In an object: the next string is a key. */
  let expectKey = false;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let end = text.indexOf('"', i + 1);
      while (end !== -1) {
        let slashes = 0;
        for (let k = end - 1; text.charCodeAt(k) === BACKSLASH; k--) slashes++;
        if (slashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      if (end === -1) end = n - 1;
      if (expectKey) {
        if (depth <= base + 2) keys[depth] = decodeKey(text, i, end);
        expectKey = false;
      } else {
        record(i, end + 1);
      }
      i = end + 1;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth === 1 && kinds[1] === 2) element++;
      depth++;
      if (depth > maxDepth) return { tooDeep: true, messages };
      kinds[depth] = c === OPEN_OBJECT ? 1 : 2;
      if (depth === 1) base = c === OPEN_OBJECT ? 1 : 2;
      if (c === OPEN_OBJECT) {
        expectKey = true;
        if (depth <= base + 2) keys[depth] = undefined;
      }
      i++;
      continue;
    }
    if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth > 0) depth--;
      expectKey = false;
      i++;
      continue;
    }
    if (c === COMMA) {
      expectKey = kinds[depth] === 1;
      i++;
      continue;
    }
    if (c === COLON || c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) {
      i++;
      continue;
    }
    // A number or a literal: up to the next delimiter.
    let end = i + 1;
    while (end < n) {
      const d = text.charCodeAt(end);
      if (d === COMMA || d === CLOSE_OBJECT || d === CLOSE_ARRAY || d === 0x20 || d === 0x09 || d === 0x0a || d === 0x0d || d === COLON) break;
      end++;
    }
    if (depth === 1 && kinds[1] === 2) element++;
    record(i, end);
    i = end;
  }
  return { tooDeep: false, messages };

  /** A string or scalar value spanning [start, end) at the current depth. */
  function record(start: number, end: number): void {
    if (depth === 1 && kinds[1] === 2 && text.charCodeAt(start) === QUOTE) element++;
    if (base === 0 || depth < base || depth > base + 2 || kinds[depth] !== 1) return;
    const slot = slotOf(keys, base, depth);
    if (slot === undefined) return;
    const index = base === 1 ? 0 : element;
    const tokens = (messages[index] ??= {});
    tokens[slot] = text.slice(start, end);
  }
}

/** A member key's characters (escapes decoded only when present). */
function decodeKey(text: string, start: number, end: number): string | undefined {
  const raw = text.slice(start + 1, end);
  if (!raw.includes("\\")) return raw;
  try {
    return JSON.parse(text.slice(start, end + 1)) as string;
  } catch {
    return undefined;
  }
}

/**
 * Whether a parsed value (a result from the orchestrator, before it is serialized) nests deeper
 * than `maxDepth`, checked with an explicit stack (no recursion).
 */
export function exceedsDepth(value: unknown, maxDepth: number = MAX_NESTING_DEPTH): boolean {
  if (value === null || typeof value !== "object") return false;
  const stack: Array<[object, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (d > maxDepth) return true;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const child of children) {
      if (child !== null && typeof child === "object") stack.push([child as object, d + 1]);
    }
  }
  return false;
}
