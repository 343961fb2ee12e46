/**
 * Keeps every line the bridge writes within the documented line limit (16 MiB by default, the
 * same cap as inbound lines: STDIO_MAX_LINE_BYTES in src/framing/line-splitter.ts, README "Protocol versions and methods").
 *
 * A response whose serialized line is too long is replaced by a `-32603` error for the same id
 * ("result of N bytes exceeds the 16 MiB line limit"); a too-long notification is dropped (it
 * has no id to answer). In a batch the largest elements are replaced the same way until it fits.
 */
import { ErrorCode } from "./errors.js";
import { errorResponse, type OutboundLine, type OutboundMessage } from "./message.js";
import { serialize } from "./serialize.js";

const MIB = 1024 * 1024;

/** `16 MiB` for whole MiB, else `N-byte`. */
export function formatLineLimit(maxBytes: number): string {
  return maxBytes % MIB === 0 ? `${maxBytes / MIB} MiB` : `${maxBytes}-byte`;
}

/** UTF-8 size of `text`, without encoding it when its length alone decides against `maxBytes`. */
function exceeds(text: string, maxBytes: number): number | undefined {
  if (text.length * 3 <= maxBytes) return undefined; // at most 3 bytes per UTF-16 unit
  const bytes = Buffer.byteLength(text, "utf8");
  return bytes > maxBytes ? bytes : undefined;
}

function replacement(message: OutboundMessage, bytes: number, maxBytes: number): OutboundMessage | undefined {
  if (!("id" in message) || message.id === undefined) return undefined; // a notification: drop it
  const what = "result" in message ? "result" : "error response";
  return errorResponse(message.id ?? null, ErrorCode.InternalError, `Internal error: ${what} of ${bytes} bytes exceeds the ${formatLineLimit(maxBytes)} line limit`, {
    bytes,
    maxLineBytes: maxBytes,
  });
}

/** What to write in place of a line. */
export interface FittedLine {
  /** The line to write, or undefined when nothing is left to write. */
  message?: OutboundLine;
  /** Its JSON (no newline), when there is a message. */
  text?: string;
  /** Byte size of the original line when it was over the limit. */
  oversizedBytes?: number;
}

/**
 * Returns `message` (with its JSON `text`) unchanged when the line fits in `maxBytes`, else what
 * to write in its place (see the module comment).
 */
export function fitOutboundLine(message: OutboundLine, text: string, maxBytes: number): FittedLine {
  const bytes = exceeds(text, maxBytes);
  if (bytes === undefined) return { message, text };
  if (Array.isArray(message)) {
    // Replace the largest elements until the batch line fits.
    const fitted = [...message];
    const sizes = fitted.map((m) => Buffer.byteLength(serialize(m), "utf8"));
    let total = sizes.reduce((a, b) => a + b, 0) + Math.max(0, fitted.length - 1) + 2;
    const order = sizes.map((_, i) => i).sort((a, b) => sizes[b]! - sizes[a]!);
    for (const i of order) {
      if (total <= maxBytes) break;
      const r = replacement(fitted[i]!, sizes[i]!, maxBytes) as (typeof fitted)[number];
      fitted[i] = r;
      total += Buffer.byteLength(serialize(r), "utf8") - sizes[i]!;
    }
    return { message: fitted, text: serialize(fitted), oversizedBytes: bytes };
  }
  const replaced = replacement(message, bytes, maxBytes);
  if (!replaced) return { oversizedBytes: bytes };
  return { message: replaced, text: serialize(replaced), oversizedBytes: bytes };
}
