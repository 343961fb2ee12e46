/**
 * `prompts/list` and `prompts/get` (Server › Prompts): the orchestrator's `list_prompts` paged by
 * the bridge; a prompt's required arguments checked before `prompt_get`, and the storage entries
 * the rendered prompt embeds read with `storage_read` (./resources.ts).
 */
import type { Prompt } from "../../gen/mcp/2025-06-18/types.js";
import { ErrorCode, JsonRpcError } from "../../jsonrpc/errors.js";
import { paginate } from "../../translate/pagination.js";
import type { ResourceContents } from "../../translate/resources.js";
import { NamedCatalog } from "../catalog.js";
import type { MethodParams, MethodRegistry, MethodServices, RequestScope } from "./context.js";
import { namingDeadline, rpc, unexpected, withSignal } from "./orchestrator.js";
import { readStorage } from "./resources.js";
import { translators } from "./translators.js";

/** The prompt methods of one session and the prompt list they remember. */
export class PromptMethods {
  /** The orchestrator's prompts (names and required arguments). */
  readonly catalog: NamedCatalog<Prompt>;

  constructor(private readonly services: MethodServices) {
    this.catalog = new NamedCatalog(() => this.fetchPrompts());
  }

  register(registry: MethodRegistry): void {
    registry.register("prompts/list", (params, scope) => this.listPrompts(params.cursor, scope));
    registry.register("prompts/get", (params, scope) => this.getPrompt(params, scope));
  }

  private async fetchPrompts(): Promise<Prompt[]> {
    const { listPromptsPluginRequest, listPromptsResponseToPrompts } = (await translators()).prompts;
    const request = listPromptsPluginRequest();
    const response = await this.services.sender.send(request, { timeoutMs: this.services.settings.listTimeoutMs }).catch(namingDeadline(request));
    if (response.response.case !== "listPrompts") throw unexpected(response, "list_prompts");
    return listPromptsResponseToPrompts(response.response.value);
  }

  private async listPrompts(cursor: string | undefined, scope: RequestScope): Promise<{ prompts: Prompt[]; nextCursor?: string }> {
    let prompts: Prompt[];
    if (cursor === undefined) {
      const { listPromptsPluginRequest, listPromptsResponseToPrompts } = (await translators()).prompts;
      const response = await rpc(this.services, listPromptsPluginRequest(), scope, this.services.settings.listTimeoutMs);
      if (response.response.case !== "listPrompts") throw unexpected(response, "list_prompts");
      prompts = listPromptsResponseToPrompts(response.response.value);
      this.catalog.store(prompts);
    } else {
      prompts = await withSignal(this.catalog.current(), scope.signal);
    }
    const page = paginate(prompts, "prompts", cursor, this.services.settings.pageSize);
    return page.nextCursor === undefined ? { prompts: page.items } : { prompts: page.items, nextCursor: page.nextCursor };
  }

  private async getPrompt(params: MethodParams<"prompts/get">, scope: RequestScope) {
    const { getPromptParamsToPluginRequest, missingPromptArguments, promptGetResponseToResult, resourcePathsOf } = (await translators()).prompts;
    const prompt = await withSignal(this.catalog.lookup(params.name), scope.signal);
    if (!prompt) throw new JsonRpcError(ErrorCode.InvalidParams, `Invalid params: unknown prompt ${JSON.stringify(params.name)}`, { prompt: params.name });
    const missing = missingPromptArguments(prompt, params.arguments);
    if (missing.length > 0) {
      throw new JsonRpcError(ErrorCode.InvalidParams, `Invalid params: prompt ${params.name} requires argument${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`, {
        prompt: params.name,
        missing,
      });
    }
    const response = await rpc(this.services, getPromptParamsToPluginRequest(params), scope, this.services.settings.listTimeoutMs);
    if (response.response.case !== "promptGet") throw unexpected(response, "prompt_get");
    const value = response.response.value;
    const embedded = new Map<string, ResourceContents>();
    await Promise.all(
      resourcePathsOf(value).map(async (path) => {
        const contents = await readStorage(this.services, path, scope);
        if (contents) embedded.set(path, contents);
      }),
    );
    return promptGetResponseToResult(value, embedded, scope.features);
  }
}
