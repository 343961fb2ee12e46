/**
 * The reference orchestrator's answers without a transport (src/orchestrator/dispatch.ts):
 * prompts, in-memory storage, streaming tools, subscriptions to tool-set changes.
 */
import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { PluginRequestSchema, type PluginRequest, type PluginResponse } from "../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { builtinTools } from "../../src/orchestrator/builtin-tools.js";
import { dispatchStream, dispatchUnary, EventBus, refusal, type OrchestratorServices } from "../../src/orchestrator/dispatch.js";
import { TOOLS_TOPIC } from "../../src/translate/tools.js";
import { builtinPrompts, PromptRegistry } from "../../src/orchestrator/prompts.js";
import { ToolRegistry } from "../../src/orchestrator/registry.js";
import { globToRegExp, MemoryStorage } from "../../src/orchestrator/storage.js";

function services(): OrchestratorServices {
  return {
    tools: new ToolRegistry(builtinTools()),
    prompts: new PromptRegistry(builtinPrompts()),
    storage: new MemoryStorage([
      { path: "docs/a.md", content: "A" },
      { path: "docs/sub/b.txt", content: "B" },
    ]),
    events: new EventBus(),
    stats: { toolCalls: 0 },
  };
}

const req = (request: PluginRequest["request"]): PluginRequest => create(PluginRequestSchema, { requestId: "r1", request });
const signal = () => new AbortController().signal;

describe("dispatchUnary", () => {
  it("lists prompts and renders one, answering an unknown prompt with no messages", async () => {
    const s = services();
    const list = await dispatchUnary(s, req({ case: "listPrompts", value: {} as never }), signal());
    expect(list?.response.case === "listPrompts" && list.response.value.prompts.map((p) => p.name)).toEqual(["greet", "review"]);
    const got = await dispatchUnary(s, req({ case: "promptGet", value: { promptName: "review", arguments: { path: "docs/a.md" } } as never }), signal());
    expect(got?.response.case === "promptGet" && got.response.value.messages.map((m) => m.content?.type)).toEqual(["text", "resource"]);
    const unknown = await dispatchUnary(s, req({ case: "promptGet", value: { promptName: "nope", arguments: {} } as never }), signal());
    expect(unknown?.response.case === "promptGet" && unknown.response.value).toMatchObject({ messages: [], description: expect.stringContaining("unknown prompt") });
  });

  it("reads, writes with compare-and-set, lists and deletes storage entries", async () => {
    const s = services();
    const write = (expectedVersion: bigint) =>
      dispatchUnary(s, req({ case: "storageWrite", value: { path: "docs/a.md", content: new TextEncoder().encode("A2"), expectedVersion } as never }), signal());
    const conflict = (await write(0n))!;
    expect(conflict.response.case === "storageWrite" && conflict.response.value).toMatchObject({ success: false, newVersion: 1n });
    const ok = (await write(1n))!;
    expect(ok.response.case === "storageWrite" && ok.response.value).toMatchObject({ success: true, newVersion: 2n });
    const read = (await dispatchUnary(s, req({ case: "storageRead", value: { path: "docs/a.md" } as never }), signal()))!;
    expect(read.response.case === "storageRead" && new TextDecoder().decode(read.response.value.content)).toBe("A2");
    const missing = (await dispatchUnary(s, req({ case: "storageRead", value: { path: "nope" } as never }), signal()))!;
    expect(missing.response.case === "storageRead" && missing.response.value.version).toBe(0n);
    const list = (await dispatchUnary(s, req({ case: "storageList", value: { prefix: "docs/", pattern: "docs/*" } as never }), signal()))!;
    expect(list.response.case === "storageList" && list.response.value.entries.map((e) => [e.path, e.size, e.version])).toEqual([["docs/a.md", 2n, 2n]]);
    const del = (await dispatchUnary(s, req({ case: "storageDelete", value: { path: "docs/a.md" } as never }), signal()))!;
    expect(del.response.case === "storageDelete" && del.response.value.success).toBe(true);
    expect(globToRegExp("docs/**").test("docs/sub/b.txt")).toBe(true);
    expect(globToRegExp("docs/*.md").test("docs/sub/b.md")).toBe(false);
  });
});

describe("refusal", () => {
  it("answers a kind the orchestrator does not implement as upstream does: tool_call unknown_request, echoing request_id", async () => {
    const s = services();
    for (const r of [req({ case: "boot", value: {} as never }), req({ case: "publish", value: { topic: "t" } as never }), req({ case: undefined })]) {
      expect(await dispatchUnary(s, r, signal())).toBeUndefined();
      const answer = refusal(r);
      expect(answer.requestId).toBe("r1");
      expect(answer.response).toEqual({
        case: "toolCall",
        value: expect.objectContaining({ success: false, errorCode: "unknown_request", errorMessage: `unrecognized request type: ${r.request.case ?? "an empty request"}` }),
      });
    }
  });
});

describe("dispatchStream", () => {
  it("streams count as chunks then stream_end, and refuses a tool without a streaming form", async () => {
    const s = services();
    const frames: PluginResponse[] = [];
    const last = await dispatchStream(s, req({ case: "streamStart", value: { streamId: "s1", toolName: "count", arguments: { to: 3 } } as never }), signal(), (f) =>
      frames.push(f),
    );
    expect(frames.map((f) => (f.response.case === "streamChunk" ? new TextDecoder().decode(f.response.value.data) : "?"))).toEqual(["1\n", "2\n", "3\n"]);
    expect(last?.response.case === "streamEnd" && last.response.value).toMatchObject({ streamId: "s1", success: true, totalChunks: 3n });
    const refused = await dispatchStream(s, req({ case: "streamStart", value: { streamId: "s2", toolName: "echo", arguments: { text: "x" } } as never }), signal(), () => {
      throw new Error("no chunk expected");
    });
    expect(refused?.response.case === "streamEnd" && refused.response.value).toMatchObject({ success: false, errorCode: "stream_unsupported" });
  });

  it("delivers a tools-topic event per registry change until the subscription is aborted", async () => {
    const s = services();
    const unsubscribe = s.tools.onChange((c) => s.events.publish(TOOLS_TOPIC, "list_changed", { change: c.kind, name: c.name }));
    const ac = new AbortController();
    const frames: PluginResponse[] = [];
    const done = dispatchStream(s, req({ case: "subscribe", value: { subscriptionId: "sub", topic: TOOLS_TOPIC, filters: {} } as never }), ac.signal, (f) => frames.push(f));
    s.tools.unregister("echo");
    expect(frames.map((f) => f.response.case === "eventDelivery" && [f.response.value.subscriptionId, f.response.value.eventType, f.response.value.payload])).toEqual([
      ["sub", "list_changed", { change: "unregistered", name: "echo" }],
    ]);
    ac.abort();
    expect(await done).toBeUndefined();
    expect(s.events.subscribers(TOOLS_TOPIC)).toBe(0);
    unsubscribe();
  });
});
