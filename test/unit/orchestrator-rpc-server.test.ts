/**
 * The orchestrator's RPC core without a transport (src/orchestrator/rpc-server.ts): a fake
 * CallLink records what the core writes and how it fails a call; the content is real.
 */
import { describe, expect, it } from "vitest";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { pino } from "pino";
import { PluginRequestSchema, PluginResponseSchema, type PluginRequest, type PluginResponse } from "../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { builtinTools } from "../../src/orchestrator/builtin-tools.js";
import { EventBus } from "../../src/orchestrator/dispatch.js";
import { TOOLS_TOPIC } from "../../src/translate/tools.js";
import { builtinPrompts, PromptRegistry } from "../../src/orchestrator/prompts.js";
import { ToolRegistry, type Tool } from "../../src/orchestrator/registry.js";
import { decodeRequest, RpcServer, type CallFault, type CallLink } from "../../src/orchestrator/rpc-server.js";
import { MemoryStorage } from "../../src/orchestrator/storage.js";
import { MAX_FRAME_BYTES } from "../../src/framing/frame.js";

/** Records the core's calls; `accept: false` plays a peer that can no longer receive. */
class FakeLink implements CallLink {
  frames: Array<{ response: PluginResponse; last: boolean }> = [];
  faults: CallFault[] = [];
  doneWith: boolean[] = [];
  accept = true;

  write(frame: Uint8Array, last: boolean): boolean {
    expect(frame.byteLength).toBeLessThanOrEqual(MAX_FRAME_BYTES);
    if (!this.accept) return false;
    this.frames.push({ response: fromBinary(PluginResponseSchema, frame), last });
    return true;
  }

  fail(fault: CallFault): void {
    this.faults.push(fault);
  }

  done(responded: boolean): void {
    this.doneWith.push(responded);
  }

  /** Resolves once the call is over. */
  async finished(): Promise<void> {
    await expect.poll(() => this.doneWith.length, { timeout: 10_000, interval: 5 }).toBe(1);
  }
}

const HUGE = MAX_FRAME_BYTES + 1024;

const bigTool: Tool = {
  name: "big",
  description: "Returns a result larger than a frame.",
  inputSchema: { type: "object" },
  async handler() {
    return { text: "x".repeat(HUGE) };
  },
  async stream(_args, _ctx, emit) {
    emit({ data: new Uint8Array(HUGE) });
  },
};

function server(options: { streaming?: boolean; storage?: MemoryStorage; tools?: ToolRegistry; events?: EventBus } = {}): RpcServer {
  return new RpcServer(
    {
      tools: options.tools ?? new ToolRegistry([...builtinTools(), bigTool]),
      prompts: new PromptRegistry(builtinPrompts()),
      storage: options.storage ?? new MemoryStorage([]),
      events: options.events ?? new EventBus(),
    },
    pino({ level: "silent" }),
    { streaming: options.streaming ?? true },
  );
}

const req = (request: PluginRequest["request"], requestId = "r1"): PluginRequest => create(PluginRequestSchema, { requestId, request });
const toolCall = (toolName: string, args: Record<string, unknown> = {}) => req({ case: "toolCall", value: { toolName, arguments: args } as never });

describe("RpcServer", () => {
  it("answers a unary request with one last frame echoing request_id, and counts it", async () => {
    const rpc = server();
    const link = new FakeLink();
    rpc.open(link).serve(toolCall("echo", { text: "hi" }));
    await link.finished();
    expect(link.frames).toHaveLength(1);
    const { response, last } = link.frames[0]!;
    expect(last).toBe(true);
    expect(response.requestId).toBe("r1");
    expect(response.response.case === "toolCall" && response.response.value.result).toEqual({ text: "hi" });
    expect(link.doneWith).toEqual([true]);
    expect(rpc.stats).toMatchObject({ streamsOpened: 1, streamsCompleted: 1, toolCalls: 1, activeStreams: 0, peakActiveStreams: 1 });
  });

  it("turns a tool result over 16 MiB into result_too_large and any other oversized answer into the frame_too_large fault", async () => {
    const rpc = server({ storage: new MemoryStorage([{ path: "huge", content: new Uint8Array(HUGE) }]) });
    const tool = new FakeLink();
    rpc.open(tool).serve(toolCall("big"));
    const storage = new FakeLink();
    rpc.open(storage).serve(req({ case: "storageRead", value: { path: "huge" } as never }, "r2"));
    await Promise.all([tool.finished(), storage.finished()]);
    const answer = tool.frames[0]!.response;
    expect(answer.requestId).toBe("r1");
    expect(answer.response.case === "toolCall" && answer.response.value).toMatchObject({ success: false, errorCode: "result_too_large" });
    expect(storage.frames).toEqual([]);
    expect(storage.faults).toEqual(["frame_too_large"]);
    expect(rpc.stats.streamsCompleted).toBe(1);
  });

  it("throws an oversized stream chunk into the emitting tool, whose stream then ends in failure", async () => {
    const rpc = server();
    const link = new FakeLink();
    rpc.open(link).serve(req({ case: "streamStart", value: { toolName: "big", streamId: "s1" } as never }));
    await link.finished();
    expect(link.frames.map((f) => [f.response.response.case, f.last])).toEqual([["streamEnd", true]]);
    const end = link.frames[0]!.response.response;
    expect(end.case === "streamEnd" && end.value).toMatchObject({ success: false, errorCode: "tool_error", errorMessage: expect.stringContaining("exceeds") });
  });

  it("streams chunks then stream_end on a streaming transport, and refuses streaming kinds on the other", async () => {
    const streams = new FakeLink();
    server()
      .open(streams)
      .serve(req({ case: "streamStart", value: { toolName: "count", arguments: { to: 2 }, streamId: "s1" } as never }));
    await streams.finished();
    expect(streams.frames.map((f) => [f.response.response.case, f.last])).toEqual([
      ["streamChunk", false],
      ["streamChunk", false],
      ["streamEnd", true],
    ]);
    const rpc = server({ streaming: false });
    const refused = new FakeLink();
    rpc.open(refused).serve(req({ case: "streamStart", value: { toolName: "count", arguments: { to: 2 } } as never }));
    await refused.finished();
    const answer = refused.frames[0]!.response.response;
    expect(answer.case === "toolCall" && answer.value).toMatchObject({ success: false, errorCode: "unknown_request" });
    expect(rpc.stats.unsupportedRequests).toBe(1);
  });

  it("aborts a cancelled call, writes nothing for it and counts the cancellation once", async () => {
    const rpc = server();
    const link = new FakeLink();
    const call = rpc.open(link);
    call.serve(toolCall("slow", { ms: 60_000 }));
    call.cancel("client cancelled");
    call.cancel("client cancelled again");
    await link.finished();
    expect(call.ac.signal.aborted).toBe(true);
    expect(link.frames).toEqual([]);
    expect(link.faults).toEqual([]);
    expect(link.doneWith).toEqual([false]);
    expect(rpc.stats).toMatchObject({ streamsCancelled: 1, streamsCompleted: 0, activeStreams: 0 });
  });

  it("does not count a cancellation that comes after the answer", async () => {
    const rpc = server();
    const link = new FakeLink();
    const call = rpc.open(link);
    call.serve(toolCall("echo", { text: "done" }));
    await link.finished();
    call.cancel("too late");
    expect(rpc.stats.streamsCancelled).toBe(0);
  });

  it("counts a refused request, fails its call and ends a call that never had a request", () => {
    const rpc = server();
    const malformed = new FakeLink();
    rpc.open(malformed).refuse("malformed");
    const tooLarge = new FakeLink();
    rpc.open(tooLarge).refuse("frame_too_large");
    expect(malformed.faults).toEqual(["malformed"]);
    expect(tooLarge.faults).toEqual(["frame_too_large"]);
    expect([...malformed.doneWith, ...tooLarge.doneWith]).toEqual([false, false]);
    expect(rpc.stats).toMatchObject({ malformedRequests: 1, framesTooLarge: 1, activeStreams: 0 });
  });

  it("fails a call whose handler throws with the internal fault", async () => {
    class BrokenStorage extends MemoryStorage {
      override read(): never {
        throw new Error("disk on fire");
      }
    }
    const link = new FakeLink();
    server({ storage: new BrokenStorage([]) })
      .open(link)
      .serve(req({ case: "storageRead", value: { path: "a" } as never }));
    await link.finished();
    expect(link.faults).toEqual(["internal"]);
    expect(link.frames).toEqual([]);
  });

  it("does not count an answer the peer could not receive", async () => {
    const rpc = server();
    const link = new FakeLink();
    link.accept = false;
    rpc.open(link).serve(toolCall("echo", { text: "lost" }));
    await link.finished();
    expect(link.doneWith).toEqual([false]);
    expect(rpc.stats.streamsCompleted).toBe(0);
  });

  it("on shutdown fails each call neither answered nor cancelled, and stops announcing tool changes", async () => {
    const events = new EventBus();
    let release = (): void => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    // A tool that finishes only when the test says so, even once cancelled.
    const hold: Tool = { name: "hold", description: "Waits for the test.", inputSchema: { type: "object" }, handler: () => gate.then(() => ({})) };
    const tools = new ToolRegistry([...builtinTools(), hold]);
    const announced: string[] = [];
    events.subscribe(TOOLS_TOPIC, (e) => announced.push(`${e.eventType} ${String(e.payload.name)}`));
    const rpc = server({ events, tools });
    const running = new FakeLink();
    const runningCall = rpc.open(running);
    runningCall.serve(toolCall("slow", { ms: 60_000 }));
    const cancelled = new FakeLink();
    const cancelledCall = rpc.open(cancelled);
    cancelledCall.serve(toolCall("hold"));
    cancelledCall.cancel("client cancelled");
    const answered = new FakeLink();
    rpc.open(answered).serve(toolCall("echo", { text: "x" }));
    await answered.finished();
    tools.unregister("echo");
    rpc.shutdown();
    tools.unregister("slow");
    release();
    await Promise.all([running.finished(), cancelled.finished()]);
    expect(runningCall.ac.signal.aborted).toBe(true);
    expect(running.faults).toEqual(["shutdown"]);
    expect(cancelled.faults).toEqual([]);
    expect(cancelled.frames).toEqual([]);
    expect(answered.faults).toEqual([]);
    expect(announced).toEqual(["list_changed echo"]);
    expect(rpc.stats.activeStreams).toBe(0);
  });

  it("decodes a request frame, and returns the decoder's error for bytes that are none", () => {
    const request = toolCall("echo", { text: "hi" });
    const decoded = decodeRequest(toBinary(PluginRequestSchema, request));
    expect(decoded instanceof Error ? decoded.message : decoded.requestId).toBe("r1");
    expect(decodeRequest(new Uint8Array([0xff, 0xff, 0xff]))).toBeInstanceOf(Error);
  });
});
