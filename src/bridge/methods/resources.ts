/**
 * `resources/list`, `resources/templates/list` and `resources/read` (Server › Resources): the
 * orchestrator's storage under the exposed prefixes (`storage_list` per prefix, `storage_read`),
 * as `orchestra://storage/<path>` resources (src/translate/resources.ts).
 */
import type { StorageEntry } from "../../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { McpErrorCode, JsonRpcError } from "../../jsonrpc/errors.js";
import { paginate } from "../../translate/pagination.js";
import type { ResourceContents } from "../../translate/resources.js";
import type { MethodRegistry, MethodServices, RequestScope } from "./context.js";
import { rpc, unexpected } from "./orchestrator.js";
import { translators } from "./translators.js";

/** Registers the resource methods. */
export function registerResources(registry: MethodRegistry, services: MethodServices): void {
  const { resourcePrefixes, pageSize } = services.settings;
  registry.register("resources/list", async (params, scope) => {
    const { storageEntriesToResources } = (await translators()).resources;
    const resources = storageEntriesToResources(await listStorage(services, scope), resourcePrefixes);
    const page = paginate(resources, "resources", params.cursor, pageSize);
    return page.nextCursor === undefined ? { resources: page.items } : { resources: page.items, nextCursor: page.nextCursor };
  });
  registry.register("resources/templates/list", async (params, scope) => {
    const { resourceTemplatesFor } = (await translators()).resources;
    const templates = resourceTemplatesFor(resourcePrefixes, await listStorage(services, scope));
    const page = paginate(templates, "resource-templates", params.cursor, pageSize);
    return page.nextCursor === undefined ? { resourceTemplates: page.items } : { resourceTemplates: page.items, nextCursor: page.nextCursor };
  });
  registry.register("resources/read", async (params, scope) => {
    const { isExposed, ResourceUriError, uriToStoragePath } = (await translators()).resources;
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
  const { storageListPluginRequest } = (await translators()).resources;
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
export async function readStorage(services: MethodServices, path: string, scope: RequestScope, uri?: string): Promise<ResourceContents | undefined> {
  const { storageType, listTimeoutMs } = services.settings;
  const { storagePathToUri, storageReadPluginRequest, storageReadResponseToContents } = (await translators()).resources;
  uri ??= storagePathToUri(path);
  const response = await rpc(services, storageReadPluginRequest(path, storageType), scope, listTimeoutMs);
  if (response.response.case !== "storageRead") throw unexpected(response, "storage_read");
  return storageReadResponseToContents(uri, path, response.response.value);
}
