/**
 * `--format junit`: JUnit XML (the de-facto schema read by Jenkins, GitLab and GitHub
 * reporters). One `<testsuite>` per input file; one `<testcase>` per rule of the catalogue
 * (`classname` = file, `name` = rule id). A rule with error findings in that file is a
 * `<failure>` whose text lists them; warning findings go to the test case's `<system-out>`.
 * An unreadable file fails its `input/unreadable` case. `failures` attributes count failing
 * test cases; `tests` counts rules.
 */
import { RULE_LIST } from "../rules.js";
import type { FileSummary, Finding } from "../types.js";
import type { Reporter, ReporterOptions } from "./index.js";
import { xmlEscape as x } from "./xml.js";

const describe = (f: Finding): string => {
  const parts = [`line ${f.line}`];
  if (f.location !== undefined) parts.push(f.location);
  if (f.direction !== undefined) parts.push(f.direction);
  if (f.session !== undefined) parts.push(`[${f.session}]`);
  if (f.id !== undefined) parts.push(`id ${JSON.stringify(f.id)}`);
  if (f.method !== undefined) parts.push(f.method);
  if (f.pointer !== undefined && f.pointer !== "") parts.push(`at ${f.pointer}`);
  return `${parts.join(" ")}: ${f.message}`;
};

/** The JUnit XML reporter; see the module comment. */
export function junitReporter(options: ReporterOptions): Reporter {
  let pending: Finding[] = [];
  const suites: string[] = [];
  let totalFailures = 0;
  let totalTests = 0;

  const suite = (file: FileSummary, findings: Finding[]): string => {
    const byRule = new Map<string, Finding[]>();
    for (const f of findings) {
      const list = byRule.get(f.rule) ?? [];
      list.push(f);
      byRule.set(f.rule, list);
    }
    let failures = 0;
    const cases: string[] = [];
    for (const rule of RULE_LIST) {
      const list = byRule.get(rule.id) ?? [];
      const errors = list.filter((f) => f.severity === "error");
      const warnings = list.filter((f) => f.severity === "warning");
      let body = "";
      if (errors.length > 0) {
        failures++;
        body += `<failure message="${x(`${errors.length} ${rule.id} error${errors.length === 1 ? "" : "s"}`)}" type="${x(rule.id)}">${x(
          errors.map(describe).join("\n"),
        )}</failure>`;
      }
      if (warnings.length > 0) body += `<system-out>${x(warnings.map((w) => `warning ${describe(w)}`).join("\n"))}</system-out>`;
      const open = `    <testcase classname="${x(file.file)}" name="${x(rule.id)}" time="0"`;
      cases.push(body === "" ? `${open}/>` : `${open}>${body}</testcase>`);
    }
    totalFailures += failures;
    totalTests += RULE_LIST.length;
    return (
      `  <testsuite name="${x(file.file)}" tests="${RULE_LIST.length}" failures="${failures}" errors="0" skipped="0" time="0">\n` +
      `    <properties><property name="format" value="${x(file.format ?? "unknown")}"/>` +
      `<property name="messages" value="${file.messages}"/>` +
      `<property name="errors" value="${file.errors}"/><property name="warnings" value="${file.warnings}"/></properties>\n` +
      `${cases.join("\n")}\n  </testsuite>`
    );
  };

  return {
    finding(f) {
      pending.push(f);
    },
    fileDone(file) {
      suites.push(
        suite(
          file,
          pending.filter((f) => f.file === file.file),
        ),
      );
      pending = pending.filter((f) => f.file !== file.file);
    },
    end(summary) {
      options.write(
        `<?xml version="1.0" encoding="UTF-8"?>\n` +
          `<testsuites name="orchestra-stdio validate" tests="${totalTests}" failures="${totalFailures}" errors="0" time="${(summary.durationMs / 1000).toFixed(
            3,
          )}">\n${suites.join("\n")}${suites.length > 0 ? "\n" : ""}</testsuites>\n`,
      );
    },
  };
}
