/**
 * The default human-readable report, grouped by file. Each file's findings are printed (sorted by
 * line) when the file is done:
 *
 *   capture.jsonl  capture, 2025-06-18, 42 messages
 *       7  error    s2c  session/unmatched-response  response id 9 matches no client→server request
 *      12  warning  c2s  schema/unknown-method  method x/y is not defined in ... (at /params)
 *
 *   ✖ 1 error, 1 warning in 1 file (42 messages, 3.1 kB, 0.01 s)
 *
 * ANSI colours only when `options.color` is set. Every text taken from the input (file names,
 * methods, ids, parser messages...) is printed through {@link escapeControls}: control characters
 * (C0, DEL, C1) appear as `\uXXXX` escapes, so a capture cannot send escape sequences to the
 * terminal or break the one-finding-per-line layout.
 */
import type { Finding } from "../types.js";
import type { Reporter, ReporterOptions } from "./index.js";

const ANSI = { red: "\u001b[31m", yellow: "\u001b[33m", green: "\u001b[32m", dim: "\u001b[2m", bold: "\u001b[1m", reset: "\u001b[0m" };

/** The human-readable reporter; see the module comment. */
export function textReporter(options: ReporterOptions): Reporter {
  const paint = (code: keyof typeof ANSI, s: string): string => (options.color === true ? `${ANSI[code]}${s}${ANSI.reset}` : s);
  let pending: Finding[] = [];
  let files = 0;

  return {
    finding(f) {
      pending.push(f);
    },
    fileDone(file) {
      files++;
      const list = pending.filter((f) => f.file === file.file);
      pending = pending.filter((f) => f.file !== file.file);
      list.sort((a, b) => a.line - b.line);
      const facts =
        file.unreadable !== undefined
          ? [...(file.format !== undefined ? [file.format] : []), "unreadable"]
          : [file.format ?? "?", ...(file.protocolVersions.length > 0 ? [file.protocolVersions.join("+")] : []), plural(file.messages, "message")];
      const status = list.length === 0 ? paint("green", " ok") : "";
      options.write(`${paint("bold", escapeControls(file.file))}  ${paint("dim", escapeControls(facts.join(", ")))}${status}\n`);
      // A file-level finding (line 0) has no line: "-".
      const lineOf = (f: Finding): string => (f.line === 0 ? "-" : String(f.line));
      const width = Math.max(4, ...list.map((f) => lineOf(f).length));
      for (const f of list) {
        const sev = f.severity === "error" ? paint("red", "error  ") : paint("yellow", "warning");
        const where = escapeControls(
          [f.direction ?? "   ", ...(f.session !== undefined ? [`[${f.session}]`] : []), ...(f.location !== undefined ? [`(${f.location})`] : [])].join(" "),
        );
        const at = f.pointer !== undefined && f.pointer !== "" ? paint("dim", ` (at ${escapeControls(f.pointer)})`) : "";
        options.write(`  ${lineOf(f).padStart(width)}  ${sev}  ${where}  ${paint("bold", escapeControls(f.rule))}  ${escapeControls(f.message)}${at}\n`);
      }
      options.write("\n");
    },
    end(summary) {
      const mark = summary.errors > 0 || summary.unreadable > 0 ? paint("red", "✖") : paint("green", "✔");
      const unreadable = summary.unreadable > 0 ? `, ${plural(summary.unreadable, "unreadable file")}` : "";
      options.write(
        `${mark} ${plural(summary.errors, "error")}, ${plural(summary.warnings, "warning")}${unreadable} in ${plural(files, "file")} ` +
          `(${plural(summary.messages, "message")}, ${formatBytes(summary.bytes)}, ${(summary.durationMs / 1000).toFixed(2)} s)\n`,
      );
      const excerpts = summary.files.filter((f) => f.excerpt === true).length;
      if (excerpts > 0) {
        const which = excerpts === 1 && files === 1 ? "the input looks" : `${plural(excerpts, "input")} ${excerpts === 1 ? "looks" : "look"}`;
        options.write(
          `${paint("dim", "hint:")} ${which} like an excerpt of a longer session (no initialize request, responses to requests it does not hold, or a cut first line); if so, run again with --partial\n`,
        );
      }
    },
  };
}

/** C0 controls, DEL and C1 controls. */
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/** `s` with every control character (C0, DEL, C1) written as a `\uXXXX` escape (as JSON escapes C0). */
export function escapeControls(s: string): string {
  return s.replace(CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

const plural = (n: number, w: string): string => `${n} ${w}${n === 1 ? "" : "s"}`;

/** `1234567` → `1.2 MB` (SI units). */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ["kB", "MB", "GB", "TB"];
  let v = n;
  let i = -1;
  do {
    v /= 1000;
    i++;
  } while (v >= 1000 && i < units.length - 1);
  return `${v.toFixed(1)} ${units[i]}`;
}
