/**
 * Reader for MCP client logs in the Claude Desktop `mcp*.log` style, as written and as pasted:
 *
 *   2025-06-18T10:00:00.000Z [server-name] [info] Message from client: {"jsonrpc":...} { metadata: undefined }
 *   [server-name] [info] Message from server: {"jsonrpc":...}
 *   > [info] Message from client: {
 *   >   "jsonrpc": "2.0", ...
 *   > }
 *
 * The grammar of a line ({@link claudeLine}, shared with format detection so that the two cannot
 * disagree): optional pasting marks (leading spaces, `>` quote markers, backticks), an optional
 * ISO-8601 timestamp, one or more bracket groups (a log level and a server name, either order),
 * then `Message from client|server:` and a JSON body. The bracket group that is not a log level
 * names the server, and each server is its own session (`mcp.log` interleaves all servers). The
 * body is cut out of the rest of the line with a string-aware bracket scanner, so trailing text
 * such as `{ metadata: undefined }` is ignored; a body not closed on its line continues on the
 * next lines (pasting marks removed) until it closes, for at most {@link MAX_BODY_LINES} lines.
 *
 * A log line with a key=value `method=` and no body (the newer Claude Desktop log, which logs
 * `method="tools/list" id=1` only) carries nothing to check: the first one is handed on as
 * `input/unsupported-format` (the file's one finding, exit code 2, when the file holds no message
 * with a body; see `FileState`), and the others are skipped. Every other line is skipped and
 * counted.
 */
import type { Origin } from "../checker.js";
import type { Direction } from "../types.js";
import { parseErrorText, type Dispatch, type LineConsumer } from "./dispatch.js";

const LEVEL_NAMES = "trace|debug|info|notice|warn|warning|error|fatal|critical";
const LEVELS = new Set(LEVEL_NAMES.split("|"));

/** Pasting marks before a line: spaces, `>` quote markers, backticks. */
const PASTE_MARKS = /^(?:[ \t]*>)*[ \t]*`*/;
/** An ISO-8601 timestamp (date, time, optional fraction and zone) and the space after it. */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\s+/;
/** The bracket groups after the timestamp. */
const GROUPS = /^(?:\[[^\]]*\]\s*)+/;
/** What follows the groups on a message line; groups: 1 client|server, 2 the body and the rest. */
const MESSAGE = /^Message from (client|server):\s?(.*)$/;
/** A key=value method on a line without a body (the newer log format). */
const KEY_VALUE_METHOD = /(?:^|\s)method=("?)([^\s"]+)\1/;
const LEVEL_GROUP = new RegExp(`\\[(?:${LEVEL_NAMES})\\]`, "i");

/** Lines a body may span before the reader gives up on it (memory stays bounded). */
export const MAX_BODY_LINES = 10_000;

/** What the grammar finds on one line of a Claude log (see the module comment). */
export type ClaudeLine =
  { kind: "message"; session: string | undefined; dir: Direction; rest: string; ts?: string } | { kind: "bodiless"; session: string | undefined; method: string } | { kind: "log" };

/** `text` without the marks pasting adds before a line (spaces, `> `, backticks) and trailing backticks. */
export function unpasted(text: string): string {
  const m = PASTE_MARKS.exec(text);
  let s = m === null ? text : text.slice(m[0].length);
  let end = s.length;
  while (end > 0 && (s.charCodeAt(end - 1) === 0x60 /* ` */ || s.charCodeAt(end - 1) === 0x20 || s.charCodeAt(end - 1) === 0x0d)) end--;
  if (end < s.length) s = s.slice(0, end);
  return s;
}

/**
 * Parses one line of a Claude log: a message line (with its server and direction, and the text
 * after `Message from ...:`), a body-less line of the newer format, another log line with the
 * `<timestamp> [name] [level]` prefix, or undefined when the line is none of these.
 */
export function claudeLine(text: string): ClaudeLine | undefined {
  let s = unpasted(text);
  const ts = TIMESTAMP.exec(s);
  if (ts !== null) s = s.slice(ts[0].length);
  const g = GROUPS.exec(s);
  if (g === null) return undefined;
  const groups = g[0];
  const after = s.slice(groups.length);
  const session = serverName(groups);
  const m = MESSAGE.exec(after);
  if (m !== null) {
    const rest = m[2]!;
    const body = rest.trimStart();
    const message: ClaudeLine = { kind: "message", session, dir: m[1] === "client" ? "c2s" : "s2c", rest };
    if (ts !== null) message.ts = ts[0].trim();
    // A JSON body; or none, and then a body-less line of the newer format, or a body that is no JSON (a parse error).
    if (body.startsWith("{") || body.startsWith("[")) return message;
    const kv = KEY_VALUE_METHOD.exec(after);
    return kv !== null ? { kind: "bodiless", session, method: kv[2]! } : message;
  }
  const level = LEVEL_GROUP.test(groups);
  const kv = ts !== null || level ? KEY_VALUE_METHOD.exec(after) : null;
  if (kv !== null) return { kind: "bodiless", session, method: kv[2]! };
  return ts !== null && level ? { kind: "log" } : undefined;
}

/** A body being read over several lines. */
interface OpenBody {
  line: number;
  ts: string | undefined;
  session: string | undefined;
  dir: Direction;
  text: string;
  scan: BodyScan;
  lines: number;
}

/** A line consumer for Claude Desktop MCP logs; see the module comment. */
export function claudeLogReader(out: Dispatch): LineConsumer {
  let open: OpenBody | undefined;
  let unsupportedReported = false;
  const origin = (line: number, ts: string | undefined): Origin => (ts !== undefined && out.times === true ? { line, ts } : { line });
  const close = (body: OpenBody, error: string): void => {
    out.unparsable(body.text, error, origin(body.line, body.ts), body.dir, body.session);
  };
  const deliver = (json: string, line: number, ts: string | undefined, dir: Direction, session: string | undefined): void => {
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch (err) {
      out.unparsable(json, parseErrorText(err), origin(line, ts), dir, session);
      return;
    }
    out.message(value, origin(line, ts), dir, session);
  };
  return {
    line(text, lineNo) {
      const parsed = claudeLine(text);
      if (open !== undefined) {
        if (parsed === undefined) {
          const part = unpasted(text);
          const end = open.scan.feed(part, 0);
          open.text += `\n${end < 0 ? part : part.slice(0, end)}`;
          open.lines++;
          if (end >= 0) {
            const body = open;
            open = undefined;
            deliver(body.text, body.line, body.ts, body.dir, body.session);
          } else if (open.lines >= MAX_BODY_LINES) {
            const body = open;
            open = undefined;
            close(body, `body not closed within ${MAX_BODY_LINES} lines`);
          }
          return;
        }
        // A new log line before the body closed: the body was cut short.
        const body = open;
        open = undefined;
        close(body, "body cut short by the next log line");
      }
      if (parsed === undefined || parsed.kind === "log") {
        out.skip();
        return;
      }
      if (parsed.kind === "bodiless") {
        if (!unsupportedReported) {
          unsupportedReported = true;
          out.problem(
            "input/unsupported-format",
            { line: lineNo },
            `this Claude log names methods (method="${parsed.method}") but carries no message bodies, so there is nothing to check; enable the logging of full messages, or record with \`serve --capture\``,
          );
        }
        out.skip();
        return;
      }
      const rest = parsed.rest;
      const start = firstNonSpace(rest);
      const scan = new BodyScan();
      const end = start < rest.length ? scan.feed(rest, start) : -1;
      if (end > 0) {
        deliver(rest.slice(start, end), lineNo, parsed.ts, parsed.dir, parsed.session);
        return;
      }
      if (scan.opened) {
        open = { line: lineNo, ts: parsed.ts, session: parsed.session, dir: parsed.dir, text: rest.slice(start), scan, lines: 1 };
        return;
      }
      deliver(rest.trim(), lineNo, parsed.ts, parsed.dir, parsed.session);
    },
    end() {
      if (open === undefined) return;
      const body = open;
      open = undefined;
      close(body, "the input ends inside this message body");
    },
  };
}

/** The bracket group that is not a log level: the server's name (undefined when there is none). */
function serverName(groups: string): string | undefined {
  for (const m of groups.matchAll(/\[([^\]]*)\]/g)) {
    const name = m[1]!.trim();
    if (!LEVELS.has(name.toLowerCase())) return name;
  }
  return undefined;
}

function firstNonSpace(s: string): number {
  let i = 0;
  while (i < s.length && (s[i] === " " || s[i] === "\t")) i++;
  return i;
}

/**
 * A string-aware bracket scanner over a JSON object or array that may span several lines:
 * {@link feed} returns the index just past the value's closing bracket on that line, or -1 when
 * the value is still open at the line's end (or, on the first line, when no `{`/`[` opens it).
 */
class BodyScan {
  opened = false;
  private depth = 0;
  private inString = false;
  private escaped = false;

  feed(s: string, start: number): number {
    let i = start;
    if (!this.opened) {
      const open = s.charCodeAt(start);
      if (open !== 0x7b /* { */ && open !== 0x5b /* [ */) return -1;
      this.opened = true;
    }
    for (; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 0x5c /* \ */) this.escaped = true;
        else if (c === 0x22 /* " */) this.inString = false;
        continue;
      }
      if (c === 0x22) this.inString = true;
      else if (c === 0x7b || c === 0x5b) this.depth++;
      else if (c === 0x7d || c === 0x5d) {
        this.depth--;
        if (this.depth === 0) return i + 1;
      }
    }
    return -1;
  }
}

/**
 * Index just past the JSON object or array that starts at `s[start]`, honouring strings and
 * escapes; -1 when `s[start]` does not open one or it is not closed on this line.
 */
export function jsonValueEnd(s: string, start: number): number {
  return new BodyScan().feed(s, start);
}
