/**
 * Memory does not grow with calls (issue 16, item 4): the live heap after a full GC after N and
 * after 10 N calls in one process differ by less than a bound far below what keeping anything per
 * call would add. Behaviour, not a figure: bench/memory.mjs measures.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QuicSender } from "../../src/quic/quic-link.js";
import { builtinTools } from "../../src/orchestrator/builtin-tools.js";
import { ToolRegistry } from "../../src/orchestrator/registry.js";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/quic-server.js";
import { makePki, toolCallRequest, type TestPki } from "../helpers/quic/index.js";
import { liveHeapBytes } from "../helpers/live-heap.js";

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
