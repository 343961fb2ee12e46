/**
 * Reader for HAR 1.2 files recorded from a Streamable HTTP MCP session. The HAR is parsed whole
 * (HAR is one JSON document; it is not streamed, so memory grows with its size).
 *
 * - request POST bodies (`request.postData.text`) are client→server messages (or batches);
 * - response bodies with an `application/json` MIME type are one server→client message (or batch);
 * - response bodies with `text/event-stream` are split into SSE events; each event's `data:` lines
 *   (joined with `\n`) are one server→client message; events with another `event:` type than
 *   `message` and empty data are ignored;
 * - `content.encoding: "base64"` bodies are decoded;
 * - an entry with no such body (GET without events, DELETE, 202 Accepted...) is skipped.
 *
 * Messages are replayed in time order: a request at `startedDateTime`, its response body at
 * `startedDateTime + time`. Origins use the 1-based entry index as `line` and say which part.
 */
import type { Direction } from "../types.js";
import { parseErrorText, type Dispatch } from "./dispatch.js";

interface HarEvent {
  at: number;
  seq: number;
  entry: number;
  location: string;
  dir: Direction;
  text: string;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Outcome of reading a HAR document; `error` means it is not a HAR at all (exit code 2). */
export interface HarReadResult {
  entries: number;
  error?: string;
}

/** Parses `text` as HAR and dispatches its MCP messages in time order. */
export function readHar(text: string, out: Dispatch): HarReadResult {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return { entries: 0, error: `not a HAR file: ${parseErrorText(err)}` };
  }
  const log = isObject(doc) ? doc.log : undefined;
  const entries = isObject(log) ? log.entries : undefined;
  if (!Array.isArray(entries)) return { entries: 0, error: 'not a HAR file: no "log.entries" array' };

  const events: HarEvent[] = [];
  let seq = 0;
  entries.forEach((entry: unknown, index) => {
    const no = index + 1;
    if (!isObject(entry) || !isObject(entry.request) || !isObject(entry.response)) {
      out.problem("input/malformed-record", { line: no, location: "entry" }, "HAR entry without request/response objects");
      return;
    }
    const started = typeof entry.startedDateTime === "string" ? Date.parse(entry.startedDateTime) : NaN;
    const t0 = Number.isFinite(started) ? started : 0;
    const done = t0 + (typeof entry.time === "number" && entry.time > 0 ? entry.time : 0);
    let found = false;

    const req = entry.request;
    const post = isObject(req.postData) ? req.postData : undefined;
    if (req.method === "POST" && post !== undefined && typeof post.text === "string" && post.text.trim() !== "") {
      events.push({ at: t0, seq: seq++, entry: no, location: "request", dir: "c2s", text: post.text });
      found = true;
    }

    const content = isObject(entry.response.content) ? entry.response.content : undefined;
    if (content !== undefined && typeof content.text === "string" && content.text !== "") {
      const body = content.encoding === "base64" ? Buffer.from(content.text, "base64").toString("utf8") : content.text;
      const mime = (typeof content.mimeType === "string" ? content.mimeType : headerValue(entry.response, "content-type")).toLowerCase();
      if (mime.includes("text/event-stream")) {
        sseData(body).forEach((data, i) => {
          events.push({ at: done, seq: seq++, entry: no, location: `response event ${i + 1}`, dir: "s2c", text: data });
          found = true;
        });
      } else if (mime.includes("json")) {
        events.push({ at: done, seq: seq++, entry: no, location: "response", dir: "s2c", text: body });
        found = true;
      }
    }
    if (!found) out.skip();
  });

  events.sort((a, b) => a.at - b.at || a.seq - b.seq);
  for (const ev of events) {
    const origin = { line: ev.entry, location: ev.location };
    let value: unknown;
    try {
      value = JSON.parse(ev.text);
    } catch (err) {
      out.unparsable(ev.text, parseErrorText(err), origin, ev.dir);
      continue;
    }
    out.message(value, origin, ev.dir);
  }
  return { entries: entries.length };
}

function headerValue(part: Json, name: string): string {
  const headers = part.headers;
  if (!Array.isArray(headers)) return "";
  for (const h of headers) {
    if (isObject(h) && typeof h.name === "string" && h.name.toLowerCase() === name && typeof h.value === "string") return h.value;
  }
  return "";
}

/**
 * The data of each dispatched SSE event (WHATWG HTML "event stream" interpretation: lines end
 * with CRLF, LF or CR; `data:` lines accumulate, a blank line dispatches; comment lines start with
 * `:`). Only events of type `message` (the default) are returned.
 */
export function sseData(body: string): string[] {
  const out: string[] = [];
  let data: string[] = [];
  let type = "";
  const dispatch = (): void => {
    if (data.length > 0 && (type === "" || type === "message")) out.push(data.join("\n"));
    data = [];
    type = "";
  };
  for (const line of body.split(/\r\n|\r|\n/)) {
    if (line === "") {
      dispatch();
      continue;
    }
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data.push(value);
    else if (field === "event") type = value;
  }
  dispatch();
  return out;
}
