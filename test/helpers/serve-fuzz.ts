/**
 * A seeded fuzzer for `orchestra-stdio serve` over raw stdio (issue #13 item 7): MCP lines, many
 * of them mutated (byte flips, truncation, NUL, invalid UTF-8, huge numbers, deep nesting,
 * CR-only line ends, batches), written to one `serve` process (embedded orchestrator, real QUIC).
 *
 * Oracle, judged from the exact bytes written (split as the MCP stdio transport does):
 * - the process does not crash and exits 0 on stdin EOF; stderr names no stack overflow;
 * - stdout holds only complete lines, each a JSON-RPC response, notification or batch answer;
 * - every request gets exactly one answer; one left intact gets it with its id token as written,
 *   a mutated one with `null` or an id token written in that line; notifications and responses
 *   get none; a batch gets one array answering exactly its elements that are answered, or
 *   nothing when none is.
 */
import { spawn } from "node:child_process";
import { exceedsDepth } from "../../src/jsonrpc/line-scan.js";
import { mulberry32 } from "./prng.js";
import { CLI } from "./cli.js";

export interface FuzzOptions {
  seed: number;
  lines: number;
  /** How long `serve` may take after stdin EOF before the run counts as hung, ms. */
  timeoutMs?: number;
}

export interface FuzzResult {
  seed: number;
  lines: number;
  /** What broke the oracle (empty when nothing did), at most 20. */
  violations: string[];
  exitCode: number | null;
  inputBytes: number;
  answers: number;
}

type Rng = () => number;

const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;
const int = (rng: Rng, n: number): number => Math.floor(rng() * n);

/** A unique id token for message `k`, in one of several forms; `valid` tells whether MCP allows it. */
function idToken(rng: Rng, k: number): { text: string; valid: boolean } {
  switch (int(rng, 7)) {
    case 0:
      return { text: String(k), valid: true };
    case 1:
      return { text: JSON.stringify(`f-${k}\u2028é`), valid: true };
    case 2:
      return { text: `9007199254741${String(k).padStart(7, "0")}`, valid: true }; // beyond 2^53
    case 3:
      return { text: `${k}0e-1`, valid: true };
    case 4:
      return { text: `-${k}`, valid: true };
    case 5:
      return { text: `${k}.5`, valid: false };
    default:
      return { text: pick(rng, ["true", "null", "{}", "[]", `${k}e400`]), valid: false };
  }
}

const TEXT_ALPHABET = ["a", "b", " ", "é", "\u2028", "\u2029", "☃", "\\n", '\\"', "\\u0000", "😀"];

function randomText(rng: Rng): string {
  let s = "";
  for (let i = int(rng, 40); i > 0; i--) s += pick(rng, TEXT_ALPHABET);
  return s;
}

const nest = (depth: number) => "[".repeat(depth) + "0" + "]".repeat(depth);

/** One message's JSON text; `id` is spliced in verbatim for requests. */
function baseMessage(rng: Rng, id: string, k: number): { text: string; request: boolean } {
  const req = (method: string, params?: string) => ({
    text: `{"jsonrpc":"2.0","id":${id},"method":"${method}"${params === undefined ? "" : `,"params":${params}`}}`,
    request: true,
  });
  const note = (method: string, params?: string) => ({ text: `{"jsonrpc":"2.0","method":"${method}"${params === undefined ? "" : `,"params":${params}`}}`, request: false });
  switch (int(rng, 14)) {
    case 0:
    case 1:
      return req("ping");
    case 2:
      return req("tools/list");
    case 3:
    case 4:
      return req("tools/call", `{"name":"echo","arguments":{"text":"${randomText(rng)}"}}`);
    case 5:
      return req("tools/call", `{"name":"echo","arguments":{"text":"x","deep":${nest(pick(rng, [100, 250, 300, 5000]))}}}`);
    case 6:
      return req("tools/call", `{"name":"echo","arguments":{"text":"x","n":${pick(rng, ["1e400", "123456789012345678901234567890", "-0", "9007199254740993"])}}}`);
    case 7:
      return req(pick(rng, ["prompts/list", "resources/list", "resources/templates/list", "nope/nothing"]));
    case 8:
      return req("tools/list", "[1,2]");
    case 9:
      return note("notifications/cancelled", `{"requestId":"gone-${k}","reason":"fuzz"}`);
    case 10:
      return note(pick(rng, ["notifications/initialized", "notifications/whatever", "notifications/progress"]), pick(rng, [undefined, '{"progressToken":"p","progress":1}']));
    case 11:
      return { text: `{"jsonrpc":"2.0","id":"r-${k}","result":{}}`, request: false };
    case 12:
      return { text: pick(rng, ["5", '"x"', "null", "{}", '{"jsonrpc":"2.0"}']), request: false };
    default:
      return { text: nest(pick(rng, [257, 5000])), request: false };
  }
}

const INVALID_UTF8 = [Buffer.from([0xff]), Buffer.from([0xc3]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80])];

/** One mutation of `line` (never a newline added on purpose; a flipped byte may make one). */
function mutate(rng: Rng, line: Buffer): Buffer {
  const at = int(rng, line.length + 1);
  switch (int(rng, 6)) {
    case 0: {
      const copy = Buffer.from(line);
      if (copy.length > 0) copy[Math.min(at, copy.length - 1)] = int(rng, 256);
      return copy;
    }
    case 1:
      return line.subarray(0, at);
    case 2:
      return Buffer.concat([line.subarray(0, at), Buffer.from([0]), line.subarray(at)]);
    case 3:
      return Buffer.concat([line.subarray(0, at), pick(rng, INVALID_UTF8), line.subarray(at)]);
    case 4: {
      const text = line.toString("latin1");
      const digits = /\d+/g;
      const runs = [...text.matchAll(digits)];
      if (runs.length === 0) return line;
      const run = pick(rng, runs);
      const huge = pick(rng, ["1e400", "123456789012345678901234567890", "-1e-400", "1.5"]);
      return Buffer.from(text.slice(0, run.index) + huge + text.slice(run.index! + run[0].length), "latin1");
    }
    default:
      return Buffer.concat([line.subarray(0, at), Buffer.from(pick(rng, ["{", "}", "[", "]", ",", '"', ":"])), line.subarray(at)]);
  }
}

/** The input: its bytes, and for each line left intact the id tokens of its requests. */
export function generateInput(seed: number, lines: number): { input: Buffer; intact: Map<string, string[]> } {
  const rng = mulberry32(seed);
  const intact = new Map<string, string[]>();
  const parts: Buffer[] = [];
  if (rng() < 0.5) parts.push(Buffer.from([0xef, 0xbb, 0xbf])); // a BOM, as Windows clients write
  // Batches exist in 2025-03-26 only.
  const init = '{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}';
  parts.push(Buffer.from(init + "\n" + '{"jsonrpc":"2.0","method":"notifications/initialized"}\n'));
  let k = 1;
  for (let n = 0; n < lines; n++) {
    const batch = rng() < 0.15;
    const members: string[] = [];
    const ids: string[] = [];
    for (let m = batch ? 1 + int(rng, 4) : 1; m > 0; m--) {
      const id = idToken(rng, k++);
      const message = baseMessage(rng, id.text, k);
      members.push(message.text);
      // The answer carries the token as written, U+2028/U+2029 escaped (as on every stdout line).
      if (message.request) ids.push(id.valid ? id.text.replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029") : "null");
    }
    const text = batch ? `[${members.join(",")}]` : members[0]!;
    let bytes = Buffer.from(text);
    if (rng() < 0.45) {
      bytes = mutate(rng, bytes);
      if (rng() < 0.2) bytes = mutate(rng, bytes);
    } else {
      intact.set(text, ids);
    }
    const end = rng() < 0.03 ? "\r" : rng() < 0.1 ? "\r\n" : "\n"; // CR alone does not end a line
    parts.push(bytes, Buffer.from(end));
  }
  return { input: Buffer.concat(parts), intact };
}

/** Lines as the MCP stdio transport splits them (see src/framing/line-splitter.ts). */
function splitLines(input: Buffer): string[] {
  let start = input.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf])) ? 3 : 0;
  const out: string[] = [];
  while (start <= input.length) {
    let end = input.indexOf(0x0a, start);
    if (end === -1) end = input.length;
    let line = input.subarray(start, end);
    if (line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, -1);
    if (!/^[ \t\r]*$/.test(line.toString("latin1"))) out.push(line.toString("utf8"));
    start = end + 1;
  }
  return out;
}

/** Whether a parsed message gets an answer from the bridge. */
function answered(message: unknown, inBatch: boolean): boolean {
  if (Array.isArray(message)) return inBatch; // a batch in a batch is answered with one error
  if (message === null || typeof message !== "object") return true;
  if ("method" in message) return "id" in message;
  return !("result" in message || "error" in message);
}

/** What one input line should get: `answers` answers, in one array when `batch`. */
interface Expectation {
  line: string;
  answers: number;
  batch: boolean;
  /** Id tokens of a line left intact. */
  ids?: string[];
}

function expectationOf(line: string, intact: Map<string, string[]>): Expectation {
  const ids = intact.get(line);
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch {
    return { line, answers: 1, batch: false };
  }
  if (exceedsDepth(message, 256)) return { line, answers: 1, batch: false };
  if (!Array.isArray(message)) return { line, answers: answered(message, false) ? 1 : 0, batch: false, ...(ids ? { ids } : {}) };
  if (message.length === 0) return { line, answers: 1, batch: false };
  return { line, answers: message.filter((m) => answered(m, true)).length, batch: true, ...(ids ? { ids } : {}) };
}

/** The id token of each response in an output line, as written (the bridge writes `{"jsonrpc":"2.0","id":…` first). */
const ID_TOKEN = /\{"jsonrpc":"2\.0","id":(null|-?\d[\d.eE+-]*|"(?:[^"\\]|\\.)*")[,}]/g;

/** Values written after an `"id":` member name anywhere in `line` (a superset of its id tokens). */
const WRITTEN_ID = /"id"\s*:\s*(-?\d[\d.eE+-]*|"(?:[^"\\]|\\.)*")/g;

/** The tokens `line` writes as id values, as the bridge would echo them (U+2028/U+2029 escaped). */
function writtenIds(line: string): string[] {
  const escaped = line.replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
  return [...escaped.matchAll(WRITTEN_ID)].map((m) => m[1]!);
}

/** Checks the output of one run against the input; returns the violations. */
export function judge(input: Buffer, intact: Map<string, string[]>, stdout: string): { violations: string[]; answers: number } {
  const violations: string[] = [];
  const fail = (why: string) => violations.length < 20 && violations.push(why);
  const expected = splitLines(input)
    .slice(2)
    .map((l) => expectationOf(l, intact)); // after initialize + initialized
  if (stdout.length > 0 && !stdout.endsWith("\n")) fail("stdout does not end with a complete line");
  const singles: string[] = []; // id tokens of answers written alone
  const arrays: string[][] = []; // id tokens of each batch answer
  let answers = 0;
  for (const [n, text] of stdout.split("\n").slice(0, -1).entries()) {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      fail(`output line ${n + 1} is not JSON: ${text.slice(0, 200)}`);
      continue;
    }
    const tokens = [...text.matchAll(ID_TOKEN)].map((m) => m[1]!);
    if (Array.isArray(message)) {
      if (message.length === 0 || tokens.length !== message.length || !message.every((m) => m && typeof m === "object" && "id" in m && "result" in m !== "error" in m)) {
        fail(`output line ${n + 1} is not a batch answer: ${text.slice(0, 200)}`);
      }
      arrays.push(tokens);
      answers += tokens.length;
      continue;
    }
    const m = message as Record<string, unknown>;
    if (m === null || typeof m !== "object" || m.jsonrpc !== "2.0") {
      fail(`output line ${n + 1} is not JSON-RPC 2.0: ${text.slice(0, 200)}`);
      continue;
    }
    if ("method" in m && !("id" in m)) continue; // a notification from the bridge (log, list_changed)
    if (!("id" in m) || "result" in m === "error" in m || tokens.length === 0) {
      fail(`output line ${n + 1} is not a response: ${text.slice(0, 200)}`);
      continue;
    }
    if (tokens[0] === '"init"') continue;
    singles.push(tokens[0]!);
    answers++;
  }
  // Intact lines: exactly their ids, once.
  const take = (pool: string[], token: string): boolean => {
    const i = pool.indexOf(token);
    if (i === -1) return false;
    pool.splice(i, 1);
    return true;
  };
  const rest: Expectation[] = [];
  for (const e of expected) {
    if (e.ids && !e.batch && e.answers === 1 && e.ids.length === 1) {
      if (!take(singles, e.ids[0]!)) fail(`intact request ${e.line.slice(0, 120)} was not answered with id ${e.ids[0]}`);
    } else if (e.ids && e.batch && e.answers > 0 && e.ids.length === e.answers && !e.ids.includes("null")) {
      const want = [...e.ids].sort().join(" ");
      const i = arrays.findIndex((a) => [...a].sort().join(" ") === want);
      if (i === -1) fail(`intact batch ${e.line.slice(0, 120)} was not answered with ids ${want}`);
      else arrays.splice(i, 1);
    } else if (e.answers > 0) {
      rest.push(e);
    }
  }
  // The others: the right number of answers, each with null or an id written in its line.
  const restSingles = rest.filter((e) => !e.batch);
  if (singles.length !== restSingles.length) fail(`${singles.length} answers for ${restSingles.length} other lines that need one`);
  const written = new Set(restSingles.flatMap((e) => writtenIds(e.line)));
  for (const token of singles) {
    if (token !== "null" && !written.has(token)) fail(`answer with id ${token} matches no request written with that id`);
  }
  const restBatches = rest
    .filter((e) => e.batch)
    .map((e) => e.answers)
    .sort((a, b) => a - b);
  const gotBatches = arrays.map((a) => a.length).sort((a, b) => a - b);
  if (restBatches.join(",") !== gotBatches.join(",")) fail(`batch answer sizes ${gotBatches.join(",")} for batches needing ${restBatches.join(",")}`);
  return { violations, answers };
}

/** Runs `serve` on a generated input and judges its output. */
export async function runServeFuzz({ seed, lines, timeoutMs = 120_000 }: FuzzOptions): Promise<FuzzResult> {
  const { input, intact } = generateInput(seed, lines);
  const child = spawn(process.execPath, [CLI, "serve"], { stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d.length > 100_000 ? d.slice(0, 100_000) : d));
  child.stdin.on("error", () => {}); // a crashed child: reported below
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  child.stdin.end(input);
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<"hung">((resolve) => (timer = setTimeout(() => resolve("hung"), timeoutMs)));
  const outcome = await Promise.race([exited, hung]);
  clearTimeout(timer);
  if (outcome === "hung") {
    child.kill("SIGKILL");
    await exited;
    return { seed, lines, violations: [`serve did not exit within ${timeoutMs} ms of stdin EOF`], exitCode: null, inputBytes: input.length, answers: 0 };
  }
  const { violations, answers } = judge(input, intact, stdout);
  if (outcome !== 0) violations.unshift(`serve exited with ${outcome}; stderr tail: ${stderr.slice(-2000)}`);
  if (/Maximum call stack|FATAL ERROR|Uncaught|unhandled/i.test(stderr))
    violations.unshift(`stderr reports a crash: ${stderr.match(/.*(Maximum call stack|FATAL ERROR|Uncaught|unhandled).*/i)?.[0]?.slice(0, 500)}`);
  return { seed, lines, violations, exitCode: outcome, inputBytes: input.length, answers };
}
