/**
 * Reader for HAR 1.2 files recorded from a Streamable HTTP MCP session. The HAR is parsed whole
 * (HAR is one JSON document; it is not streamed, so memory grows with its size, and a HAR larger
 * than {@link MAX_HAR_BYTES} cannot be read at all). A leading UTF-8 BOM is ignored.
 *
 * - request POST bodies (`request.postData.text`) are client→server messages (or batches);
 * - response bodies with an `application/json` MIME type are one server→client message (or batch);
 * - response bodies with `text/event-stream` are split into SSE events; each event's `data:` lines
 *   (joined with `\n`) are one server→client message; events with another `event:` type than
 *   `message` and empty data are ignored;
 * - `content.encoding: "base64"` bodies are decoded;
 * - an entry with no such body (GET without events, DELETE, 202 Accepted...) is skipped.
 *
 * Sessions: an entry belongs to the session named by its request's `Mcp-Session-Id` header, or,
 * without one (the initialize request), by its response's (the server assigns the id there). An
 * entry with neither joins the session of the closest earlier entry that had one; a HAR without
 * any such header is one session. Each session is checked on its own.
 *
 * Order: messages are replayed in time order. An entry's request body comes at its start
 * (`startedDateTime`), its response at its end (`startedDateTime + time`), and the events of an
 * SSE response are spread evenly over the entry (the last one at its end), since a HAR has no
 * time per event. Timestamps have a 1 ms resolution, so an entry's end is taken 1 ms early (never
 * before its start), and equal times keep the order of the file (an entry's request before its
 * response): a response is never replayed before its request, and a response that ends within
 * 1 ms of the next entry's start comes before that entry's request. Causality comes first: when a
 * client message answers a server request carried by an SSE stream that is already open (its
 * entry's request was replayed, or a GET stream started no later), that request (and the stream's
 * events before it) is replayed right before the answer, even if the stream ends later.
 *
 * Origins use the 1-based entry index as `line` and say which part.
 */
import { constants } from "node:buffer";
import type { Direction } from "../types.js";
import { parseErrorText, type Dispatch } from "./dispatch.js";

/**
 * Largest HAR file read, in bytes: the longest string this Node.js runtime can make (V8's limit,
 * 0x1fffffe8 characters, about 512 MiB on 64-bit platforms). A HAR is parsed as one JSON string.
 */
export const MAX_HAR_BYTES: number = constants.MAX_STRING_LENGTH;

/** The error for a HAR of `bytes` bytes (or more) over {@link MAX_HAR_BYTES}. */
export function harTooLarge(bytes: number, atLeast = false): Error {
  const mib = (n: number): string => `about ${Math.round(n / (1024 * 1024))} MiB`;
  return new Error(
    `HAR file of ${atLeast ? "more than " : ""}${bytes} bytes (${mib(bytes)}) is too large: a HAR is parsed as one JSON document, ` +
      `which is limited to ${MAX_HAR_BYTES} bytes (${mib(MAX_HAR_BYTES)}, the longest string Node.js can hold); ` +
      "split the recording into smaller HAR files",
  );
}

/** Decodes a whole HAR file; throws {@link harTooLarge} for one over {@link MAX_HAR_BYTES}. */
export function harText(parts: readonly Buffer[], bytes: number): string {
  if (bytes > MAX_HAR_BYTES) throw harTooLarge(bytes);
  try {
    return (parts.length === 1 ? parts[0]! : Buffer.concat(parts, bytes)).toString("utf8");
  } catch (err) {
    if (err instanceof Error && /string longer than/i.test(err.message)) throw harTooLarge(bytes);
    throw err;
  }
}

/** Resolution of HAR timestamps (`startedDateTime` has milliseconds), ms. */
const RESOLUTION_MS = 1;

interface HarEvent {
  at: number;
  seq: number;
  entry: number;
  location: string;
  dir: Direction;
  text: string;
  session: string | undefined;
  /** SSE events: the stream (entry) they belong to and their index in it. */
  stream?: Stream;
  index?: number;
  done?: boolean;
}

interface Stream {
  /** The entry's start, ms. */
  start: number;
  /** The entry's request event, if it has one. */
  request: HarEvent | undefined;
  events: HarEvent[];
  /** Index of the first event not yet replayed. */
  next: number;
}

interface Parsed {
  value?: unknown;
  error?: string;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Outcome of reading a HAR document; `error` means it is not a HAR at all (exit code 2). */
export interface HarReadResult {
  entries: number;
  error?: string;
}

/** Parses `text` as HAR and dispatches its MCP messages in time order (see the module comment). */
export function readHar(text: string, out: Dispatch): HarReadResult {
  let doc: unknown;
  try {
    doc = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (err) {
    return { entries: 0, error: `not a HAR file: ${parseErrorText(err)}` };
  }
  const log = isObject(doc) ? doc.log : undefined;
  const entries = isObject(log) ? log.entries : undefined;
  if (!Array.isArray(entries)) return { entries: 0, error: 'not a HAR file: no "log.entries" array' };

  const events: HarEvent[] = [];
  let seq = 0;
  let lastSession: string | undefined;
  entries.forEach((entry: unknown, index) => {
    const no = index + 1;
    if (!isObject(entry) || !isObject(entry.request) || !isObject(entry.response)) {
      out.problem("input/malformed-record", { line: no, location: "entry" }, "HAR entry without request/response objects");
      return;
    }
    const req = entry.request;
    const res = entry.response;
    const started = typeof entry.startedDateTime === "string" ? Date.parse(entry.startedDateTime) : NaN;
    const t0 = Number.isFinite(started) ? started : 0;
    const duration = typeof entry.time === "number" && entry.time > 0 ? entry.time : 0;
    const done = t0 + Math.max(0, duration - RESOLUTION_MS);
    const session = headerValue(req, "mcp-session-id") || headerValue(res, "mcp-session-id") || lastSession;
    let found = false;

    let request: HarEvent | undefined;
    const post = isObject(req.postData) ? req.postData : undefined;
    if (req.method === "POST" && post !== undefined && typeof post.text === "string" && post.text.trim() !== "") {
      request = { at: t0, seq: seq++, entry: no, location: "request", dir: "c2s", text: post.text, session };
      events.push(request);
      found = true;
    }

    const content = isObject(res.content) ? res.content : undefined;
    if (content !== undefined && typeof content.text === "string" && content.text !== "") {
      const body = content.encoding === "base64" ? Buffer.from(content.text, "base64").toString("utf8") : content.text;
      const mime = (typeof content.mimeType === "string" ? content.mimeType : headerValue(res, "content-type")).toLowerCase();
      if (mime.includes("text/event-stream")) {
        const data = sseData(body);
        const stream: Stream = { start: t0, request, events: [], next: 0 };
        data.forEach((text, i) => {
          const at = t0 + ((done - t0) * (i + 1)) / data.length;
          const ev: HarEvent = { at, seq: seq++, entry: no, location: `response event ${i + 1}`, dir: "s2c", text, session, stream, index: i };
          stream.events.push(ev);
          events.push(ev);
          found = true;
        });
      } else if (mime.includes("json")) {
        events.push({ at: done, seq: seq++, entry: no, location: "response", dir: "s2c", text: body, session });
        found = true;
      }
    }
    if (found) lastSession = session;
    else out.skip();
  });

  // Parse every message first: the causal order needs the ids.
  const parsed = new Map<HarEvent, Parsed>();
  /** Server requests carried by SSE streams, by session and id. */
  const serverRequests = new Map<string, HarEvent[]>();
  for (const ev of events) {
    let p: Parsed;
    try {
      p = { value: JSON.parse(ev.text) };
    } catch (err) {
      p = { error: parseErrorText(err) };
    }
    parsed.set(ev, p);
    if (ev.stream !== undefined) {
      for (const id of ids(p.value, "request")) {
        const key = idKey(ev.session, id);
        const list = serverRequests.get(key);
        if (list === undefined) serverRequests.set(key, [ev]);
        else list.push(ev);
      }
    }
  }

  events.sort((a, b) => a.at - b.at || a.seq - b.seq);
  const emit = (ev: HarEvent): void => {
    ev.done = true;
    const stream = ev.stream;
    if (stream !== undefined) stream.next = Math.max(stream.next, ev.index! + 1);
    const origin = out.times === true && ev.at > 0 ? { line: ev.entry, location: ev.location, ts: new Date(ev.at).toISOString() } : { line: ev.entry, location: ev.location };
    const p = parsed.get(ev)!;
    parsed.delete(ev); // (let replayed values go)
    if (p.error !== undefined) out.unparsable(ev.text, p.error, origin, ev.dir, ev.session);
    else out.message(p.value, origin, ev.dir, ev.session);
  };
  /**
   * Replays the server request `id` before `answer` when it is on a stream that is already open.
   * Each answer pairs with the first such request not answered yet (ids may be reused).
   */
  const pullForward = (answer: HarEvent, id: string | number): void => {
    const candidates = serverRequests.get(idKey(answer.session, id));
    if (candidates === undefined) return;
    const at = candidates.findIndex((c) => {
      const s = c.stream!;
      return s.request !== undefined ? s.request.done === true : s.start <= answer.at;
    });
    if (at === -1) return;
    const target = candidates.splice(at, 1)[0]!;
    if (target.done === true) return;
    const stream = target.stream!;
    while (stream.next <= target.index!) {
      const ev = stream.events[stream.next]!;
      if (ev.done === true) stream.next++;
      else emit(ev);
    }
  };
  for (const ev of events) {
    if (ev.done === true) continue;
    if (ev.dir === "c2s" && serverRequests.size > 0) {
      for (const id of ids(parsed.get(ev)!.value, "response")) pullForward(ev, id);
    }
    emit(ev);
  }
  return { entries: entries.length };
}

/** The request (or response) ids in a message or batch. */
function ids(value: unknown, kind: "request" | "response"): Array<string | number> {
  const found: Array<string | number> = [];
  const one = (m: unknown): void => {
    if (!isObject(m) || (typeof m.id !== "string" && typeof m.id !== "number")) return;
    const isRequest = typeof m.method === "string";
    if (kind === "request" ? isRequest : !isRequest && ("result" in m || "error" in m)) found.push(m.id);
  };
  if (Array.isArray(value)) value.forEach(one);
  else one(value);
  return found;
}

const idKey = (session: string | undefined, id: string | number): string => `${session ?? ""}\u0000${typeof id}:${String(id)}`;

function headerValue(part: Json, name: string): string {
  const headers = part.headers;
  if (!Array.isArray(headers)) return "";
  for (const h of headers) {
    if (isObject(h) && typeof h.name === "string" && h.name.toLowerCase() === name && typeof h.value === "string") return h.value.trim();
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
