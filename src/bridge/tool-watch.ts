/**
 * The session's watch of the orchestrator's tool set, behind `notifications/tools/list_changed`:
 * a subscription (once per session) to the orchestrator's `tools` topic; every `event_delivery`
 * (and the resync event of a subscription re-established after a loss) fetches the tool list
 * afresh, and only when it differs from the last one known is the change announced
 * ({@link ToolWatchOptions.onChanged}).
 *
 * A refused subscription (the sender's StreamUnsupportedError: a reset "unsupported",
 * `unknown_request`, an empty `PluginResponse`) is not retried, and the watch reports itself
 * inactive (`listChanged` is no longer advertised); a lost one is retried with backoff (1 s
 * doubling to {@link WATCH_RETRY_MAX_MS}, so changes are announced within about 5 s of the
 * orchestrator coming back).
 */
import type { Tool } from "../gen/mcp/2025-06-18/types.js";
import type { Logger } from "../log.js";
import type { Sender } from "../transport/sender.js";
import type { NamedCatalog } from "./catalog.js";
import { canStream, StreamUnsupportedError } from "../transport/sender.js";
import { translators, type Translators } from "./methods/translators.js";

/** Longest wait between attempts to re-subscribe to {@link TOOLS_TOPIC} after a loss (ms). */
export const WATCH_RETRY_MAX_MS = 5_000;

export interface ToolWatchOptions {
  sender: Sender;
  /** The tool list compared after each event. */
  catalog: NamedCatalog<Tool>;
  log: Logger;
  /** False: never subscribe (`serve --no-watch-tools`). */
  enabled: boolean;
  /** The tool set changed (`eventType` of the event that revealed it). */
  onChanged(eventType: string): void;
}

export class ToolWatch {
  private controller: AbortController | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Set when the orchestrator answered `subscribe` in a way that says it has no events. */
  private refused = false;
  private closed = false;
  /** The comparison of the tool set running after a tool-change event, and whether another event came meanwhile. */
  private check: { again: boolean } | undefined;

  constructor(private readonly options: ToolWatchOptions) {}

  /** Whether changes will be announced: enabled, the sender can stream, and the orchestrator has not refused. */
  get active(): boolean {
    return this.options.enabled && canStream(this.options.sender) && !this.refused;
  }

  /** Subscribes, once per session (later calls do nothing). */
  start(): void {
    if (this.controller || this.closed || !this.active) return;
    const controller = new AbortController();
    this.controller = controller;
    let delay = 1_000;
    // The subscription's messages need the translators, loaded after `initialize` is answered.
    let t: Translators;
    const run = (): void => {
      const sender = this.options.sender;
      if (!canStream(sender) || controller.signal.aborted) return;
      const { createPluginRequest, createSubscribe } = t.codec;
      const { newRequestId } = t.requestIds;
      const { TOOLS_TOPIC } = t.tools;
      const request = createPluginRequest({
        requestId: newRequestId(),
        request: { case: "subscribe", value: createSubscribe({ subscriptionId: newRequestId(), topic: TOOLS_TOPIC }) },
      });
      sender
        .stream(
          request,
          (frame) => {
            if (frame.response.case === "eventDelivery") {
              delay = 1_000;
              this.onEvent(frame.response.value.eventType);
            }
            return false;
          },
          { signal: controller.signal },
        )
        .then(
          () => retry("the orchestrator ended the tools subscription"),
          (err: unknown) => {
            if (controller.signal.aborted) return;
            if (err instanceof StreamUnsupportedError) {
              this.refused = true;
              // Expected of upstream Go orchestrators (the main deployment target): info, not a warning; once per session.
              this.options.log.info(
                { answer: err.message },
                "the orchestrator does not serve tool-change subscriptions (upstream Go orchestrators do not): clients see new tools at their next tools/list, without notifications/tools/list_changed",
              );
              return;
            }
            retry((err as Error).message);
          },
        );
    };
    const retry = (why: string): void => {
      if (controller.signal.aborted) return;
      this.options.log.debug({ why, delay }, "tools subscription ended; retrying");
      this.timer = setTimeout(run, delay);
      this.timer.unref();
      delay = Math.min(delay * 2, WATCH_RETRY_MAX_MS);
    };
    void translators().then(
      (loaded) => {
        t = loaded;
        run();
      },
      (err: unknown) => this.options.log.warn({ err: (err as Error).message }, "cannot load the translators: no tools subscription"),
    );
  }

  /** Ends the subscription and any pending retry; no announcement follows. Idempotent. */
  close(): void {
    this.closed = true;
    this.controller?.abort();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * A tool-change event: compares the orchestrator's tool list with the last one known and
   * announces only a real change (a failed fetch counts as one: nothing to compare with). Events
   * arriving during a comparison are folded into one more comparison after it.
   */
  private onEvent(eventType: string): void {
    if (this.check) {
      this.check.again = true;
      return;
    }
    const check = { again: false };
    this.check = check;
    const run = async (): Promise<void> => {
      do {
        check.again = false;
        let changed: boolean;
        try {
          changed = await this.options.catalog.refresh();
        } catch (err) {
          this.options.log.debug({ err: (err as Error).message }, "cannot fetch the tool list after a tool-change event; announcing a change");
          changed = true;
        }
        if (this.closed) return;
        if (changed) this.options.onChanged(eventType);
        else this.options.log.debug({ eventType }, "tool-change event, but the tool set is unchanged: not announced");
      } while (check.again);
    };
    void run().finally(() => {
      this.check = undefined;
    });
  }
}
