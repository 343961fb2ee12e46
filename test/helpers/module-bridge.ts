/**
 * The bridge (McpHandler) in front of the reference orchestrator's own dispatch, in process, with
 * the content of modules: what `serve --tools MODULE` does, without QUIC (a unit-test harness).
 */
import { dispatchStream, dispatchUnary, EventBus, refusal, type OrchestratorServices } from "../../src/orchestrator/dispatch.js";
import { loadOrchestratorContent } from "../../src/orchestrator/load-tools.js";
import { FakeStreamingSender, harness } from "./bridge-fakes.js";

/** A {@link harness} whose orchestrator serves `modulePaths` (and the built-ins when `builtins`). */
export async function moduleBridge(modulePaths: string[], builtins = false) {
  const content = await loadOrchestratorContent(modulePaths, builtins);
  const services: OrchestratorServices = { ...content, events: new EventBus(), stats: { toolCalls: 0 } };
  const sender = new FakeStreamingSender(
    async (request) => (await dispatchUnary(services, request, new AbortController().signal)) ?? refusal(request),
    async (request, emit, options) => {
      const last = await dispatchStream(services, request, options?.signal ?? new AbortController().signal, (frame) => void emit(frame.response));
      if (last) emit(last.response);
    },
  );
  return { ...harness(sender), services };
}
