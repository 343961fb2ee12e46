/**
 * The translators between MCP and Orchestra's protobuf messages (src/translate/, over the
 * generated codec, src/gen/proto/…/plugin_codec.ts) for the method modules and the tool-change watch,
 * loaded by the first request that needs the orchestrator, not at start: `initialize` is answered
 * without them (docs/startup.md). One load per process; every caller awaits the same promise, so
 * requests reach the sender in the order they were handled.
 */
export interface Translators {
  readonly tools: typeof import("../../translate/tools.js");
  readonly streams: typeof import("../../translate/streams.js");
  readonly prompts: typeof import("../../translate/prompts.js");
  readonly resources: typeof import("../../translate/resources.js");
  /** The generated codec's `create…` functions (the watch's `subscribe`). */
  readonly codec: typeof import("../../gen/proto/orchestra/plugin/v1/plugin_codec.js");
  /** Request and subscription ids (UUID v7): `newRequestId`. */
  readonly requestIds: typeof import("../../translate/request-id.js");
}

let loading: Promise<Translators> | undefined;

/** The translators, loaded on the first call. @throws what the import throws (a broken installation) */
export function translators(): Promise<Translators> {
  loading ??= Promise.all([
    import("../../translate/tools.js"),
    import("../../translate/streams.js"),
    import("../../translate/prompts.js"),
    import("../../translate/resources.js"),
    import("../../gen/proto/orchestra/plugin/v1/plugin_codec.js"),
    import("../../translate/request-id.js"),
  ]).then(([tools, streams, prompts, resources, codec, requestIds]) => ({ tools, streams, prompts, resources, codec, requestIds }));
  return loading;
}
