/**
 * `--format json`: JSON Lines. One object per finding, `{"type":"finding", ...Finding}`, written
 * as soon as it is found, then one `{"type":"summary", errors, warnings, messages, bytes,
 * unreadable, durationMs, exitCode, files: [FileSummary...]}` line.
 */
import type { Reporter, ReporterOptions } from "./index.js";

/** The JSON Lines reporter; see the module comment. */
export function jsonReporter(options: ReporterOptions): Reporter {
  return {
    finding(f) {
      options.write(`${JSON.stringify({ type: "finding", ...f })}\n`);
    },
    fileDone() {},
    end(summary) {
      const exitCode = summary.unreadable > 0 ? 2 : summary.errors > 0 ? 1 : 0;
      const { files, ...totals } = summary;
      options.write(`${JSON.stringify({ type: "summary", ...totals, exitCode, files })}\n`);
    },
  };
}
