/**
 * What the reference orchestrator answers, independent of the transport (called by the RPC core,
 * ./rpc-server.ts, for every adapter).
 *
 * Unary kinds ({@link dispatchUnary}): one request → one response.
 * - `health` → `HealthResult{STATUS_HEALTHY}`;
 * - `list_tools` → every registered tool; `tool_call` → the {@link ToolRegistry}'s outcome;
 * - `list_prompts` → the {@link PromptRegistry}; `prompt_get` → the rendered prompt (an unknown
 *   prompt or a missing required argument answers a `PromptGetResponse` with no messages and
 *   the reason as `description`: the message has no error field, and the bridge checks both
 *   before asking); a `render` that fails answers `tool_call{success: false, error_code:
 *   "prompt_error", error_message: "prompt <name>: <message>"}` (the protocol's failure shape,
 *   as for a refused kind), which the bridge turns into a JSON-RPC error;
 * - `storage_read` / `storage_write` / `storage_delete` / `storage_list` → the
 *   {@link MemoryStorage} (a missing entry reads as `version 0`, no content).
 * Streaming kinds ({@link dispatchStream}): one request → N frames, then maybe a last one.
 * - `stream_start` → one `stream_chunk` per chunk the tool emits, then `stream_end`; a tool
 *   without a streaming form answers `stream_end{success:false, error_code:"stream_unsupported"}`
 *   at once, before running anything;
 * - `subscribe` → one `event_delivery` per event published on the topic, until the stream is
 *   cancelled (the client's way to unsubscribe) or the server stops.
 * Any other kind ({@link refusal}): `tool_call {success: false, error_code: "unknown_request"}`,
 * as the upstream Go orchestrator answers what it does not implement (the protocol has no error
 * response), so a client sees the same refusal from both.
 */
import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import type { TimestampSchema } from "@bufbuild/protobuf/wkt";
import type { HealthResult_Status, PluginRequest, PluginResponse, PluginResponseSchema } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { createPluginResponse } from "../gen/proto/orchestra/plugin/v1/plugin_codec.js";
import { mediaDataUrl } from "../translate/prompts.js";
import { UNKNOWN_REQUEST_CODE } from "../translate/tools.js";
import type { PromptRegistry } from "./prompts.js";
import { PromptError, PromptRenderError } from "./prompts.js";
import type { ToolRegistry } from "./registry.js";
import type { MemoryStorage } from "./storage.js";

/** `error_code` of the `tool_call` failure answering a `prompt_get` whose `render` failed. */
export const PROMPT_ERROR_CODE = "prompt_error";

/** Name the orchestrator puts in `EventDelivery.source_plugin` for its own events. */
export const ORCHESTRATOR_SOURCE = "orchestrator";

/** One published event. */
export interface OrchestraEvent {
  topic: string;
  eventType: string;
  payload: JsonObject;
  sourcePlugin: string;
  timestamp: Date;
}

/** Topic → listeners; `publish` delivers synchronously to every current subscriber of the topic. */
export class EventBus {
  private readonly topics = new Map<string, Set<(event: OrchestraEvent) => void>>();

  /** @returns a function that removes the listener */
  subscribe(topic: string, listener: (event: OrchestraEvent) => void): () => void {
    let set = this.topics.get(topic);
    if (!set) {
      set = new Set();
      this.topics.set(topic, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.topics.delete(topic);
    };
  }

  /** Number of listeners of `topic`. */
  subscribers(topic: string): number {
    return this.topics.get(topic)?.size ?? 0;
  }

  publish(topic: string, eventType: string, payload: JsonObject = {}, sourcePlugin = ORCHESTRATOR_SOURCE): void {
    const event: OrchestraEvent = { topic, eventType, payload, sourcePlugin, timestamp: new Date() };
    for (const l of [...(this.topics.get(topic) ?? [])]) {
      try {
        l(event);
      } catch {
        /* one subscriber's failure must not affect the others */
      }
    }
  }
}

/** Everything a request may touch. */
export interface OrchestratorServices {
  tools: ToolRegistry;
  prompts: PromptRegistry;
  storage: MemoryStorage;
  events: EventBus;
  /** Counters handed to tools (the `stats` tool) and incremented here. */
  stats: { toolCalls: number; streamCalls?: number; subscriptions?: number };
}

function response(request: PluginRequest, value: MessageInitShape<typeof PluginResponseSchema>["response"]): PluginResponse {
  return createPluginResponse({ requestId: request.requestId, response: value });
}

/** `google.protobuf.Timestamp` of `date` (whole seconds since the Unix epoch, rounded down, and nanoseconds). */
function timestampOf(date: Date): MessageInitShape<typeof TimestampSchema> {
  const ms = date.getTime();
  const seconds = Math.floor(ms / 1000);
  return { seconds: BigInt(seconds), nanos: (ms - seconds * 1000) * 1_000_000 };
}

/**
 * The answer to a request kind this orchestrator does not implement:
 * `PluginResponse{tool_call: {success: false, error_code: "unknown_request", error_message}}`.
 */
export function refusal(request: PluginRequest): PluginResponse {
  const kind = request.request.case ?? "an empty request";
  return response(request, {
    case: "toolCall",
    value: { success: false, errorCode: UNKNOWN_REQUEST_CODE, errorMessage: `unrecognized request type: ${kind}` },
  });
}

/** Whether `request` is answered by {@link dispatchStream} rather than {@link dispatchUnary}. */
export function isStreamingRequest(request: PluginRequest): boolean {
  return request.request.case === "streamStart" || request.request.case === "subscribe";
}

/**
 * The one response to a unary request, or undefined for a kind this orchestrator does not
 * serve as unary (answer it with {@link refusal}). Never throws for tool, prompt or storage failures.
 */
export async function dispatchUnary(services: OrchestratorServices, request: PluginRequest, signal: AbortSignal): Promise<PluginResponse | undefined> {
  const req = request.request;
  switch (req.case) {
    case "health":
      return response(request, { case: "health", value: { status: 1 satisfies HealthResult_Status.HEALTHY, message: "ok" } });
    case "listTools":
      return response(request, {
        case: "listTools",
        value: { tools: services.tools.list().map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })) },
      });
    case "toolCall": {
      services.stats.toolCalls++;
      const stats = services.stats as unknown as Record<string, number>;
      const outcome = await services.tools.call(req.value.toolName, req.value.arguments ?? {}, { signal, stats });
      return response(request, {
        case: "toolCall",
        value: outcome.success ? { success: true, result: outcome.result } : { success: false, errorCode: outcome.errorCode, errorMessage: outcome.errorMessage },
      });
    }
    case "listPrompts":
      return response(request, {
        case: "listPrompts",
        value: {
          prompts: services.prompts.list().map((p) => ({
            name: p.name,
            description: p.description,
            arguments: p.arguments.map((a) => ({ name: a.name, description: a.description ?? "", required: a.required ?? false })),
          })),
        },
      });
    case "promptGet": {
      try {
        const rendered = await services.prompts.get(req.value.promptName, req.value.arguments);
        return response(request, {
          case: "promptGet",
          value: {
            description: rendered.description,
            messages: rendered.messages.map((m) => ({ role: m.role, content: { type: m.type, text: "text" in m ? m.text : mediaDataUrl(m.mimeType, m.data) } })),
          },
        });
      } catch (e) {
        if (e instanceof PromptRenderError) return response(request, { case: "toolCall", value: { success: false, errorCode: PROMPT_ERROR_CODE, errorMessage: e.message } });
        if (!(e instanceof PromptError)) throw e;
        return response(request, { case: "promptGet", value: { description: e.message, messages: [] } });
      }
    }
    case "storageRead": {
      const entry = await services.storage.read(req.value.path, req.value.storageType);
      return response(request, {
        case: "storageRead",
        value: entry ? { content: entry.content, metadata: entry.metadata, version: BigInt(entry.version) } : { version: 0n },
      });
    }
    case "storageWrite": {
      const w = req.value;
      const outcome = services.storage.write(w.path, w.content, w.metadata ?? {}, Number(w.expectedVersion), w.storageType);
      return response(request, { case: "storageWrite", value: { success: outcome.success, newVersion: BigInt(outcome.newVersion), error: outcome.error } });
    }
    case "storageDelete":
      return response(request, { case: "storageDelete", value: { success: services.storage.delete(req.value.path, req.value.storageType) } });
    case "storageList":
      return response(request, {
        case: "storageList",
        value: {
          entries: services.storage.list(req.value.prefix, req.value.pattern, req.value.storageType).map(({ path, entry }) => ({
            path,
            size: BigInt(entry.content.byteLength),
            version: BigInt(entry.version),
            modifiedAt: timestampOf(entry.modifiedAt),
          })),
        },
      });
    default:
      return undefined;
  }
}

/**
 * Serves a streaming request: `emit` writes one frame; the returned frame (if any) is the last
 * one (`stream_end` for `stream_start`; nothing for `subscribe`, which ends when `signal` aborts).
 * @returns undefined also for a kind that is not streaming
 */
export async function dispatchStream(
  services: OrchestratorServices,
  request: PluginRequest,
  signal: AbortSignal,
  emit: (frame: PluginResponse) => void,
): Promise<PluginResponse | undefined> {
  const req = request.request;
  if (req.case === "streamStart") {
    const streamId = req.value.streamId || request.requestId;
    services.stats.streamCalls = (services.stats.streamCalls ?? 0) + 1;
    let sequence = 0n;
    const stats = services.stats as unknown as Record<string, number>;
    const outcome = await services.tools.callStream(req.value.toolName, req.value.arguments ?? {}, { signal, stats }, (chunk) => {
      if (signal.aborted) return;
      const data = typeof chunk.data === "string" ? new TextEncoder().encode(chunk.data) : chunk.data;
      emit(response(request, { case: "streamChunk", value: { streamId, data, contentType: chunk.contentType ?? "text/plain; charset=utf-8", sequence: sequence++ } }));
    });
    return response(request, {
      case: "streamEnd",
      value: outcome.success
        ? { streamId, success: true, totalChunks: sequence }
        : { streamId, success: false, errorCode: outcome.errorCode, errorMessage: outcome.errorMessage, totalChunks: sequence },
    });
  }
  if (req.case === "subscribe") {
    const { subscriptionId, topic, filters } = req.value;
    services.stats.subscriptions = (services.stats.subscriptions ?? 0) + 1;
    const unsubscribe = services.events.subscribe(topic, (event) => {
      for (const [k, v] of Object.entries(filters)) if (event.payload[k] !== v) return;
      emit(
        response(request, {
          case: "eventDelivery",
          value: {
            subscriptionId,
            topic: event.topic,
            eventType: event.eventType,
            payload: event.payload,
            sourcePlugin: event.sourcePlugin,
            timestamp: timestampOf(event.timestamp),
          },
        }),
      );
    });
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
    unsubscribe();
    return undefined;
  }
  return undefined;
}
