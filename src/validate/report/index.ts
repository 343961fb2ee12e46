/**
 * Reporters: turn the stream of findings of a run into text (default), JSON lines, JUnit XML or
 * SARIF 2.1.0. A reporter is fed `finding` for every finding, `fileDone` after each file's last
 * finding (files in input order), and `end` once with the run's summary; it writes through
 * `options.write`.
 */
import type { FileSummary, Finding, TimelineMessage, ValidateSummary } from "../types.js";
import { htmlReporter } from "./html.js";
import { jsonReporter } from "./json.js";
import { junitReporter } from "./junit.js";
import { sarifReporter } from "./sarif.js";
import { textReporter } from "./text.js";

export const REPORT_FORMATS = ["text", "json", "junit", "sarif", "html"] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export interface ReporterOptions {
  /** Sink for the report text (e.g. `(s) => process.stdout.write(s)`). */
  write: (chunk: string) => void;
  /** ANSI colours (text format only). The CLI enables it for a TTY stdout without NO_COLOR. */
  color?: boolean;
}

export interface Reporter {
  /** Present when the report shows the messages themselves (html): called for every message checked. */
  message?(message: TimelineMessage): void;
  finding(finding: Finding): void;
  fileDone(file: FileSummary): void;
  end(summary: ValidateSummary): void;
}

/** A reporter for `format`. @throws Error for an unknown format. */
export function createReporter(format: ReportFormat, options: ReporterOptions): Reporter {
  switch (format) {
    case "text":
      return textReporter(options);
    case "json":
      return jsonReporter(options);
    case "junit":
      return junitReporter(options);
    case "sarif":
      return sarifReporter(options);
    case "html":
      return htmlReporter(options);
    default:
      throw new Error(`unknown report format ${String(format)}`);
  }
}

/**
 * Renders a finished run (as returned by `validateFiles`) in `format`, as one string. Findings
 * are attributed to files by `finding.file`; `options.messages` (collected with
 * `ValidateOptions.onMessage`) are the html report's timeline.
 */
export function renderReport(
  format: ReportFormat,
  findings: readonly Finding[],
  summary: ValidateSummary,
  options: { color?: boolean; messages?: readonly TimelineMessage[] } = {},
): string {
  const parts: string[] = [];
  const reporter = createReporter(format, { write: (s) => void parts.push(s), color: options.color ?? false });
  for (const m of options.messages ?? []) reporter.message?.(m);
  const byFile = new Map<string, Finding[]>();
  for (const f of findings) {
    const list = byFile.get(f.file) ?? [];
    list.push(f);
    byFile.set(f.file, list);
  }
  for (const file of summary.files) {
    for (const f of byFile.get(file.file) ?? []) reporter.finding(f);
    byFile.delete(file.file);
    reporter.fileDone(file);
  }
  reporter.end(summary);
  return parts.join("");
}
