/**
 * Lifecycle methods: `initialize` (≤ 2025-11-25, Basic › Lifecycle), `ping`, `server/discover`
 * (≥ 2026-07-28, Server › Discovery) and `logging/setLevel` (≤ 2025-11-25, Server › Utilities ›
 * Logging), and the capabilities the bridge advertises in a revision: exactly the methods
 * registered that the revision's schema defines.
 */
import type { ServerCapabilities } from "../../gen/mcp/2025-06-18/types.js";
import { ErrorCode, JsonRpcError } from "../../jsonrpc/errors.js";
import { buildDiscoverResult, DEFAULT_VERSION_SUPPORT, negotiateInitializeVersion } from "../../mcp/negotiation.js";
import type { ProtocolValidators } from "../../mcp/validation.js";
import { featuresOf, type VersionFeatures } from "../../translate/features.js";
import { isLoggingLevel } from "../client-log.js";
import type { MethodRegistry, MethodServices, SessionState } from "./context.js";

/** What the lifecycle methods read beyond the services. */
export interface LifecycleHost {
  readonly session: SessionState;
  /** Whether `notifications/tools/list_changed` will be sent (../tool-watch.ts). */
  watchesToolChanges(): boolean;
}

/** Registers `initialize`, `ping`, `server/discover` and `logging/setLevel`. */
export function registerLifecycle(registry: MethodRegistry, services: MethodServices, host: LifecycleHost): void {
  const { serverInfo, instructions } = services.settings;
  const capabilities = (validators: ProtocolValidators, features: VersionFeatures) => advertisedCapabilities(registry, validators, features, host.watchesToolChanges());
  registry.register("initialize", (params) => {
    const session = host.session;
    session.adopt(negotiateInitializeVersion(params.protocolVersion));
    const version = session.protocolVersion;
    return {
      protocolVersion: version,
      capabilities: capabilities(session.validators, featuresOf(version)),
      serverInfo,
      ...(instructions ? { instructions } : {}),
    };
  });
  registry.register("ping", () => ({}));
  registry.register("server/discover", (_params, scope) =>
    buildDiscoverResult({
      serverInfo,
      capabilities: capabilities(scope.validators, scope.features) as Parameters<typeof buildDiscoverResult>[0]["capabilities"],
      supportedVersions: DEFAULT_VERSION_SUPPORT.modern,
      ...(instructions ? { instructions } : {}),
    }),
  );
  registry.register("logging/setLevel", (params) => {
    if (!isLoggingLevel(params.level)) throw new JsonRpcError(ErrorCode.InvalidParams, `Invalid params: unknown logging level ${JSON.stringify(params.level)}`);
    host.session.logLevel = params.level;
    return {};
  });
}

/**
 * Exactly what the bridge implements in a revision: a capability is advertised when the
 * revision's schema defines its methods and `registry` serves them.
 *
 * @param watchesToolChanges whether tool-set changes are announced (`tools.listChanged`)
 */
export function advertisedCapabilities(registry: MethodRegistry, validators: ProtocolValidators, features: VersionFeatures, watchesToolChanges: boolean): ServerCapabilities {
  const serves = (method: string): boolean => registry.has(method) && validators.messageDefinition("c2s", method)?.kind === "request";
  const caps: Record<string, unknown> = {};
  if (serves("tools/list") && serves("tools/call")) {
    // Stateless revisions deliver list changes only on a `subscriptions/listen` stream.
    const channel = features.stateless ? serves("subscriptions/listen") : true;
    const listChanged = channel && watchesToolChanges && validators.messageDefinition("s2c", "notifications/tools/list_changed") !== undefined;
    caps.tools = { listChanged };
  }
  if (serves("prompts/list") && serves("prompts/get")) caps.prompts = { listChanged: false };
  if (serves("resources/list") && serves("resources/read")) caps.resources = { subscribe: false, listChanged: false };
  const logs = validators.messageDefinition("s2c", "notifications/message") !== undefined;
  if (logs && (features.perRequestLogLevel || serves("logging/setLevel"))) caps.logging = {};
  return caps as ServerCapabilities;
}
