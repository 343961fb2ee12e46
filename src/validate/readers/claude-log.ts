/**
 * Reader for MCP client logs in the Claude Desktop `mcp*.log` style:
 *
 *   2025-06-18T10:00:00.000Z [server-name] [info] Message from client: {"jsonrpc":...} { metadata: undefined }
 *   2025-06-18T10:00:00.100Z [server-name] [info] Message from server: {"jsonrpc":...} { metadata: undefined }
 *
 * The two bracket groups may come in either order; the one that is not a log level names the
 * server, and each server is its own session (`mcp.log` interleaves all servers). The JSON value
 * is cut out of the rest of the line with a string-aware bracket scanner, so trailing text such
 * as `{ metadata: undefined }` is ignored. Every other line is skipped and counted.
 */
import { parseErrorText, type Dispatch, type LineConsumer } from "./dispatch.js";

/** Matches a message line; groups: 1 bracket groups, 2 client|server, 3 the rest. */
export const CLAUDE_LOG_LINE = /^\S+\s+((?:\[[^\]]*\]\s*)+)Message from (client|server):\s?(.*)$/;

/**
 * The prefix of every line of such a log: an ISO-8601 timestamp, then a server name and a log
 * level in brackets (either order), e.g. `2025-06-18T10:00:00.000Z [weather] [info] `. Used by
 * format detection for logs without any message line (a server that crashed at start-up).
 */
export const CLAUDE_LOG_PREFIX =
  /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?\s+(?:\[[^\]]*\]\s*\[(?:trace|debug|info|notice|warn|warning|error|fatal|critical)\]|\[(?:trace|debug|info|notice|warn|warning|error|fatal|critical)\]\s*\[[^\]]*\])/i;

const LEVELS = new Set(["trace", "debug", "info", "notice", "warn", "warning", "error", "fatal", "critical"]);

/** A line consumer for Claude Desktop MCP logs; see the module comment. */
export function claudeLogReader(out: Dispatch): LineConsumer {
  return {
    line(text, lineNo) {
      const m = CLAUDE_LOG_LINE.exec(text);
      if (m === null) {
        out.skip();
        return;
      }
      const session = serverName(m[1]!);
      const dir = m[2] === "client" ? "c2s" : "s2c";
      const rest = m[3]!;
      const start = firstNonSpace(rest);
      const end = start < rest.length ? jsonValueEnd(rest, start) : -1;
      const json = end > 0 ? rest.slice(start, end) : rest.trim();
      let value: unknown;
      try {
        value = JSON.parse(json);
      } catch (err) {
        out.unparsable(json, parseErrorText(err), { line: lineNo }, dir, session);
        return;
      }
      out.message(value, { line: lineNo }, dir, session);
    },
  };
}

function serverName(groups: string): string {
  const names: string[] = [];
  for (const m of groups.matchAll(/\[([^\]]*)\]/g)) names.push(m[1]!.trim());
  return names.find((n) => !LEVELS.has(n.toLowerCase())) ?? names[0] ?? "";
}

function firstNonSpace(s: string): number {
  let i = 0;
  while (i < s.length && (s[i] === " " || s[i] === "\t")) i++;
  return i;
}

/**
 * Index just past the JSON object or array that starts at `s[start]`, honouring strings and
 * escapes; -1 when `s[start]` does not open one or it is not closed on this line.
 */
export function jsonValueEnd(s: string, start: number): number {
  const open = s.charCodeAt(start);
  if (open !== 0x7b /* { */ && open !== 0x5b /* [ */) return -1;
  let depth = 0;
  let inString = false;
  for (let i = start; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}
