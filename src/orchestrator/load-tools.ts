/**
 * Loading tools, prompts and resources for the reference orchestrator from ES modules
 * (`orchestrator --tools module.mjs`, `serve --tools module.mjs`; docs/modules.md).
 *
 * Module shape: the default export is an array of tools (or an object `{ tools, prompts,
 * resources }`); otherwise the named exports `tools`, `prompts`, `resources` (each an array,
 * each optional, at least one present).
 * - a tool: `{ name, description, inputSchema, handler, stream? }` ({@link Tool});
 * - a prompt: `{ name, description, arguments, render }` ({@link PromptSpec});
 * - a resource: `{ uri | path, name?, description?, mimeType?, text | blob }` ({@link ResourceSpec}),
 *   stored as a storage entry at `path`, or at `uri` itself (a `scheme://` URI, exposed as it is);
 * - a template resource: `{ uriTemplate, name?, description?, mimeType?, read }` ({@link ResourceTemplateSpec}).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { JsonObject } from "@bufbuild/protobuf";
import { ToolArgumentChecker } from "../bridge/tool-args.js";
import { isBase64 } from "../mcp/formats.js";
import { isUriPath, mimeTypeOfPath } from "../translate/resources.js";
import { builtinTools } from "./builtin-tools.js";
import { builtinPrompts, PromptRegistry, type PromptSpec } from "./prompts.js";
import { ToolDefinitionError, ToolRegistry, validateTool, type Tool } from "./registry.js";
import { MemoryStorage, sampleStorageEntries, type ResourceTemplateSpec } from "./storage.js";

/**
 * ` (at FILE:LINE[:COLUMN])`: where the load of the module `url` failed (its syntax error's line, the
 * frame of a throw at its top level or at the top level of a module it imports), or "" when
 * nothing names a place (a missing import, a syntax error in a module it imports).
 */
function locationIn(e: unknown, url: string): string {
  const file = url.startsWith("file:") ? fileURLToPath(url) : url;
  // Node 20 leaves the place of an ES module's syntax error out of its stack (it prints it only
  // for an uncaught one): `node --check` prints it as the first line, `FILE:LINE`.
  const text =
    e instanceof SyntaxError && url.startsWith("file:")
      ? (spawnSync(process.execPath, ["--check", file], { encoding: "utf8", timeout: 5_000 }).stderr?.split("\n", 1)[0] ?? "")
      : e instanceof Error && typeof e.stack === "string"
        ? e.stack
        : "";
  for (const name of [url, file]) {
    const at = text.indexOf(`${name}:`);
    const place = at < 0 ? null : /^:(\d+)(?::(\d+))?/.exec(text.slice(at + name.length));
    if (place) return ` (at ${file}:${place[1]}${place[2] ? `:${place[2]}` : ""})`;
  }
  // A throw in a module it imports: the first frame in a file that is not this package's.
  for (const frame of text.matchAll(/(file:\/\/[^\s()]+?):(\d+):(\d+)/g)) {
    if (frame[1]!.startsWith(OWN_FILES)) continue;
    return ` (at ${fileURLToPath(frame[1]!)}:${frame[2]}:${frame[3]})`;
  }
  return "";
}
/** URL prefix of this package's compiled files (dist/), whose frames name no place of a module. */
const OWN_FILES = new URL("..", import.meta.url).href;

/**
 * Keeps the process serving when tool-module code throws outside a handler's promise (a timer
 * callback, a promise nobody awaits): such an error is logged at `error` with its stack, and
 * every other tool, call and client goes on. Tool modules are third-party code; without this,
 * Node ends the process and every request in flight goes unanswered. Installed once per process.
 */
export function keepServingOnModuleErrors(log: { error(obj: object, msg: string): void }): void {
  if (moduleErrorsHandled) return;
  moduleErrorsHandled = true;
  process.on("uncaughtException", (err) => log.error({ err }, "uncaught exception in a tool module; still serving"));
  process.on("unhandledRejection", (reason) => log.error({ err: reason }, "unhandled rejection in a tool module; still serving"));
}
let moduleErrorsHandled = false;

/** A static resource of a module. */
export interface ResourceSpec {
  /** The resource's own URI, `scheme://...` (stored at that path); or give {@link path}. */
  uri?: string;
  /** A storage path, exposed as `orchestra://storage/<path>`; or give {@link uri}. */
  path?: string;
  name?: string;
  description?: string;
  /** Stored as `metadata.mimeType` (decides text or blob contents on `resources/read`). */
  mimeType?: string;
  /** Text contents (UTF-8); or give {@link blob}. */
  text?: string;
  /** Binary contents: base64 text or bytes; or give {@link text}. */
  blob?: string | Uint8Array;
}

/** What one module provides. */
export interface LoadedModule {
  tools: Tool[];
  prompts: PromptSpec[];
  resources: ResourceSpec[];
  templates: ResourceTemplateSpec[];
  /** Each resource's or template's index in the module's `resources` list (for messages). */
  resourceIndex: Map<object, number>;
}

/**
 * Imports a module and validates what it exports (see the file comment for the shape).
 * @param modulePath file path (relative to the current directory) or `file:` URL
 * @throws ToolDefinitionError naming the module when it cannot be imported (a missing file: the
 *   resolved path and the current directory), exports none of tools/prompts/resources, or an
 *   entry is invalid (the message names its list, index and field)
 */
export async function loadModule(modulePath: string): Promise<LoadedModule> {
  const file = modulePath.startsWith("file:") ? undefined : path.resolve(modulePath);
  if (file !== undefined && !existsSync(file)) {
    throw new ToolDefinitionError(
      `cannot load tool module ${modulePath}: no file ${file}${path.isAbsolute(modulePath) ? "" : ` (relative paths resolve against the current directory, ${process.cwd()}; give an absolute path)`}`,
    );
  }
  const url = file === undefined ? modulePath : pathToFileURL(file).href;
  let mod: Record<string, unknown>;
  // A top-level await that never settles leaves nothing to wait for: the event loop empties and,
  // unanswered, Node would exit with status 13. The loop's `beforeExit` turns it into this
  // module's load failure, which takes the path of every other one (one error line, exit 1).
  const neverSettled = new ToolDefinitionError(`cannot load tool module ${modulePath}: its top-level await never settled (it waits for nothing that can still happen)`);
  let unsettled: (() => void) | undefined;
  const neverSettles = new Promise<never>((_, reject) => {
    unsettled = () => reject(neverSettled);
    process.once("beforeExit", unsettled);
  });
  try {
    mod = (await Promise.race([import(url), neverSettles])) as Record<string, unknown>;
  } catch (e) {
    if (e === neverSettled) throw e;
    // Node names the importer (this file) in "Cannot find module ... imported from ...": not the user's concern.
    const message = (e as Error).message.replace(/ imported from \S*load-tools\.[jt]s$/, "");
    throw new ToolDefinitionError(`cannot load tool module ${modulePath}: ${message}${locationIn(e, url)}`);
  } finally {
    if (unsettled) process.off("beforeExit", unsettled);
  }
  const def = mod.default;
  const source: Record<string, unknown> = Array.isArray(def)
    ? { tools: def }
    : typeof def === "object" && def !== null && ["tools", "prompts", "resources"].some((k) => k in def)
      ? (def as Record<string, unknown>)
      : mod;
  const lists = ["tools", "prompts", "resources"] as const;
  if (!lists.some((k) => Array.isArray(source[k]))) {
    throw new ToolDefinitionError(`tool module ${modulePath} must export an array of tools as its default export or as "tools", or "prompts" / "resources" arrays`);
  }
  for (const k of lists) {
    if (source[k] !== undefined && !Array.isArray(source[k])) throw new ToolDefinitionError(`tool module ${modulePath}: "${k}" must be an array`);
  }
  const loaded: LoadedModule = { tools: [], prompts: [], resources: [], templates: [], resourceIndex: new Map() };
  const schemas = new ToolArgumentChecker();
  for (const [i, entry] of ((source.tools ?? []) as unknown[]).entries()) {
    const where = `tool module ${modulePath} [${i}]`;
    validateTool(entry, where);
    // The bridge compiles it for every call and clients for tools/list: a schema ajv refuses is refused here.
    const problem = await schemas.schemaProblem(entry.inputSchema);
    if (problem !== undefined) throw new ToolDefinitionError(`${where} (${entry.name}): "inputSchema" is not a valid JSON Schema: ${problem}`);
    loaded.tools.push(entry);
  }
  ((source.prompts ?? []) as unknown[]).forEach((entry, i) => loaded.prompts.push(validatePrompt(entry, `tool module ${modulePath} prompts[${i}]`)));
  ((source.resources ?? []) as unknown[]).forEach((entry, i) => {
    const where = `tool module ${modulePath} resources[${i}]`;
    if (typeof entry === "object" && entry !== null && "uriTemplate" in entry) loaded.templates.push(validateTemplate(entry, where));
    else loaded.resources.push(validateResource(entry, where));
    loaded.resourceIndex.set(entry as object, i);
  });
  return loaded;
}

/**
 * The tools of a module ({@link loadModule}), in module order.
 * @throws ToolDefinitionError as {@link loadModule}
 */
export async function loadToolModule(modulePath: string): Promise<Tool[]> {
  return (await loadModule(modulePath)).tools;
}

/** What the reference orchestrator serves, ready for `startOrchestrator`. */
export interface OrchestratorContent {
  tools: ToolRegistry;
  prompts: PromptRegistry;
  storage: MemoryStorage;
}

/**
 * The built-in tools, prompts and sample storage entries (unless `builtins` is false) plus
 * everything the modules provide, in order.
 * @throws ToolDefinitionError for a module that cannot be loaded or a name used twice
 */
export async function loadOrchestratorContent(modulePaths: readonly string[], builtins: boolean): Promise<OrchestratorContent> {
  const tools = new ToolRegistry(builtins ? builtinTools() : []);
  const prompts = new PromptRegistry(builtins ? builtinPrompts() : []);
  const storage = new MemoryStorage(builtins ? sampleStorageEntries() : []);
  // Who defined each tool / prompt name and resource path first, for the message about a second one.
  const owners = { tool: new Map<string, string>(), prompt: new Map<string, string>(), resource: new Map<string, string>() };
  const BUILTIN = "a built-in (leave the built-ins out with --no-builtins)";
  if (builtins) {
    for (const t of tools.list()) owners.tool.set(t.name, BUILTIN);
    for (const p of prompts.list()) owners.prompt.set(p.name, BUILTIN);
    for (const e of storage.list()) owners.resource.set(e.path, BUILTIN);
  }
  const claim = (kind: keyof typeof owners, name: string, where: string) => {
    const first = owners[kind].get(name);
    if (first !== undefined) throw new ToolDefinitionError(`${where}: ${kind} ${JSON.stringify(name)} is defined twice: already by ${first}`);
    owners[kind].set(name, where);
  };
  for (const modulePath of modulePaths) {
    const loaded = await loadModule(modulePath);
    loaded.tools.forEach((tool, i) => {
      claim("tool", tool.name, `tool module ${modulePath} [${i}]`);
      tools.register(tool);
    });
    loaded.prompts.forEach((prompt, i) => {
      claim("prompt", prompt.name, `tool module ${modulePath} prompts[${i}]`);
      prompts.register(prompt);
    });
    for (const r of loaded.resources) {
      const at = r.path ?? r.uri!;
      claim("resource", at, `tool module ${modulePath} resources[${loaded.resourceIndex.get(r)}]`);
      const content = r.text !== undefined ? new TextEncoder().encode(r.text) : typeof r.blob === "string" ? Buffer.from(r.blob, "base64") : r.blob!;
      const metadata: JsonObject = {};
      if (r.mimeType) metadata.mimeType = r.mimeType;
      if (r.name) metadata.name = r.name;
      if (r.description) metadata.description = r.description;
      const outcome = storage.write(at, content, metadata, 0);
      if (!outcome.success) throw new ToolDefinitionError(`tool module ${modulePath}: resource ${JSON.stringify(at)}: ${outcome.error}`);
    }
    for (const t of loaded.templates) {
      claim("resource", t.uriTemplate, `tool module ${modulePath} resources[${loaded.resourceIndex.get(t)}]`);
      try {
        storage.addTemplate(t);
      } catch (e) {
        throw new ToolDefinitionError(`tool module ${modulePath}: ${(e as Error).message}`);
      }
    }
  }
  return { tools, prompts, storage };
}

function optionalString(o: Record<string, unknown>, key: string, where: string): void {
  if (o[key] !== undefined && typeof o[key] !== "string") throw new ToolDefinitionError(`${where}: "${key}" must be a string when present`);
}

function validatePrompt(value: unknown, where: string): PromptSpec {
  if (typeof value !== "object" || value === null) throw new ToolDefinitionError(`${where}: not an object`);
  const p = value as Record<string, unknown>;
  if (typeof p.name !== "string" || p.name === "") throw new ToolDefinitionError(`${where}: "name" must be a non-empty string`);
  const label = `${where} (${p.name})`;
  if (typeof p.description !== "string") throw new ToolDefinitionError(`${label}: "description" must be a string`);
  const args = p.arguments ?? [];
  if (!Array.isArray(args)) throw new ToolDefinitionError(`${label}: "arguments" must be an array when present`);
  args.forEach((a: unknown, i) => {
    if (typeof a !== "object" || a === null || typeof (a as { name?: unknown }).name !== "string") {
      throw new ToolDefinitionError(`${label}: arguments[${i}] needs a string "name"`);
    }
  });
  if (typeof p.render !== "function") throw new ToolDefinitionError(`${label}: "render" must be a function`);
  return { ...(p as unknown as PromptSpec), arguments: args as PromptSpec["arguments"] };
}

function validateResource(value: unknown, where: string): ResourceSpec {
  if (typeof value !== "object" || value === null) throw new ToolDefinitionError(`${where}: not an object`);
  const r = value as Record<string, unknown>;
  for (const key of ["uri", "path", "name", "description", "mimeType", "text"]) optionalString(r, key, where);
  if ((r.uri === undefined) === (r.path === undefined)) throw new ToolDefinitionError(`${where}: give exactly one of "uri" and "path"`);
  if (r.uri !== undefined && !isUriPath(r.uri as string)) {
    throw new ToolDefinitionError(`${where}: "uri" must be an absolute scheme:// URI other than orchestra://storage/ (use "path" for storage paths)`);
  }
  if (r.path === "") throw new ToolDefinitionError(`${where}: "path" must not be empty`);
  if ((r.text === undefined) === (r.blob === undefined)) throw new ToolDefinitionError(`${where}: give exactly one of "text" and "blob"`);
  if (r.blob !== undefined && typeof r.blob !== "string" && !(r.blob instanceof Uint8Array)) {
    throw new ToolDefinitionError(`${where}: "blob" must be base64 text or a Uint8Array`);
  }
  // resources/list sees only the path (StorageEntry has no metadata) and types it by its extension:
  // a declared type that the extension contradicts would be listed as one type and read as another.
  const listed = mimeTypeOfPath((r.path ?? r.uri) as string);
  const declared = typeof r.mimeType === "string" ? r.mimeType.split(";")[0]!.trim().toLowerCase() : undefined;
  if (declared !== undefined && listed !== undefined && declared !== listed) {
    throw new ToolDefinitionError(
      `${where}: "mimeType" ${r.mimeType} contradicts the path's extension, which resources/list reports as ${listed} (the Orchestra storage_list carries no metadata): make them agree, or use a path without that extension`,
    );
  }
  if (typeof r.blob === "string" && !isBase64(r.blob)) {
    throw new ToolDefinitionError(`${where}: "blob" is not valid base64 (RFC 4648 §4: A-Z a-z 0-9 + /, padded with = to a multiple of 4; or give a Uint8Array)`);
  }
  return r as ResourceSpec;
}

function validateTemplate(value: unknown, where: string): ResourceTemplateSpec {
  const t = value as Record<string, unknown>;
  for (const key of ["uriTemplate", "name", "description", "mimeType"]) optionalString(t, key, where);
  if (typeof t.uriTemplate !== "string") throw new ToolDefinitionError(`${where}: "uriTemplate" must be a string`);
  if (typeof t.read !== "function") throw new ToolDefinitionError(`${where} (${String(t.uriTemplate)}): "read" must be a function`);
  return t as unknown as ResourceTemplateSpec;
}
