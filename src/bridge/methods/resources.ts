/**
 * `resources/list`, `resources/templates/list` and `resources/read` (Server › Resources): the
 * orchestrator's storage under the exposed prefixes (`storage_list` per prefix, `storage_read`),
 * as `orchestra://storage/<path>` resources (src/translate/resources.ts).
 */
import type { StorageEntry } from "../../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { McpErrorCode, JsonRpcError } from "../../jsonrpc/errors.js";
import { paginate } from "../../translate/pagination.js";
import {
  isExposed,
  resourceTemplatesFor,
  ResourceUriError,
  storageEntriesToResources,
  storageListPluginRequest,
  storagePathToUri,
  storageReadPluginRequest,
  storageReadResponseToContents,
  uriToStoragePath,
  type ResourceContents,
} from "../../translate/resources.js";
import type { MethodRegistry, MethodServices, RequestScope } from "./context.js";
import { rpc, unexpected } from "./orchestrator.js";

/** Registers the resource methods. */
export function registerResources(registry: MethodRegistry, services: MethodServices): void {
  const { resourcePrefixes, pageSize } = services.settings;
  registry.register("resources/list", async (params, scope) => {
    const resources = storageEntriesToResources(await listStorage(services, scope), resourcePrefixes);
    const page = paginate(resources, "resources", params.cursor, pageSize);
    return page.nextCursor === undefined ? { resources: page.items } : { resources: page.items, nextCursor: page.nextCursor };
  });
  registry.register("resources/templates/list", async (params, scope) => {
    const templates = resourceTemplatesFor(resourcePrefixes, await listStorage(services, scope));
    const page = paginate(templates, "resource-templates", params.cursor, pageSize);
    return page.nextCursor === undefined ? { resourceTemplates: page.items } : { resourceTemplates: page.items, nextCursor: page.nextCursor };
  });
  registry.register("resources/read", async (params, scope) => {
    const uri = params.uri;
    const path = uriToStoragePath(uri);
    if (!isExposed(path, resourcePrefixes)) throw new ResourceUriError(uri, `Resource not found: ${uri}`);
    const contents = await readStorage(services, path, scope, uri);
    if (!contents) throw new JsonRpcError(McpErrorCode.ResourceNotFound, `Resource not found: ${uri}`, { uri });
    return { contents: [contents] };
  });
}

/** One `storage_list` per exposed prefix, the entries of all answers. */
async function listStorage(services: MethodServices, scope: RequestScope): Promise<StorageEntry[]> {
  const { resourcePrefixes, storageType, listTimeoutMs } = services.settings;
  const answers = await Promise.all(
    resourcePrefixes.map(async (prefix) => {
      const response = await rpc(services, storageListPluginRequest(prefix, storageType), scope, listTimeoutMs);
      if (response.response.case !== "storageList") throw unexpected(response, "storage_list");
      return response.response.value.entries;
    }),
  );
  return answers.flat();
}

/** One `storage_read`; undefined when the entry does not exist. */
export async function readStorage(services: MethodServices, path: string, scope: RequestScope, uri: string = storagePathToUri(path)): Promise<ResourceContents | undefined> {
  const { storageType, listTimeoutMs } = services.settings;
  const response = await rpc(services, storageReadPluginRequest(path, storageType), scope, listTimeoutMs);
  if (response.response.case !== "storageRead") throw unexpected(response, "storage_read");
  return storageReadResponseToContents(uri, path, response.response.value);
}
