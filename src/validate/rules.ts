/**
 * The catalogue of validator rules: stable ids, default severities, one-line descriptions and the
 * spec section each rule enforces: the `input/*` rules (about the input file, reported by the
 * readers and `file.ts`) here, and the session rules from their modules (`rules/<id>.ts`, listed
 * in `rules/index.ts`). Reporters (SARIF rule metadata, JUnit test cases) and the docs read this
 * table; findings refer to rules only through {@link RuleId}.
 *
 * Spec sections refer to the MCP specification 2025-06-18 ("basic" = Base Protocol overview,
 * "lifecycle" = Base Protocol / Lifecycle, "cancellation"/"progress" = Base Protocol / Utilities)
 * and to JSON-RPC 2.0 (jsonrpc.org/specification), quoting the requirement's keyword: a rule for a
 * MUST / MUST NOT is an error, one for a SHOULD / SHOULD NOT a warning, and a rule with no
 * keyword behind it (a doubt, or a limit of this tool) a warning. `input/*` rules are about the
 * input file, not the traffic.
 */
import { SESSION_RULES, type SessionRuleId } from "./rules/index.js";
import type { RuleInfo } from "./rules/rule.js";
import type { Severity } from "./types.js";

export type { RuleInfo };

const rule = (id: string, severity: Severity, description: string, spec: string): RuleInfo => ({
  id,
  severity,
  description,
  spec,
});

/** The `input/*` rules. */
const INPUT_RULES = {
  "input/unreadable": rule("input/unreadable", "error", "The input file could not be opened or read.", "-"),
  "input/malformed-record": rule("input/malformed-record", "error", "A capture line or HAR structure is not in the documented shape.", "orchestra-stdio capture format"),
  "input/line-too-long": rule("input/line-too-long", "error", "A line exceeds the maximum line length and was skipped.", "-"),
  "input/dropped-message": rule(
    "input/dropped-message",
    "warning",
    "The recorder dropped a message here (a `serve --capture` dropped record: the bridge refused a line over its length limit); later findings that it could explain are not reported.",
    "orchestra-stdio capture format",
  ),
  "input/invalid-utf8": rule(
    "input/invalid-utf8",
    "error",
    "A line (message) is not valid UTF-8; it is checked with the invalid bytes replaced by U+FFFD.",
    "MCP basic: JSON-RPC messages MUST be UTF-8 encoded",
  ),
  "input/no-messages": rule(
    "input/no-messages",
    "error",
    "The input yields no message in its input format (empty, only blank lines, or nothing in the forced or detected format); exit code 2.",
    "-",
  ),
  "input/unsupported-format": rule(
    "input/unsupported-format",
    "error",
    "The input is in a format that carries no message bodies (the newer Claude Desktop log, which logs only method names and ids): nothing can be checked; the file's one finding (when it holds no message with a body), exit code 2.",
    "-",
  ),
  "input/cut-short": rule(
    "input/cut-short",
    "warning",
    "With --partial: the first or last line of the excerpt does not parse; taken as cut short where the excerpt begins or ends, and not checked.",
    "-",
  ),
  "input/direction-guessed": rule(
    "input/direction-guessed",
    "warning",
    "Plain JSONL without --direction whose first message is a response, or a request or notification only a server sends: the file is read as server→client.",
    "-",
  ),
} as const satisfies Record<string, RuleInfo>;

/** A rule id known to the validator. */
export type RuleId = keyof typeof INPUT_RULES | SessionRuleId;

/** All rules, keyed by id, in catalogue order. The default severity is the one every finding of the rule carries. */
export const RULES = Object.fromEntries([...Object.entries(INPUT_RULES), ...SESSION_RULES.map((r) => [r.meta.id, r.meta] as const)]) as {
  readonly [K in RuleId]: RuleInfo;
};

/** Rules in catalogue order (stable: SARIF `ruleIndex` refers to this order). */
export const RULE_LIST: readonly RuleInfo[] = Object.values(RULES);
