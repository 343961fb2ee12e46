/**
 * Memory does not grow with calls (issue 16, item 4): the live heap after a full GC after N and
 * after 10 N calls in one process differ by less than a bound far below what keeping anything per
 * call would add; and `serve`'s young generation keeps its start-up size. Behaviour, not a figure:
 * bench/memory.mjs measures.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QuicSender } from "../../src/quic/quic-link.js";
import { builtinTools } from "../../src/orchestrator/builtin-tools.js";
import { ToolRegistry } from "../../src/orchestrator/registry.js";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/quic-server.js";
import { makePki, toolCallRequest, type TestPki } from "../helpers/quic/index.js";
import { liveHeapBytes } from "../helpers/live-heap.js";
import { CLI, ROOT, tempDir } from "../helpers/cli.js";
import { LineClient } from "../helpers/mcp-lines.js";
import { waitFor } from "../helpers/transport.js";

/**
 * Calls before the first measure. The first thousands of calls still add optimized code and type
 * feedback (a few hundred KiB, then flat), which is not growth with calls.
 */
const N = 1000;
/** Growth allowed between N and 10 N calls (bytes): 9 N calls keeping 128 bytes each would add 1.1 MiB. */
const BOUND = 1024 * 1024;

describe("QuicSender ↔ reference orchestrator (in-process, real QUIC on loopback)", () => {
  let pki: TestPki;
  let server: RunningOrchestrator;
  let sender: QuicSender;
  beforeAll(async () => {
    pki = await makePki();
    server = await startOrchestrator({ tls: pki.server, tools: new ToolRegistry(builtinTools()) });
    // A FIN grace far longer than the test: a completed call's stream still waiting for its FIN
    // would be kept for the whole run, and show as growth.
    sender = new QuicSender({ host: "127.0.0.1", port: server.port, tls: pki.client, finGraceMs: 600_000 });
  });
  afterAll(async () => {
    await sender?.close();
    await server?.stop();
  });

  const calls = async (count: number, inFlight: number): Promise<void> => {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < count) {
        const i = next++;
        const r = await sender.send(toolCallRequest("echo", { text: `call ${i}` }));
        expect(r.response.case).toBe("toolCall");
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
  };

  it(`the live heap after ${10 * N} calls is within ${BOUND / 1024} KiB of the heap after ${N}`, async () => {
    await calls(N, 8);
    const afterN = await liveHeapBytes();
    await calls(9 * N, 8);
    const after10N = await liveHeapBytes();
    expect(after10N - afterN, `live heap after ${N} calls ${afterN} B, after ${10 * N} calls ${after10N} B`).toBeLessThan(BOUND);
  }, 180_000);
});

/** bench/startup/memory-probe.mjs: on SIGUSR2 the process writes its heap (after a full GC) to MEMORY_PROBE_OUT. */
const MEMORY_PROBE = join(ROOT, "bench/startup/memory-probe.mjs");

interface ProbeReport {
  heapUsedAfterGc: number;
  spaces: Array<{ name: string; physical: number }>;
}

describe("serve, embedded orchestrator (bridge, QUIC both ways and the orchestrator in one process)", () => {
  let dir: { path: string; remove: () => Promise<void> };
  let client: LineClient;
  beforeAll(async () => {
    dir = await tempDir("orchestra-memory-");
    const env = { ...process.env, MEMORY_PROBE_OUT: join(dir.path, "probe.json") };
    client = new LineClient(["--import", MEMORY_PROBE, CLI, "serve"], process.execPath, env);
    await client.initialize("2025-06-18", "e2e-memory");
  });
  afterAll(async () => {
    await client?.kill();
    await dir?.remove();
  });

  let nextId = 0;
  const calls = async (count: number, inFlight: number): Promise<void> => {
    let left = count;
    const worker = async (): Promise<void> => {
      while (left > 0) {
        left--;
        const id = `c${nextId++}`;
        const r = await client.request({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: { text: id } } });
        expect(r, JSON.stringify(r)).toMatchObject({ id, result: { content: [{ type: "text", text: id }] } });
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
    client.lines.length = 0; // this process keeps nothing per call either
  };
  /** The bridge's heap after a full GC, read through the memory probe. */
  const probe = async (): Promise<ProbeReport> => {
    const file = join(dir.path, "probe.json");
    rmSync(file, { force: true });
    process.kill(client.pid, "SIGUSR2");
    await waitFor(() => existsSync(file), "the memory probe's report", 30_000);
    let report: ProbeReport | undefined;
    await waitFor(
      () => {
        try {
          report = JSON.parse(readFileSync(file, "utf8")) as ProbeReport;
          return true;
        } catch {
          return false; // still being written
        }
      },
      "a complete memory probe report",
      30_000,
    );
    return report!;
  };

  it(`the live heap after ${10 * N} calls is within ${BOUND / 1024} KiB of the heap after ${N}, and the young generation stays at most 8 MiB`, async () => {
    await calls(N, 8);
    const afterN = await probe();
    await calls(9 * N, 8);
    const after10N = await probe();
    const growth = after10N.heapUsedAfterGc - afterN.heapUsedAfterGc;
    expect(growth, `live heap after ${N} calls ${afterN.heapUsedAfterGc} B, after ${10 * N} calls ${after10N.heapUsedAfterGc} B`).toBeLessThan(BOUND);
    // serve sets --semi-space-growth-factor=1: without it V8 doubles the semi-spaces up to 2 x 16 MiB.
    const newSpace = after10N.spaces.find((sp) => sp.name === "new_space")!.physical;
    expect(newSpace, `new space committed after ${10 * N} calls: ${newSpace} B`).toBeLessThanOrEqual(8 * 2 ** 20);
  }, 180_000);
});
