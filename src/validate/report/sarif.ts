/**
 * `--format sarif`: a SARIF 2.1.0 log (OASIS SARIF v2.1.0, §3.13 sarifLog, §3.19 tool,
 * §3.27 result) with one run. `tool.driver.rules` is the whole rule catalogue in catalogue
 * order (results refer to it by `ruleId` and `ruleIndex`); each finding is a result whose
 * `level` is its severity, located by `artifactLocation.uri` (the path as a relative URI
 * reference, a `file:` URI for absolute paths, `stdin` for `-`) and `region.startLine`.
 * HAR findings (entry numbers, not lines) and file-level findings carry no region; the HAR
 * part is in `properties.location`. Direction, id, method, pointer and session go to
 * `properties`.
 */
import { readFileSync } from "node:fs";
import { isAbsolute, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { RULE_LIST } from "../rules.js";
import type { Finding } from "../types.js";
import type { Reporter, ReporterOptions } from "./index.js";

const SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json";

function toolVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { version?: unknown };
    return typeof pkg.version === "string" ? pkg.version : "0.0.0";
  } catch {
    return "0.0.0";
  }
}

/** The SARIF artifact URI for an input path. */
export function artifactUri(path: string): string {
  if (path === "-") return "stdin";
  if (isAbsolute(path)) return pathToFileURL(path).href;
  return path.split(sep).join("/").split("/").map(encodeURIComponent).join("/");
}

/** The SARIF 2.1.0 reporter; see the module comment. */
export function sarifReporter(options: ReporterOptions): Reporter {
  const results: object[] = [];
  const ruleIndex = new Map(RULE_LIST.map((r, i) => [r.id, i]));

  const result = (f: Finding): object => {
    const physical: Record<string, unknown> = { artifactLocation: { uri: artifactUri(f.file) } };
    if (f.line > 0 && f.location === undefined) physical.region = { startLine: f.line };
    const properties: Record<string, unknown> = {};
    if (f.direction !== undefined) properties.direction = f.direction;
    if (f.id !== undefined) properties.id = f.id;
    if (f.method !== undefined) properties.method = f.method;
    if (f.pointer !== undefined) properties.pointer = f.pointer;
    if (f.session !== undefined) properties.session = f.session;
    if (f.location !== undefined) {
      properties.location = f.location;
      properties.harEntry = f.line;
    }
    const r: Record<string, unknown> = {
      ruleId: f.rule,
      level: f.severity,
      message: { text: f.message },
      locations: [{ physicalLocation: physical }],
    };
    const index = ruleIndex.get(f.rule);
    if (index !== undefined) r.ruleIndex = index;
    if (Object.keys(properties).length > 0) r.properties = properties;
    return r;
  };

  return {
    finding(f) {
      results.push(result(f));
    },
    fileDone() {},
    end(summary) {
      const log = {
        $schema: SARIF_SCHEMA,
        version: "2.1.0",
        runs: [
          {
            tool: {
              driver: {
                name: "orchestra-stdio validate",
                version: toolVersion(),
                rules: RULE_LIST.map((r) => ({
                  id: r.id,
                  shortDescription: { text: r.description },
                  fullDescription: { text: `${r.description} Spec: ${r.spec}.` },
                  defaultConfiguration: { level: r.severity },
                })),
              },
            },
            invocations: [{ executionSuccessful: summary.unreadable === 0 }],
            artifacts: summary.files.map((f) => ({
              location: { uri: artifactUri(f.file) },
              ...(f.bytes > 0 ? { length: f.bytes } : {}),
            })),
            results,
          },
        ],
      };
      options.write(`${JSON.stringify(log, null, 2)}\n`);
    },
  };
}
