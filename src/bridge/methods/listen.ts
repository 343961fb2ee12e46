/**
 * `subscriptions/listen` (≥ 2026-07-28, Basic › Subscriptions): a long-lived request that
 * acknowledges the notification types honoured (only `toolsListChanged`, and only while the
 * tool-change watch runs: ../tool-watch.ts), then delivers them tagged with the stream's id until
 * the client cancels (no response) or the bridge shuts down (answered with
 * `SubscriptionsListenResult`).
 */
import type { RequestId } from "../../gen/mcp/2026-07-28/types.js";
import type { ExactId } from "../../jsonrpc/request-id.js";
import { SUBSCRIPTION_ID_META_KEY } from "../../mcp/versions.js";
import type { MethodRegistry, MethodServices } from "./context.js";

/** One open `subscriptions/listen` stream. */
interface Listener {
  id: ExactId;
  /** The client opted in to `notifications/tools/list_changed` and we honour it. */
  toolsListChanged: boolean;
  /** Ends the stream gracefully: the request is answered with `SubscriptionsListenResult`. */
  end(): void;
}

/** The open `subscriptions/listen` streams of one session. */
export class ListenStreams {
  private readonly listeners = new Set<Listener>();
  private closed = false;

  /** @param watchesToolChanges whether `notifications/tools/list_changed` will be sent */
  constructor(
    private readonly services: MethodServices,
    private readonly watchesToolChanges: () => boolean,
  ) {}

  register(registry: MethodRegistry): void {
    registry.register("subscriptions/listen", (params, scope) => {
      const honoured: { toolsListChanged?: boolean } = {};
      if (params.notifications.toolsListChanged === true && this.watchesToolChanges()) honoured.toolsListChanged = true;
      this.services.notify({
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: { _meta: { [SUBSCRIPTION_ID_META_KEY]: scope.id }, notifications: honoured },
      });
      return new Promise((resolve) => {
        const listener: Listener = {
          id: scope.id,
          toolsListChanged: honoured.toolsListChanged === true,
          end: () => {
            this.listeners.delete(listener);
            // The id as written by the client: the serializer writes an ExactId as its token text (src/jsonrpc/serialize.ts).
            resolve({ _meta: { [SUBSCRIPTION_ID_META_KEY]: scope.id as unknown as RequestId } });
          },
        };
        if (this.closed) {
          listener.end();
          return;
        }
        this.listeners.add(listener);
        scope.signal.addEventListener("abort", () => listener.end(), { once: true }); // cancelled: the session drops the answer
      });
    });
  }

  /** Sends `notifications/tools/list_changed` on every stream that asked for it. */
  toolsChanged(): void {
    for (const l of this.listeners) {
      if (!l.toolsListChanged) continue;
      this.services.notify({ jsonrpc: "2.0", method: "notifications/tools/list_changed", params: { _meta: { [SUBSCRIPTION_ID_META_KEY]: l.id } } });
    }
  }

  /** Ends every open stream with its closing result; later ones end at once. Idempotent. */
  close(): void {
    this.closed = true;
    for (const l of [...this.listeners]) l.end();
    this.listeners.clear();
  }
}
