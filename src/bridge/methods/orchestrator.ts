/**
 * How method handlers talk to the orchestrator: one unary RPC per call ({@link rpc}), a shared
 * wait that a cancelled request leaves ({@link withSignal}), the answer to an unexpected
 * `PluginResponse` ({@link unexpected}), and the one point where the transport's vocabulary
 * (`SenderError` kinds, src/quic/sender.ts) becomes JSON-RPC ({@link senderFailure}), and the
 * serve option that sets an RPC's deadline, named when it expires ({@link namingDeadline}).
 */
import type { PluginRequest, PluginResponse } from "../../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { ErrorCode, JsonRpcError } from "../../jsonrpc/errors.js";
import { SenderError, type CancelSignal } from "../../transport/sender.js";
import type { MethodServices, RequestScope } from "./context.js";

/** One unary orchestrator RPC for `scope`; a debug log notification names it when it succeeds. */
export async function rpc(services: MethodServices, request: PluginRequest, scope: RequestScope, timeoutMs: number): Promise<PluginResponse> {
  let response: PluginResponse;
  try {
    response = await services.sender.send(request, { signal: scope.signal, timeoutMs });
  } catch (err) {
    return namingDeadline(request)(err);
  }
  // `debug` is the lowest level: the message is built only when the client asked for it.
  if (services.logThreshold(scope) !== "debug") return response;
  services.clientLog(scope, "debug", {
    message: `${scope.method}: forwarded to the orchestrator (PluginRequest ${request.request.case ?? "without a request"}), which answered (PluginResponse ${response.response.case ?? "without a response"})`,
    request: request.request.case,
    response: response.response.case,
  });
  return response;
}

/**
 * A rejection handler for an RPC of `request`'s kind: a `SenderError('timeout')` is rethrown with
 * the RPC and the serve option that set its deadline appended (`tool_call` and `stream_start`:
 * `--call-timeout`; every other RPC, e.g. the `list_tools` a `tools/call` makes to check its
 * arguments: `--list-timeout`); any other error is rethrown as it is.
 */
export function namingDeadline(request: PluginRequest): (err: unknown) => never {
  return (err) => {
    if (!(err instanceof SenderError) || err.kind !== "timeout") throw err;
    const kind = request.request.case;
    const option = kind === "toolCall" || kind === "streamStart" ? "--call-timeout" : "--list-timeout";
    // The oneof case in the protocol's own terms (`listTools` → `list_tools`).
    const rpcName = (kind ?? "request").replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    throw new SenderError("timeout", `${err.message} (${rpcName} deadline, serve ${option})`, { cause: err });
  };
}

/**
 * `promise`, or a rejection as soon as `signal` aborts (the shared work itself continues). The
 * shared work is observed in every case: its failure after the abort (or with `signal` already
 * aborted) is left to its other waiters, never an unhandled rejection.
 */
export function withSignal<T>(promise: Promise<T>, signal: CancelSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(new SenderError("aborted", "request cancelled"));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new SenderError("aborted", "request cancelled"));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

/** `-32603` for an orchestrator answer of another kind than `expected` (or its failure message). */
export function unexpected(response: PluginResponse, expected: string): JsonRpcError {
  const r = response.response;
  // The protocol's only failure shape (e.g. a prompt whose render failed): its message is the answer.
  if (r.case === "toolCall" && !r.value.success) {
    return new JsonRpcError(ErrorCode.InternalError, `Orchestrator could not answer ${expected}: ${r.value.errorMessage || r.value.errorCode}`, { errorCode: r.value.errorCode });
  }
  return new JsonRpcError(ErrorCode.InternalError, `Orchestrator answered ${expected} with ${response.response.case ?? "an empty response"}`);
}

/**
 * The JSON-RPC error for a failed orchestrator call: `-32603` with `data: {kind, address, tool?}`
 * (see `SenderErrorKind`). A frame too large for the protocol is not the orchestrator's fault and
 * says so; any other kind names the call that failed and the orchestrator's address (a deadline
 * names its option already, {@link namingDeadline}), and is logged to the client at `error`.
 *
 * @returns undefined when `err` is not a {@link SenderError}
 */
export function senderFailure(services: MethodServices, scope: RequestScope, err: unknown): JsonRpcError | undefined {
  if (!(err instanceof SenderError)) return undefined;
  const address = services.sender.address;
  if (err.kind === "frame") {
    return new JsonRpcError(ErrorCode.InternalError, `Message too large for the Orchestra protocol: ${err.message}`, { kind: err.kind, address });
  }
  const what = scope.tool === undefined ? scope.method : `tools/call of tool ${scope.tool}`;
  const message = `${what} failed: ${err.message.includes(address) ? "" : `orchestrator ${address}: `}${err.message}`;
  services.clientLog(scope, "error", { message, kind: err.kind });
  return new JsonRpcError(ErrorCode.InternalError, message, { kind: err.kind, address, ...(scope.tool === undefined ? {} : { tool: scope.tool }) });
}
