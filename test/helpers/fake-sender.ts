/**
 * A scripted in-memory {@link Sender} for unit tests of the handler (never used by e2e tests).
 */
import type { PluginRequest, PluginResponse } from "../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { SenderError, type SendOptions, type Sender } from "../../src/transport/sender.js";

export type Reply = (request: PluginRequest, options?: SendOptions) => PluginResponse | Promise<PluginResponse>;

export class FakeSender implements Sender {
  readonly address = "fake.test:50100";
  readonly requests: PluginRequest[] = [];
  readonly options: Array<SendOptions | undefined> = [];
  closed = false;

  constructor(private readonly reply: Reply) {}

  async send(request: PluginRequest, options?: SendOptions): Promise<PluginResponse> {
    this.requests.push(request);
    this.options.push(options);
    if (options?.signal?.aborted) throw new SenderError("aborted", "aborted before send");
    return new Promise<PluginResponse>((resolve, reject) => {
      options?.signal?.addEventListener("abort", () => reject(new SenderError("aborted", "call aborted")), { once: true });
      Promise.resolve()
        .then(() => this.reply(request, options))
        .then(resolve, reject);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
