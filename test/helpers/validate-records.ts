/**
 * Builders of small MCP captures for the validator's tests: records `[direction, message]` turned
 * into `serve --capture` lines or plain JSONL, and a run of `validateFiles` over them on stdin.
 */
import { Readable } from "node:stream";
import { validateFiles, type Finding, type ValidateOptions, type ValidateResult } from "../../src/validate/index.js";

export type Dir = "c2s" | "s2c";
export type Rec = [Dir, unknown];

export const req = (dir: Dir, id: number | string | undefined, method: string, params?: object): Rec => [
  dir,
  { jsonrpc: "2.0", ...(id === undefined ? {} : { id }), method, ...(params === undefined ? {} : { params }) },
];
export const ok = (dir: Dir, id: number | string | null, result: object = {}): Rec => [dir, { jsonrpc: "2.0", id, result }];
export const err = (dir: Dir, id: number | string | null, code = -32600, message = "Invalid Request"): Rec => [dir, { jsonrpc: "2.0", id, error: { code, message } }];
/** The client's initialize request; `id` null leaves the id out. */
export const init = (version = "2025-06-18", id: number | null = 0): Rec =>
  req("c2s", id ?? undefined, "initialize", { protocolVersion: version, capabilities: {}, clientInfo: { name: "c", version: "1" } });
export const initResult = (version = "2025-06-18", id = 0, caps: object = { tools: {} }): Rec =>
  ok("s2c", id, { protocolVersion: version, capabilities: caps, serverInfo: { name: "s", version: "1" } });
export const initialized: Rec = req("c2s", undefined, "notifications/initialized");
export const handshake = (version = "2025-06-18"): Rec[] => [init(version), initResult(version), initialized];

/** `serve --capture` lines of `records`, one per record. */
export function captureText(records: Rec[]): string {
  return records.map(([dir, msg]) => JSON.stringify({ ts: "2025-06-18T10:00:00.000Z", dir, msg })).join("\n") + "\n";
}

/** Validates `text` (capture lines unless `options.inputFormat` says otherwise) given on stdin. */
export function validateText(text: string | Buffer, options: ValidateOptions = {}): Promise<ValidateResult> {
  return validateFiles(["-"], { inputFormat: "capture", ...options, stdin: Readable.from([Buffer.from(text)]) });
}

/** `line severity rule` of each finding. */
export const brief = (fs: Finding[]): string[] => fs.map((f) => `${f.line} ${f.severity} ${f.rule}`);
