/**
 * Fakes and helpers shared by the bridge unit tests (test/unit/bridge-*.test.ts): a scripted
 * orchestrator (tools, prompts, storage), a streaming fake sender, and a handler harness.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { PluginResponseSchema, type PluginRequest, type PluginResponse } from "../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { serialize } from "../../src/jsonrpc/serialize.js";
import { McpHandler, type HandlerOptions } from "../../src/bridge/handler.js";
import { RefusedKinds, refusalOf, StreamUnsupportedError, type FrameHandler, type StreamingSender } from "../../src/transport/sender.js";
import type { OutboundLine } from "../../src/jsonrpc/message.js";
import { SenderError, type SendOptions } from "../../src/transport/sender.js";
import { FakeSender, type Reply } from "./fake-sender.js";

export type ResponseValue = MessageInitShape<typeof PluginResponseSchema>["response"];

/** A `PluginResponse` echoing `request`'s id. */
export function answer(request: PluginRequest, value: ResponseValue): PluginResponse {
  return create(PluginResponseSchema, { requestId: request.requestId, response: value });
}

export const ECHO_SCHEMA = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };

/** Storage of the scripted orchestrator: path → [bytes, metadata]. */
export const STORAGE: Record<string, [Uint8Array, Record<string, string>]> = {
  "docs/a.md": [new TextEncoder().encode("# A\n"), { mimeType: "text/markdown" }],
  "docs/b c.txt": [new TextEncoder().encode("b ✓"), {}],
  "data/x.bin": [new Uint8Array([0, 255, 1]), {}],
  "other/z.txt": [new TextEncoder().encode("z"), {}],
};

/**
 * A scripted orchestrator: tools `echo`, `fails`, `count`; prompts `greet {name*}` and
 * `review {path*}` (embeds a storage entry); storage {@link STORAGE}.
 */
export const scripted: Reply = (request) => {
  const req = request.request;
  switch (req.case) {
    case "listTools":
      return answer(request, {
        case: "listTools",
        value: {
          tools: [
            { name: "echo", description: "Echoes text", inputSchema: ECHO_SCHEMA },
            { name: "fails", description: "Always fails", inputSchema: { type: "object" } },
            { name: "count", description: "Counts", inputSchema: { type: "object", properties: { to: { type: "integer", minimum: 1 } }, required: ["to"] } },
          ],
        },
      });
    case "toolCall": {
      const { toolName, arguments: args } = req.value;
      if (toolName === "echo") return answer(request, { case: "toolCall", value: { success: true, result: { text: String(args?.text) } } });
      if (toolName === "count") return answer(request, { case: "toolCall", value: { success: true, result: { text: "unary" } } });
      return answer(request, { case: "toolCall", value: { success: false, errorCode: "boom", errorMessage: "it broke" } });
    }
    case "listPrompts":
      return answer(request, {
        case: "listPrompts",
        value: {
          prompts: [
            { name: "greet", description: "Greets", arguments: [{ name: "name", description: "Who", required: true }, { name: "style" }] },
            { name: "review", description: "", arguments: [{ name: "path", required: true }] },
          ],
        },
      });
    case "promptGet": {
      const { promptName, arguments: args } = req.value;
      if (promptName === "greet") {
        return answer(request, {
          case: "promptGet",
          value: { description: "A greeting", messages: [{ role: "user", content: { type: "text", text: `Hello ${args.name}` } }] },
        });
      }
      return answer(request, {
        case: "promptGet",
        value: {
          messages: [
            { role: "user", content: { type: "text", text: "Review:" } },
            { role: "user", content: { type: "resource", text: args.path ?? "" } },
          ],
        },
      });
    }
    case "storageList": {
      const entries = Object.entries(STORAGE)
        .filter(([path]) => path.startsWith(req.value.prefix))
        .map(([path, [bytes]]) => ({ path, size: BigInt(bytes.byteLength), version: 1n }));
      return answer(request, { case: "storageList", value: { entries } });
    }
    case "storageRead": {
      const hit = STORAGE[req.value.path];
      return answer(request, { case: "storageRead", value: hit ? { content: hit[0], metadata: hit[1], version: 3n } : { version: 0n } });
    }
    default:
      throw new Error(`scripted orchestrator: unexpected ${req.case}`);
  }
};

/** What a streaming fake does with one streaming request: emit frames, then resolve. */
export type StreamReply = (request: PluginRequest, emit: (value: ResponseValue) => boolean | void, options?: SendOptions) => Promise<void>;

/**
 * A {@link FakeSender} that also streams (implements {@link StreamingSender}). Like
 * the transport client `RpcClient` (one connection), it reads a refusal from a stream's first frame with
 * {@link refusalOf} and then refuses that kind at once with {@link StreamUnsupportedError}.
 */
export class FakeStreamingSender extends FakeSender implements StreamingSender {
  readonly streamRequests: PluginRequest[] = [];
  readonly streamOptions: Array<SendOptions | undefined> = [];
  readonly refused = new RefusedKinds();

  constructor(
    reply: Reply,
    private readonly streamReply: StreamReply,
  ) {
    super(reply);
  }

  async stream(request: PluginRequest, onFrame: FrameHandler, options?: SendOptions): Promise<void> {
    const earlier = this.refused.reason(request.request.case);
    if (earlier !== undefined) throw new StreamUnsupportedError(earlier);
    this.streamRequests.push(request);
    this.streamOptions.push(options);
    let done = false;
    let frames = 0;
    await new Promise<void>((resolve, reject) => {
      const emit = (value: ResponseValue): boolean => {
        if (done || options?.signal?.aborted) return true;
        const frame = answer(request, value);
        const refusal = ++frames === 1 ? refusalOf(request, frame) : undefined;
        if (refusal !== undefined) {
          this.refused.add(request.request.case, refusal);
          done = true;
          reject(new StreamUnsupportedError(refusal));
          return true;
        }
        try {
          done = onFrame(frame) === true;
        } catch (e) {
          done = true;
          reject(e);
        }
        return done;
      };
      options?.signal?.addEventListener("abort", () => reject(new SenderError("aborted", "stream aborted")), { once: true });
      this.streamReply(request, emit, options).then(resolve, reject);
    });
  }
}

/** A handler harness: output collected in `out`; `send` handles one message and waits for idle. */
export function harness(sender: FakeSender, options: Partial<HandlerOptions> = {}) {
  const out: OutboundLine[] = [];
  const handler = new McpHandler({
    sender,
    sink: (m) => out.push(JSON.parse(serialize(m)) as OutboundLine), // as written to stdout (exact ids spliced)
    serverInfo: { name: "orchestra-stdio", version: "0.0.0-test" },
    sessionId: "session-1",
    ...options,
  });
  const send = async (message: unknown): Promise<void> => {
    handler.handleLine(typeof message === "string" ? message : JSON.stringify(message));
    await handler.idle();
  };
  /** Sends `initialize` for `version` and clears its answer from `out`. */
  const init = async (version: string): Promise<Record<string, unknown>> => {
    await send({ jsonrpc: "2.0", id: "init", method: "initialize", params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "t", version: "1" } } });
    const answerLine = out.shift() as { result: Record<string, unknown> };
    out.length = 0;
    return answerLine.result;
  };
  /** The responses (not notifications) in `out`, keyed by id. */
  const byId = (): Map<unknown, Record<string, unknown>> => {
    const map = new Map<unknown, Record<string, unknown>>();
    for (const m of out) if (!Array.isArray(m) && "id" in m) map.set(m.id, m as unknown as Record<string, unknown>);
    return map;
  };
  return { handler, out, send, init, byId };
}

/** The `_meta` of a 2026-07-28 request (MCP 2026-07-28 `RequestMetaObject`). */
export function modernMeta(extra: Record<string, unknown> = {}, version = "2026-07-28"): Record<string, unknown> {
  return {
    "io.modelcontextprotocol/protocolVersion": version,
    "io.modelcontextprotocol/clientInfo": { name: "ExampleClient", version: "1.0.0" },
    "io.modelcontextprotocol/clientCapabilities": {},
    ...extra,
  };
}

export { FakeSender };
