/**
 * Issue #13 item 3, over the real process: `serve` (embedded orchestrator, real QUIC) with a
 * client that writes 200 concurrent 1 MiB echo calls and then does not read stdout for 20 s.
 * The bridge must stop reading stdin while stdout is backed up (docs/reliability.md), so its
 * peak RSS over those 20 s (VmHWM, which covers the embedded orchestrator too) stays under
 * 400 MiB, and every call is answered exactly once when the client reads again.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { CLI, requireBuiltCli } from "../helpers/cli.js";

const CALLS = 200;
const TEXT_BYTES = 1024 * 1024;
const READER_PAUSE_MS = 20_000;
const PEAK_RSS_LIMIT_MIB = 400;

/** Peak resident set of `pid` in MiB (Linux /proc/PID/status VmHWM). */
function peakRssMiB(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(m[1]) / 1024;
}

const noProc = existsSync("/proc/self/status") ? undefined : "needs Linux /proc/PID/status for the peak RSS";

beforeAll(() => requireBuiltCli());

describe.skipIf(noProc !== undefined)(`serve backpressure${noProc ? ` (skipped: ${noProc})` : ""}`, () => {
  it(`${CALLS} concurrent 1 MiB echo calls with stdout unread for 20 s: nothing lost, peak RSS under ${PEAK_RSS_LIMIT_MIB} MiB`, async () => {
    const child = spawn(process.execPath, [CLI, "serve"], { stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const counts = new Map<unknown, number>();
    let answered = 0;
    let buffered = "";
    let onAnswered: (() => void) | undefined;
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      buffered += d;
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const message = JSON.parse(buffered.slice(0, nl)) as { id?: unknown; result?: { content?: Array<{ text?: string }> } };
        buffered = buffered.slice(nl + 1);
        if (typeof message.id === "number" && message.id >= 1) {
          expect(message.result?.content?.[0]?.text?.length).toBe(TEXT_BYTES);
          counts.set(message.id, (counts.get(message.id) ?? 0) + 1);
          answered++;
          if (answered === CALLS) onAnswered?.();
        }
      }
    });
    const initialize = {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "slow-reader", version: "1" } },
    };
    child.stdin.write(JSON.stringify(initialize) + "\n");
    const text = "x".repeat(TEXT_BYTES);
    // The reader goes away before any answer can arrive.
    child.stdout.pause();
    for (let id = 1; id <= CALLS; id++) {
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: { text } } }) + "\n");
    }
    await new Promise((r) => setTimeout(r, READER_PAUSE_MS));
    // The peak while stdout is backed up: what the backpressure bounds. (The catch-up once the
    // client reads again is a fast reader's ordinary traffic, whose garbage V8 collects at its pace.)
    const peak = peakRssMiB(child.pid!);
    const allAnswered = new Promise<void>((resolve) => (onAnswered = resolve));
    child.stdout.resume();
    await allAnswered;
    child.stdin.end();
    expect(await exited, stderr).toBe(0);
    expect([...counts.keys()].sort((a, b) => (a as number) - (b as number))).toEqual(Array.from({ length: CALLS }, (_, i) => i + 1));
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    console.log(`serve peak RSS with ${CALLS} x 1 MiB calls and a paused reader: ${peak.toFixed(0)} MiB`);
    expect(peak).toBeLessThan(PEAK_RSS_LIMIT_MIB);
  }, 300_000);
});
