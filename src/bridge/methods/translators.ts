/**
 * The translators between MCP and Orchestra's protobuf messages (src/translate/, over
 * @bufbuild/protobuf and the generated messages) for the method modules and the tool-change watch,
 * loaded by the first request that needs the orchestrator, not at start: `initialize` is answered
 * without them (docs/startup.md). One load per process; every caller awaits the same promise, so
 * requests reach the sender in the order they were handled.
 */
export interface Translators {
  readonly tools: typeof import("../../translate/tools.js");
  readonly streams: typeof import("../../translate/streams.js");
  readonly prompts: typeof import("../../translate/prompts.js");
  readonly resources: typeof import("../../translate/resources.js");
  /** `create` of @bufbuild/protobuf and the generated messages (the watch's `subscribe`). */
  readonly protobuf: typeof import("@bufbuild/protobuf");
  readonly messages: typeof import("../../gen/proto/orchestra/plugin/v1/plugin_pb.js");
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
    import("@bufbuild/protobuf"),
    import("../../gen/proto/orchestra/plugin/v1/plugin_pb.js"),
    import("../../translate/request-id.js"),
  ]).then(([tools, streams, prompts, resources, protobuf, messages, requestIds]) => ({ tools, streams, prompts, resources, protobuf, messages, requestIds }));
  return loading;
}
