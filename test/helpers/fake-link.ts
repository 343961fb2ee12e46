/**
 * A scripted {@link Link} and {@link LinkDialer} for unit tests of the transport client
 * (src/transport/rpc-client.ts): every call opened, written, cancelled or released is recorded,
 * and the test plays the peer (frames, ends, credit, link loss).
 */
import { fromBinary } from "@bufbuild/protobuf";
import { PluginRequestSchema, type PluginRequest } from "../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { senderError, type SenderError } from "../../src/transport/errors.js";
import type { CallEvents, CancelReason, Link, LinkCall, LinkDialer } from "../../src/transport/link.js";

export class FakeCall implements LinkCall {
  request: PluginRequest | undefined;
  cancelled: CancelReason | undefined;
  released = false;
  constructor(
    readonly requestId: string,
    readonly multiFrame: boolean,
    readonly events: CallEvents,
  ) {}
  write(payload: Uint8Array): void {
    this.request = fromBinary(PluginRequestSchema, payload);
  }
  cancel(reason: CancelReason): void {
    this.cancelled = reason;
  }
  release(): void {
    this.released = true;
  }
}

export class FakeLink implements Link {
  onCredit: (() => void) | undefined = undefined;
  onDown: ((error: SenderError) => void) | undefined = undefined;
  packetsReceived: number | undefined = undefined;
  /** Streams the peer still grants. */
  credit = Infinity;
  readonly calls: FakeCall[] = [];
  closed: boolean | undefined;
  open(requestId: string, multiFrame: boolean, events: CallEvents): LinkCall | undefined {
    if (this.credit <= 0) return undefined;
    this.credit--;
    const call = new FakeCall(requestId, multiFrame, events);
    this.calls.push(call);
    return call;
  }
  close(graceful: boolean): Promise<void> {
    this.closed = graceful;
    return Promise.resolve();
  }
  /** The peer drops the connection. */
  die(detail = "connection lost: test"): void {
    this.onDown?.(senderError("fake:1", "closed", detail));
  }
}

export class FakeDialer implements LinkDialer {
  readonly address = "fake:1";
  readonly name = "FAKE";
  readonly streams = true;
  readonly links: FakeLink[] = [];
  /** Errors the next dials fail with, in order. */
  readonly failures: SenderError[] = [];
  /** Applied to every new link before the client gets it. */
  prepare: (link: FakeLink) => void = () => {};
  dial(): Promise<Link> {
    const failure = this.failures.shift();
    if (failure) return Promise.reject(failure);
    const link = new FakeLink();
    this.prepare(link);
    this.links.push(link);
    return Promise.resolve(link);
  }
  get last(): FakeLink {
    return this.links[this.links.length - 1]!;
  }
}
