/**
 * The runnable snippets of README.md, read from the file itself so that the README and the tests
 * that run its snippets cannot drift apart. A snippet is the fenced block right after an HTML
 * comment `<!-- client-snippet: NAME -->` (an MCP client's configuration) or
 * `<!-- quick-start: NAME -->` (a shell command).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "./requires.js";

/** A marked fenced block: its marker kind and name, the fence's language and its text. */
export interface ReadmeSnippet {
  kind: "client-snippet" | "quick-start";
  name: string;
  lang: string;
  text: string;
}

/** The placeholders client snippets use, which a test replaces by its own orchestrator's. */
export const SNIPPET_ORCHESTRATOR_ADDR = "127.0.0.1:50100";
export const SNIPPET_CERTS_DIR = "/home/you/.orchestra/certs";

/** Every marked snippet of README.md, in order. */
export function readmeSnippets(readme: string = readFileSync(join(PROJECT_ROOT, "README.md"), "utf8")): ReadmeSnippet[] {
  const out: ReadmeSnippet[] = [];
  const re = /<!-- (client-snippet|quick-start): (\S+) -->\s*```(\w*)\n([\s\S]*?)\n```/g;
  for (const m of readme.matchAll(re)) out.push({ kind: m[1] as ReadmeSnippet["kind"], name: m[2]!, lang: m[3]!, text: m[4]! });
  return out;
}

/** The quick-start command called `name` (a shell command line). */
export function quickStart(name: string): string {
  const s = readmeSnippets().find((x) => x.kind === "quick-start" && x.name === name);
  if (!s) throw new Error(`README.md has no <!-- quick-start: ${name} --> block`);
  return s.text;
}

/** What an MCP client runs for a configured stdio server. */
export interface ConfiguredServer {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * The stdio server a client snippet configures: the only entry of `mcpServers` (Claude Desktop,
 * Cursor) or `servers` (VS Code) in a JSON snippet, or the command after `--` of a
 * `claude mcp add [-e KEY=VALUE]... NAME -- COMMAND ARGS...` line (words separated by spaces; no
 * quoting).
 * @throws Error when the snippet has another shape
 */
export function configuredServer(snippet: ReadmeSnippet): ConfiguredServer {
  if (snippet.lang === "json") {
    const doc = JSON.parse(snippet.text) as { mcpServers?: Record<string, unknown>; servers?: Record<string, unknown> };
    const entries = Object.values(doc.mcpServers ?? doc.servers ?? {});
    if (entries.length !== 1) throw new Error(`${snippet.name}: expected one server entry, got ${entries.length}`);
    const e = entries[0] as { type?: string; command: string; args?: string[]; env?: Record<string, string> };
    if (e.type !== undefined && e.type !== "stdio") throw new Error(`${snippet.name}: type ${e.type} is not stdio`);
    return { command: e.command, args: e.args ?? [], env: e.env ?? {} };
  }
  const words = snippet.text.trim().split(/\s+/);
  if (words[0] !== "claude" || words[1] !== "mcp" || words[2] !== "add") throw new Error(`${snippet.name}: not a \`claude mcp add\` line`);
  const dashes = words.indexOf("--");
  if (dashes < 0) throw new Error(`${snippet.name}: no \`--\` before the command`);
  const env: Record<string, string> = {};
  const options = words.slice(3, dashes);
  for (let i = 0; i < options.length; i++) {
    if (options[i] === "-e" || options[i] === "--env") {
      const [key, ...value] = options[++i]!.split("=");
      env[key!] = value.join("=");
    }
  }
  return { command: words[dashes + 1]!, args: words.slice(dashes + 2), env };
}

/**
 * The quick start's answers as `[id, summary]`: the negotiated version (initialize), whether
 * `echo` is listed (tools/list), the echoed text (tools/call). Compare with {@link QUICK_START_ANSWERS}.
 */
export function quickStartAnswers(stdout: string): unknown[] {
  return stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { id: number; result: { protocolVersion?: string; tools?: Array<{ name: string }>; content?: Array<{ text: string }> } })
    .map((r) => [r.id, r.result.protocolVersion ?? r.result.tools?.some((t) => t.name === "echo") ?? r.result.content?.[0]?.text]);
}
/** What the quick start's three requests get. */
export const QUICK_START_ANSWERS = [
  [1, "2025-06-18"],
  [2, true],
  [3, "hello"],
];
