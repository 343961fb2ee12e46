/**
 * Loading extra tools for the reference orchestrator from ES modules (`--tools module.mjs`).
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ToolDefinitionError, validateTool, type Tool } from "./registry.js";

/**
 * Imports an ES module whose `default` export, or else `tools` export, is an array of tool
 * objects `{ name, description, inputSchema, handler }` (see {@link Tool}) and validates each.
 *
 * @param modulePath file path (relative to the current directory) or `file:` URL
 * @returns the validated tools, in module order
 * @throws ToolDefinitionError naming the module when it cannot be imported, exports no array,
 *   or an entry is invalid (the message names its index and field)
 */
export async function loadToolModule(modulePath: string): Promise<Tool[]> {
  const url = modulePath.startsWith("file:") ? modulePath : pathToFileURL(path.resolve(modulePath)).href;
  let mod: Record<string, unknown>;
  try {
    mod = (await import(url)) as Record<string, unknown>;
  } catch (e) {
    throw new ToolDefinitionError(`cannot load tool module ${modulePath}: ${(e as Error).message}`);
  }
  const list = Array.isArray(mod.default) ? mod.default : Array.isArray(mod.tools) ? mod.tools : undefined;
  if (!list) {
    throw new ToolDefinitionError(
      `tool module ${modulePath} must export an array of tools as its default export or as "tools"`,
    );
  }
  const tools: Tool[] = [];
  list.forEach((entry: unknown, i: number) => {
    validateTool(entry, `tool module ${modulePath} [${i}]`);
    tools.push(entry);
  });
  return tools;
}
