/**
 * The HTML report (`validate --format html > report.html`): one self-contained page per run (no
 * network: styles, script and data are inline). A summary at the top (totals, each file, the
 * findings per rule); then each file and each of its sessions as a timeline of the messages in
 * both directions (client→server on the left, server→client on the right) with the method, id,
 * the input's time, and for a request and its response the latency between them; the findings
 * sit on the message they concern (same session and line), the others (file-level, lines that
 * yield no message) in the timeline at their line. Filters: by severity, by rule, and messages
 * with findings only. Each payload shows as one line, cut at {@link OPEN_PAYLOAD_CHARS} (a click
 * shows it whole and indented); a payload is kept up to
 * {@link MAX_PAYLOAD_CHARS}; at most {@link MAX_TIMELINE_MESSAGES} messages are shown per run
 * (every finding is, whatever their number).
 *
 * The data goes into the page as JSON in a `<script type="application/json">` with `<` escaped,
 * and the page's script builds the document from it with `textContent` only, so nothing from the
 * input is ever parsed as HTML.
 */
import type { FileSummary, Finding, TimelineMessage, ValidateSummary } from "../types.js";
import type { Reporter, ReporterOptions } from "./index.js";

/** Messages kept for the timeline per run; later ones are counted, not shown. */
export const MAX_TIMELINE_MESSAGES = 20_000;
/** Characters of a payload kept in the page. */
export const MAX_PAYLOAD_CHARS = 16 * 1024;
/** Payloads up to this many characters are shown whole on one line; longer ones are cut there (all expand to the indented JSON). */
export const OPEN_PAYLOAD_CHARS = 160;

interface PageData {
  summary: ValidateSummary & { exitCode: number };
  files: Array<{ summary: FileSummary; messages: TimelineMessage[]; findings: Finding[]; omitted: number }>;
}

/** The HTML reporter; see the module comment. Writes the page at `end`. */
export function htmlReporter(options: ReporterOptions): Reporter {
  const files = new Map<string, { messages: TimelineMessage[]; findings: Finding[]; omitted: number }>();
  const done: PageData["files"] = [];
  let kept = 0;
  const of = (file: string) => {
    let f = files.get(file);
    if (f === undefined) files.set(file, (f = { messages: [], findings: [], omitted: 0 }));
    return f;
  };
  return {
    message(m) {
      const f = of(m.file);
      if (kept >= MAX_TIMELINE_MESSAGES) {
        f.omitted++;
        return;
      }
      kept++;
      f.messages.push(m.text.length > MAX_PAYLOAD_CHARS ? { ...m, text: `${m.text.slice(0, MAX_PAYLOAD_CHARS)}… (${m.text.length} characters, cut)` } : m);
    },
    finding(f) {
      of(f.file).findings.push(f);
    },
    fileDone(summary) {
      const f = of(summary.file);
      files.delete(summary.file);
      done.push({ summary, ...f });
    },
    end(summary) {
      const exitCode = summary.unreadable > 0 ? 2 : summary.errors > 0 ? 1 : 0;
      options.write(page({ summary: { ...summary, exitCode }, files: done }));
    },
  };
}

/** JSON for a `<script>` element: `<`, U+2028 and U+2029 escaped. */
function scriptJson(data: unknown): string {
  return JSON.stringify(data)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

function page(data: PageData): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>orchestra-stdio validate report</title>
<style>${STYLE}</style>
</head>
<body>
<header><h1>MCP traffic report</h1><div id="summary"></div>
<form id="filters" onsubmit="return false">
<fieldset id="filter-severity"><legend>Severity</legend>
<label><input type="checkbox" value="error" checked> errors</label>
<label><input type="checkbox" value="warning" checked> warnings</label></fieldset>
<fieldset><legend>Rule</legend><select id="filter-rule"><option value="">all rules</option></select></fieldset>
<fieldset><legend>Messages</legend><label><input type="checkbox" id="only-findings"> only those with findings shown</label></fieldset>
<span id="shown"></span>
</form></header>
<main id="files"></main>
<script type="application/json" id="data">${scriptJson(data)}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

const STYLE = `
:root { --c2s: #2563eb; --s2c: #059669; --err: #dc2626; --warn: #d97706; --bg: #f8fafc; --card: #fff; --line: #e2e8f0; --dim: #64748b; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #0f172a; background: var(--bg); }
header { position: sticky; top: 0; z-index: 2; background: #0f172a; color: #e2e8f0; padding: 12px 24px 10px; box-shadow: 0 2px 6px rgba(0,0,0,.2); }
h1 { margin: 0 0 6px; font-size: 18px; font-weight: 600; }
#summary { display: flex; flex-wrap: wrap; gap: 8px 18px; align-items: baseline; }
.total { font-size: 15px; } .total b { font-size: 18px; }
.total.err b { color: #f87171; } .total.warn b { color: #fbbf24; } .total.ok b { color: #34d399; }
.rules { display: flex; flex-wrap: wrap; gap: 4px; margin-top: 6px; width: 100%; }
.rulechip { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; border-radius: 10px; padding: 1px 8px; background: #1e293b; border: 1px solid #334155; cursor: pointer; color: #e2e8f0; }
.rulechip.error { border-color: #f87171; } .rulechip.warning { border-color: #fbbf24; }
form { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; margin-top: 8px; }
fieldset { border: 1px solid #334155; border-radius: 6px; padding: 2px 10px 4px; margin: 0; }
legend { font-size: 11px; color: #94a3b8; padding: 0 4px; }
select { max-width: 280px; }
#shown { color: #94a3b8; font-size: 12px; }
main { padding: 16px 24px 48px; max-width: 1200px; margin: 0 auto; }
.file { background: var(--card); border: 1px solid var(--line); border-radius: 10px; margin-bottom: 20px; overflow: hidden; }
.file > h2 { margin: 0; padding: 10px 16px; font-size: 15px; background: #f1f5f9; border-bottom: 1px solid var(--line); display: flex; gap: 12px; flex-wrap: wrap; align-items: baseline; }
.file > h2 .facts { color: var(--dim); font-weight: 400; font-size: 13px; }
.session { padding: 8px 16px 16px; }
.session > h3 { margin: 8px 0; font-size: 14px; display: flex; justify-content: space-between; color: #334155; }
.lanes { display: flex; justify-content: space-between; font-size: 11px; text-transform: uppercase; letter-spacing: .06em; color: var(--dim); border-bottom: 1px dashed var(--line); padding-bottom: 4px; margin-bottom: 6px; }
.msg { display: flex; margin: 6px 0; }
.msg.s2c { justify-content: flex-end; }
.bubble { width: 72%; border: 1px solid var(--line); border-left: 4px solid var(--c2s); border-radius: 8px; padding: 6px 10px; background: #fff; }
.msg.s2c .bubble { border-left-color: var(--s2c); background: #fcfffd; }
.msg.has-error .bubble { box-shadow: 0 0 0 1px var(--err) inset; }
.head { display: flex; flex-wrap: wrap; gap: 4px 10px; align-items: baseline; }
.arrow { font-weight: 600; color: var(--c2s); } .msg.s2c .arrow { color: var(--s2c); }
.kind { font-size: 11px; text-transform: uppercase; border-radius: 4px; padding: 0 5px; background: #e2e8f0; color: #334155; }
.kind.error, .kind.invalid { background: #fee2e2; color: #991b1b; }
.method { font: 600 13px ui-monospace, SFMono-Regular, Menlo, monospace; }
.id, .where, .time { color: var(--dim); font-size: 12px; }
.latency { font-size: 12px; color: #7c3aed; }
details { margin-top: 4px; } summary { cursor: pointer; color: #475569; font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
details[open] > summary { color: var(--dim); }
pre { margin: 4px 0 0; padding: 6px 8px; background: #f1f5f9; border-radius: 6px; font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; white-space: pre-wrap; word-break: break-all; max-height: 360px; overflow: auto; }
.finding { margin-top: 6px; padding: 4px 8px; border-radius: 6px; font-size: 13px; border-left: 3px solid; overflow-wrap: anywhere; }
.finding.error { background: #fef2f2; border-color: var(--err); } .finding.warning { background: #fffbeb; border-color: var(--warn); }
.finding .sev { font-weight: 700; text-transform: uppercase; font-size: 11px; margin-right: 6px; }
.finding.error .sev { color: var(--err); } .finding.warning .sev { color: var(--warn); }
.finding .rule { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; margin-right: 6px; }
.finding .ptr { color: var(--dim); font: 12px ui-monospace, monospace; }
.note { margin: 6px auto; width: 90%; }
.omitted, .empty { color: var(--dim); font-style: italic; padding: 4px 0; }
[hidden] { display: none !important; }
`;

/** The page's script (plain ES2020, no library). */
const SCRIPT = `
"use strict";
const data = JSON.parse(document.getElementById("data").textContent);
const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = String(text); return e; };
const plural = (n, w) => n + " " + w + (n === 1 ? "" : "s");
const arrow = (d) => d === "c2s" ? "client → server" : "server → client";
const other = (d) => d === "c2s" ? "s2c" : "c2s";
const ms = (a, b) => { const t = Date.parse(b) - Date.parse(a); return Number.isFinite(t) ? t : undefined; };
const showMs = (t) => t < 1000 ? t + " ms" : (t / 1000).toFixed(2) + " s";

// --- summary ---
const s = data.summary;
const sum = document.getElementById("summary");
const total = (cls, n, w) => { const d = el("span", "total " + cls); d.append(el("b", "", n), " " + w); return d; };
sum.append(total(s.errors > 0 ? "err" : "ok", s.errors, s.errors === 1 ? "error" : "errors"), total(s.warnings > 0 ? "warn" : "ok", s.warnings, s.warnings === 1 ? "warning" : "warnings"),
  total("", s.messages, s.messages === 1 ? "message" : "messages"), total("", s.files.length, s.files.length === 1 ? "file" : "files"));
const exit = el("span", "total " + (s.exitCode === 0 ? "ok" : "err"), "exit status "); exit.append(el("b", "", s.exitCode)); sum.append(exit);
const byRule = new Map();
for (const f of data.files) for (const x of f.findings) { const r = byRule.get(x.rule) || { n: 0, severity: x.severity }; r.n++; byRule.set(x.rule, r); }
const rules = el("div", "rules");
const select = document.getElementById("filter-rule");
for (const [rule, r] of [...byRule].sort((a, b) => b[1].n - a[1].n)) {
  const chip = el("button", "rulechip " + r.severity, rule + " ×" + r.n);
  chip.type = "button"; chip.dataset.rule = rule;
  chip.addEventListener("click", () => { select.value = rule; apply(); });
  rules.append(chip);
  const o = el("option", "", rule + " (" + r.n + ")"); o.value = rule; select.append(o);
}
if (byRule.size > 0) sum.append(rules);

// --- timelines ---
const findingEl = (x) => {
  const d = el("div", "finding " + x.severity);
  d.dataset.rule = x.rule; d.dataset.severity = x.severity;
  d.append(el("span", "sev", x.severity), el("span", "rule", x.rule), el("span", "text", x.message));
  if (x.pointer) d.append(" ", el("span", "ptr", "at " + x.pointer));
  return d;
};
const main = document.getElementById("files");
for (const f of data.files) {
  const fs = f.summary;
  const sec = el("section", "file"); sec.dataset.file = fs.file;
  const h = el("h2", "", fs.file);
  const facts = [fs.format || "?", ...(fs.protocolVersions.length ? [fs.protocolVersions.join(" + ")] : []), plural(fs.messages, "message"), plural(fs.errors, "error"), plural(fs.warnings, "warning")];
  if (fs.unreadable !== undefined) facts.push("unreadable: " + fs.unreadable);
  h.append(el("span", "facts", facts.join(" · ")));
  sec.append(h);
  // sessions in order of first appearance (messages, then findings)
  const sessions = new Map();
  const sess = (label) => { const k = label === undefined ? "" : label; if (!sessions.has(k)) sessions.set(k, { messages: [], findings: [] }); return sessions.get(k); };
  for (const m of f.messages) sess(m.session).messages.push(m);
  for (const x of f.findings) sess(x.session).findings.push(x);
  for (const [label, S] of sessions) {
    const box = el("div", "session"); box.dataset.session = label;
    const title = el("h3"); title.append(el("span", "", label === "" ? "session" : "session " + label), el("span", "id", plural(S.messages.length, "message")));
    const lanes = el("div", "lanes"); lanes.append(el("span", "", "client → server"), el("span", "", "server → client"));
    box.append(title, lanes);
    const key = (line, location) => line + "|" + (location || "");
    const at = new Map();
    for (const x of S.findings) { const k = key(x.line, x.location); if (!at.has(k)) at.set(k, []); at.get(k).push(x); }
    // latency: a response and the request the checker paired it with (m.answers)
    const place = (dir, line, location, batch) => dir + "|" + line + "|" + (location || "") + "|" + (batch || "");
    const open = new Map();
    const rows = [];
    const placed = new Set();
    for (const m of S.messages) {
      const row = el("div", "msg " + m.direction); row.dataset.kind = m.kind;
      const b = el("div", "bubble"); row.append(b);
      const head = el("div", "head");
      head.append(el("span", "arrow", arrow(m.direction)), el("span", "kind " + m.kind, m.kind));
      if (m.method) head.append(el("span", "method", m.method));
      if (m.id !== undefined) head.append(el("span", "id", "id " + JSON.stringify(m.id)));
      if (m.ts) head.append(el("span", "time", m.ts.replace("T", " ").replace("Z", "")));
      head.append(el("span", "where", "line " + m.line + (m.location ? " (" + m.location + ")" : "") + (m.batch ? " batch " + m.batch : "")));
      if (m.kind === "request") open.set(place(m.direction, m.line, m.location, m.batch), { m, head });
      if (m.answers) {
        const k = place(other(m.direction), m.answers.line, m.answers.location, m.answers.batch);
        const req = open.get(k);
        if (req) {
          open.delete(k);
          const t = req.m.ts && m.ts ? ms(req.m.ts, m.ts) : undefined;
          head.append(el("span", "latency", "↩ " + req.m.method + (t !== undefined ? " after " + showMs(t) : " (line " + req.m.line + ")")));
          req.head.append(el("span", "latency", t !== undefined ? "answered in " + showMs(t) : "answered at line " + m.line));
        }
      }
      b.append(head);
      const k = key(m.line, m.location);
      if (!placed.has(k)) { placed.add(k); for (const x of at.get(k) || []) b.append(findingEl(x)); }
      const d = el("details");
      const preview = m.text.length <= ${OPEN_PAYLOAD_CHARS} ? m.text : m.text.slice(0, ${OPEN_PAYLOAD_CHARS} - 20) + " … (" + m.text.length + " characters)";
      d.append(el("summary", "preview", preview));
      const pre = el("pre");
      let text = m.text;
      try { text = JSON.stringify(JSON.parse(m.text), null, 2); } catch (e) { /* raw text */ }
      pre.textContent = text; d.append(pre); b.append(d);
      rows.push({ line: m.line, row });
    }
    // findings that belong to no message of the session, at their line
    for (const [k, list] of at) {
      if (placed.has(k)) continue;
      const row = el("div", "msg note"); row.dataset.kind = "note";
      const b = el("div", "bubble"); b.append(el("div", "where", list[0].line === 0 ? "file" : "line " + list[0].line + (list[0].location ? " (" + list[0].location + ")" : "")));
      for (const x of list) b.append(findingEl(x));
      row.append(b);
      rows.push({ line: list[0].line, row });
    }
    rows.sort((a, b) => a.line - b.line);
    for (const r of rows) box.append(r.row);
    if (rows.length === 0) box.append(el("div", "empty", "no messages"));
    sec.append(box);
  }
  if (f.omitted > 0) sec.append(el("div", "omitted session", plural(f.omitted, "more message") + " not shown (the report shows at most ${MAX_TIMELINE_MESSAGES} per run); their findings are above"));
  main.append(sec);
}

// --- filters ---
const sevBoxes = [...document.querySelectorAll("#filter-severity input")];
const only = document.getElementById("only-findings");
function apply() {
  const sev = new Set(sevBoxes.filter((b) => b.checked).map((b) => b.value));
  const rule = select.value;
  let shown = 0;
  for (const f of document.querySelectorAll(".finding")) {
    const visible = sev.has(f.dataset.severity) && (rule === "" || f.dataset.rule === rule);
    f.hidden = !visible;
    if (visible) shown++;
  }
  for (const m of document.querySelectorAll(".msg")) {
    const any = m.querySelector(".finding:not([hidden])") !== null;
    m.classList.toggle("has-error", m.querySelector(".finding.error:not([hidden])") !== null);
    m.hidden = (only.checked || m.dataset.kind === "note" || rule !== "") && !any;
  }
  for (const box of document.querySelectorAll(".session[data-session]")) {
    let none = box.querySelector(":scope > .none");
    if (!none) { none = el("div", "empty none", "nothing here matches the filters"); box.append(none); }
    none.hidden = box.querySelector(":scope > .msg:not([hidden])") !== null || box.querySelector(":scope > .empty:not(.none)") !== null;
  }
  document.getElementById("shown").textContent = plural(shown, "finding") + " shown";
}
for (const b of sevBoxes) b.addEventListener("change", apply);
select.addEventListener("change", apply);
only.addEventListener("change", apply);
apply();
`;
