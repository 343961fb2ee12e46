/**
 * `orchestra-stdio validate [files...]`: the offline MCP traffic validator's command line. A thin
 * layer over `validateFiles` and the reporters in `src/validate/`.
 *
 * Exit codes: 0 no errors (warnings allowed), 1 errors found, 2 an input was unreadable or yielded
 * no message (`input/no-messages`), or the options were unusable (unknown protocol version, bad
 * schema file, no input, `-` twice).
 */
import { stat } from "node:fs/promises";
import { Command, InvalidArgumentError, Option } from "commander";
import {
  REPORT_FORMATS,
  RULE_LIST,
  ValidateUsageError,
  createReporter,
  exitCodeFor,
  validateFiles,
  type Direction,
  type FileOptions,
  type InputFormat,
  type ReportFormat,
  type ValidateOptions,
} from "../validate/index.js";
import { warnAboutVariables } from "./environment.js";
import { createProgressBar, progressBarWanted, PROGRESS_MIN_BYTES, sameTerminal, type ProgressBar } from "../validate/progress.js";

const INPUT_FORMATS: readonly InputFormat[] = ["capture", "jsonl", "claude-log", "har"];

interface CliOptions {
  format: ReportFormat;
  inputFormat?: InputFormat;
  direction?: "c2s" | "s2c";
  protocolVersion?: string;
  schema?: string;
  jobs: number;
  partial?: boolean;
  listRules?: boolean;
}

const DIRECTIONS = ["c2s", "s2c"] as const;

/**
 * Splits the per-file options off an input argument: `FILE:OPT[,OPT]` where each OPT is a
 * direction (`c2s`, `s2c`) or an input format (`capture`, `jsonl`, `claude-log`, `har`).
 * Precedence: an argument that names an existing file (or `-`) is that file, whatever colons it
 * holds; otherwise a suffix of known options is split off; otherwise the argument is the path.
 */
export async function splitInputArgument(arg: string): Promise<{ path: string; options?: FileOptions }> {
  if (arg === "-" || (await exists(arg))) return { path: arg };
  const colon = arg.lastIndexOf(":");
  if (colon <= 0) return { path: arg };
  const options: FileOptions = {};
  for (const opt of arg.slice(colon + 1).split(",")) {
    if ((DIRECTIONS as readonly string[]).includes(opt) && options.direction === undefined) options.direction = opt as Direction;
    else if ((INPUT_FORMATS as readonly string[]).includes(opt) && options.inputFormat === undefined) options.inputFormat = opt as InputFormat;
    else return { path: arg };
  }
  return { path: arg.slice(0, colon), options };
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** `--jobs`: decimal digits only (`Number` would also take "1e1", " 2" and "0x2"), 1 to 256. */
export function positiveInt(value: string): number {
  const n = /^[0-9]+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new InvalidArgumentError("must be an integer from 1 to 256");
  return n;
}

/** The `--format`s that `--list-rules` prints in (any other is a usage error). */
const LIST_RULES_FORMATS: readonly string[] = ["text", "json"];

/** Adds the `validate` sub-command to `program` (commander 14). */
export function registerValidateCommand(program: Command): void {
  // It reads no option from the environment: any `ORCHESTRA_*` variable but the CLI's own is a warning.
  warnAboutVariables(program.command("validate"))
    .description("check recorded MCP traffic (serve --capture files, JSONL, Claude Desktop mcp*.log, HAR) against the MCP schema and session rules")
    .argument(
      "[files...]",
      "input files, each its own session; - reads stdin (the default when stdin is not a terminal); FILE:s2c, FILE:c2s, FILE:jsonl (etc., comma-separated) set --direction / --input-format for that file",
    )
    .addOption(new Option("--format <format>", "report format").choices(REPORT_FORMATS).default("text"))
    .addOption(new Option("--input-format <format>", "input format (default: detected per file)").choices(INPUT_FORMATS))
    .addOption(
      new Option("--direction <dir>", "direction of plain JSONL input (default: c2s; s2c, with a warning, when the first message is a response or a server notification)").choices(
        DIRECTIONS,
      ),
    )
    .option(
      "--partial",
      "the inputs are excerpts: they may begin and end mid-session (no initialize-first, no unmatched-response for requests before the excerpt, no unanswered-request at its end; a cut first or last line is a warning)",
    )
    .option("--protocol-version <version>", "check against this MCP version whatever the session negotiates")
    .option("--schema <file>", "MCP schema.json to compile and check against instead of the built-in schemas")
    .option("--jobs <n>", "validate up to N files at once, one per thread (this one and N-1 worker threads); capped at the number of files and the available CPUs", positiveInt, 1)
    .option("--list-rules", "print the rule ids, severities and descriptions, and exit")
    .addHelpText("after", "\nExit status: 0 no errors, 1 errors found, 2 unreadable input (or one with no MCP message) or bad options.\nRules: --list-rules.")
    // `-:s2c` (stdin with per-file options) looks like an option to commander: unknown options are
    // let through as operands, and all but `-:OPT[,OPT]` are refused here as commander would.
    .allowUnknownOption()
    .action(async (files: string[], opts: CliOptions, cmd: Command) => {
      const unknown = files.find((f) => f.startsWith("-") && f !== "-" && !f.startsWith("-:"));
      if (unknown !== undefined) cmd.error(`error: unknown option '${unknown}'`, { exitCode: 2, code: "commander.unknownOption" });
      // The rule list is a list, not a report: the report formats (SARIF, JUnit, HTML) have no place for it.
      if (opts.listRules === true && !LIST_RULES_FORMATS.includes(opts.format)) {
        cmd.error(`error: --list-rules prints the rules as ${LIST_RULES_FORMATS.join(" or ")} (--format ${LIST_RULES_FORMATS.join(" | ")}), not --format ${opts.format}`, {
          exitCode: 2,
          code: "commander.conflictingOption",
        });
      }
      process.exitCode = await runValidate(files, opts);
    });
}

async function runValidate(files: string[], opts: CliOptions): Promise<number> {
  // `validate ... | head`: after the reader closed the pipe (EPIPE) the report is no longer
  // written, but the run goes on, so that the exit status still says whether errors were found.
  let piped = true;
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") {
      piped = false;
      return;
    }
    throw err;
  });
  if (opts.listRules === true && opts.format === "json") {
    for (const r of RULE_LIST) process.stdout.write(`${JSON.stringify({ id: r.id, severity: r.severity, description: r.description, spec: r.spec })}\n`);
    return 0;
  }
  if (opts.listRules === true) {
    const width = Math.max(...RULE_LIST.map((r) => r.id.length));
    for (const r of RULE_LIST) process.stdout.write(`${r.id.padEnd(width)}  ${r.severity.padEnd(7)}  ${r.description} [${r.spec}]\n`);
    return 0;
  }
  const split = await Promise.all(files.map(splitInputArgument));
  let inputs = split.map((s) => s.path);
  if (inputs.length === 0) {
    if (process.stdin.isTTY === true) {
      process.stderr.write("orchestra-stdio validate: no input files (give paths, or - / a pipe for stdin)\n");
      return 2;
    }
    inputs = ["-"];
  }
  const color = process.stdout.isTTY === true && process.env.NO_COLOR === undefined && opts.format === "text";
  const reportOnSameTerminal = process.stdout.isTTY === true && sameTerminal(1, 2);
  let bar: ProgressBar | undefined;
  const reporter = createReporter(opts.format, {
    write: (s) => {
      // The report must not share a line with the bar: clear the bar (for good) first.
      if (reportOnSameTerminal) bar?.stop();
      if (piped) process.stdout.write(s);
    },
    color,
  });

  if (progressBarWanted({ stderrIsTTY: process.stderr.isTTY === true, reportOnSameTerminal, format: opts.format })) {
    const total = await totalSize(inputs);
    if (total > PROGRESS_MIN_BYTES) bar = createProgressBar(total);
  }

  const options: ValidateOptions = {
    onFinding: (f) => reporter.finding(f),
    onFileDone: (f) => reporter.fileDone(f),
    jobs: opts.jobs,
  };
  if (reporter.message !== undefined) options.onMessage = (m) => reporter.message!(m); // (html: one thread)
  if (bar !== undefined) options.onProgress = (e) => bar.update(e);
  if (opts.inputFormat !== undefined) options.inputFormat = opts.inputFormat;
  if (opts.direction !== undefined) options.direction = opts.direction;
  if (opts.partial === true) options.partial = true;
  if (split.some((s) => s.options !== undefined)) options.perFile = split.map((s) => s.options);
  if (opts.protocolVersion !== undefined) options.protocolVersion = opts.protocolVersion;
  if (opts.schema !== undefined) options.schemaPath = opts.schema;

  try {
    const { summary } = await validateFiles(inputs, options);
    bar?.stop();
    reporter.end(summary);
    return exitCodeFor(summary);
  } catch (err) {
    bar?.stop();
    if (err instanceof ValidateUsageError) {
      process.stderr.write(`orchestra-stdio validate: ${err.message}\nsee \`orchestra-stdio validate --help\`\n`);
      return 2;
    }
    throw err;
  }
}

/** Sum of the sizes of the regular files among `inputs` (stdin and unreadable paths count 0). */
async function totalSize(inputs: readonly string[]): Promise<number> {
  let total = 0;
  for (const p of inputs) {
    if (p === "-") continue;
    try {
      total += (await stat(p)).size;
    } catch {
      // reported as input/unreadable later
    }
  }
  return total;
}
