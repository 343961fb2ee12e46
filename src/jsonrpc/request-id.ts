/**
 * Request ids kept exactly as the client wrote them (JSON-RPC 2.0 §4: the response "MUST be the
 * same as the value of the id member in the Request Object"; MCP: a `RequestId` is a string or
 * an integer).
 *
 * `JSON.parse` turns `9007199254740993` into `9007199254740992` and `1e2` into `100`; an
 * {@link ExactId} keeps the token text (found by ./line-scan.ts) for writing, and a key that
 * compares ids by their exact value: strings by their characters, integers by their exact
 * decimal value (`1e2`, `100` and `100.0` are the same integer; `9007199254740993` and
 * `9007199254740992` are not).
 */
import { exactToken, type ExactToken } from "./serialize.js";

export class ExactId implements ExactToken {
  /** Identity for in-flight maps: `s:<string>` or `i:<exact decimal integer>`. */
  readonly key: string;
  readonly canonical: boolean;

  private constructor(
    /** The JS value (`JSON.parse(text)`). */
    readonly value: string | number,
    /** The JSON token as written. */
    readonly text: string,
    key: string,
  ) {
    this.key = key;
    this.canonical = JSON.stringify(value) === text;
  }

  /**
   * The id written as `text` (a JSON token) whose parsed value is `value`, or `undefined` when it
   * is not an MCP request id (not a string, not an exact integer, or `text` is not `value`'s token).
   */
  static fromToken(text: string, value: unknown): ExactId | undefined {
    if (typeof value === "string") {
      return text.startsWith('"') && safeParse(text) === value ? new ExactId(value, text, `s:${value}`) : undefined;
    }
    if (typeof value !== "number" || !Number.isFinite(value) || Number(text) !== value) return undefined;
    const exact = exactInteger(text);
    return exact === undefined ? undefined : new ExactId(value, text, `i:${exact}`);
  }

  /** The id written as `text`, or `undefined` when `text` is not a JSON string or exact integer. */
  static parse(text: string): ExactId | undefined {
    return ExactId.fromToken(text, safeParse(text));
  }

  /**
   * The id whose parsed value is `value`, written as `text` when that is `value`'s token (the
   * scanner's record), else judged from `value` alone (no text, or the text of another member).
   */
  static fromSource(text: string | undefined, value: unknown): ExactId | undefined {
    if (text !== undefined && safeParse(text) === value) return ExactId.fromToken(text, value);
    return ExactId.fromValue(value);
  }

  /** The id from a parsed value alone (no source text known): exact only for what JS holds exactly. */
  static fromValue(value: unknown): ExactId | undefined {
    if (typeof value === "string") return new ExactId(value, JSON.stringify(value), `s:${value}`);
    if (typeof value === "number" && Number.isInteger(value)) return ExactId.fromToken(JSON.stringify(value), value);
    return undefined;
  }

  toJSON(): unknown {
    return exactToken(this);
  }

  /**
   * The id in a log record: its value when that is the id exactly (a string, or an integer JSON
   * numbers hold exactly: `1e3` is 1000), else the token text as a string (`"9007199254740993"`),
   * which a log's JSON number would round.
   */
  get logged(): string | number {
    return typeof this.value === "string" || Number.isSafeInteger(this.value) ? this.value : this.text;
  }

  /** The token text, for messages and logs. */
  toString(): string {
    return this.text;
  }
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
/** An integer token without leading zeros, fraction or exponent, and not `-0`: its own canonical decimal. */
const PLAIN_INTEGER = /^(?:0|-?[1-9]\d*)$/;
/** Longest exponent considered (a larger one is not a finite double anyway). */
const MAX_EXPONENT = 400;

/**
 * The exact integer a JSON number token denotes, as a canonical decimal (`1e2` → `100`,
 * `-0` → `0`, `1.50e1` → `15`), or `undefined` when it is not an integer (`1.5`,
 * `9007199254740993.5`).
 */
export function exactInteger(text: string): string | undefined {
  if (PLAIN_INTEGER.test(text)) return text; // already canonical: the usual id
  const m = NUMBER.exec(text);
  if (!m) return undefined;
  const [, sign, int, frac = "", exp = "0"] = m;
  let exponent = Number(exp) - frac.length;
  let digits = (int! + frac).replace(/^0+/, "");
  if (digits === "") return "0";
  if (exponent < 0) {
    const zeros = digits.length - digits.replace(/0+$/, "").length;
    if (zeros < -exponent) return undefined;
    digits = digits.slice(0, digits.length + exponent);
    exponent = 0;
  }
  if (exponent > MAX_EXPONENT) return undefined;
  return sign + digits + "0".repeat(exponent);
}
