/**
 * MCP resources ⇄ Orchestra storage (pure functions).
 *
 * MCP side: `resources/list`, `resources/read`, `resources/templates/list` (server/resources,
 * every revision from 2024-11-05). Orchestra side: `StorageListRequest{prefix, pattern,
 * storage_type}` → `StorageListResponse{entries: StorageEntry{path, size, version,
 * modified_at}}`, `StorageReadRequest{path, storage_type}` → `StorageReadResponse{content bytes,
 * metadata Struct, version}`.
 *
 * URIs: a storage entry at path `a/b c.txt` is the resource `orchestra://storage/a/b%20c.txt`
 * (each path segment percent-encoded, RFC 3986). A storage path that is itself an absolute URI
 * with an authority (`scheme://...`, e.g. `test://static-text`; {@link isUriPath}) is the resource
 * of that URI, as it is: that is how an orchestrator serves resources with URIs of their own.
 * Absence: `StorageReadResponse.version == 0` means "no such entry" (versions start at 1 when an
 * entry is created; `StorageWriteRequest.expected_version 0` creates) → MCP `-32002`.
 * Contents: text (`TextResourceContents`) when the metadata's MIME type is textual, or when there
 * is none and the bytes are valid UTF-8; otherwise base64 (`BlobResourceContents`).
 */
import { newRequestId } from "./request-id.js";
import type { PluginRequest, StorageEntry, StorageReadResponse } from "../gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { createPluginRequest, createStorageListRequest, createStorageReadRequest } from "../gen/proto/orchestra/plugin/v1/plugin_codec.js";
import type { BlobResourceContents, Resource, ResourceTemplate, TextResourceContents } from "../gen/mcp/2025-06-18/types.js";
import { structToObject } from "./struct.js";
import { JsonRpcError, McpErrorCode } from "../jsonrpc/errors.js";

/** URI prefix of storage entries exposed as MCP resources. */
export const STORAGE_URI_PREFIX = "orchestra://storage/";

export type { Resource, ResourceTemplate };

/** One element of MCP `ReadResourceResult.contents`. */
export type ResourceContents = TextResourceContents | BlobResourceContents;

/** Thrown for a URI that names no storage entry this bridge exposes: `-32002`, `data: {uri}`. */
export class ResourceUriError extends JsonRpcError {
  override readonly name = "ResourceUriError";
  constructor(
    /** The URI as given. */
    readonly uri: string,
    message: string,
  ) {
    super(McpErrorCode.ResourceNotFound, message, { uri });
  }
}

/**
 * Whether a storage path is an absolute URI with an authority (RFC 3986 §3: `scheme "://"`),
 * other than an `orchestra://storage/` one: such an entry is exposed under the URI it is.
 */
export function isUriPath(path: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(path) && !path.startsWith(STORAGE_URI_PREFIX);
}

/** Source of a RegExp matching one RFC 6570 expression of the forms template resources use: `{name}` (group 2) or `{+name}` (group 1 `+`). */
export const URI_TEMPLATE_EXPRESSION = String.raw`\{(\+?)([A-Za-z0-9_.]+)\}`;

/**
 * Whether a storage path is a template resource: a {@link isUriPath URI path} holding at least one
 * {@link URI_TEMPLATE_EXPRESSION} (e.g. `test://template/{id}/data`). `storage_list` may list such
 * entries; they are resource templates, not resources.
 */
export function isUriTemplatePath(path: string): boolean {
  return isUriPath(path) && new RegExp(URI_TEMPLATE_EXPRESSION).test(path);
}

/** `a/b c.txt` → `orchestra://storage/a/b%20c.txt`; a {@link isUriPath URI path} → itself. */
export function storagePathToUri(path: string): string {
  if (isUriPath(path)) return path;
  return STORAGE_URI_PREFIX + path.split("/").map(encodeURIComponent).join("/");
}

/**
 * `orchestra://storage/a/b%20c.txt` → `a/b c.txt`; any other `scheme://...` URI → itself (the
 * storage path of a resource with its own URI, {@link isUriPath}).
 * @throws ResourceUriError for a URI without `://`, an empty path or bad percent-encoding
 */
export function uriToStoragePath(uri: string): string {
  if (isUriPath(uri)) return uri;
  if (!uri.startsWith(STORAGE_URI_PREFIX)) {
    throw new ResourceUriError(uri, `Resource not found: ${uri} (this server serves ${STORAGE_URI_PREFIX}<path> and scheme:// URIs)`);
  }
  const rest = uri.slice(STORAGE_URI_PREFIX.length).replace(/[?#].*$/s, "");
  if (rest === "") throw new ResourceUriError(uri, `Resource not found: ${uri} (no path)`);
  try {
    return rest.split("/").map(decodeURIComponent).join("/");
  } catch {
    throw new ResourceUriError(uri, `Resource not found: ${uri} (malformed percent-encoding)`);
  }
}

/** A storage path from a prompt's `resource` block: an `orchestra://storage/` URI, another `scheme://` URI (as it is) or a bare path. */
export function storagePathOf(text: string): string {
  if (text.startsWith(STORAGE_URI_PREFIX)) {
    try {
      return uriToStoragePath(text);
    } catch {
      return text;
    }
  }
  return text;
}

/** Whether a path lies under one of the exposed prefixes (`""` exposes everything). */
export function isExposed(path: string, prefixes: readonly string[]): boolean {
  return prefixes.some((p) => path.startsWith(p));
}

/** `PluginRequest{storage_list}` for one prefix. */
export function storageListPluginRequest(prefix: string, storageType: string, requestId: string = newRequestId()): PluginRequest {
  return createPluginRequest({
    requestId,
    request: { case: "storageList", value: createStorageListRequest({ prefix, storageType }) },
  });
}

/** `PluginRequest{storage_read}` for one path. */
export function storageReadPluginRequest(path: string, storageType: string, requestId: string = newRequestId()): PluginRequest {
  return createPluginRequest({
    requestId,
    request: { case: "storageRead", value: createStorageReadRequest({ path, storageType }) },
  });
}

const MIME_BY_EXTENSION: Readonly<Record<string, string>> = {
  txt: "text/plain",
  md: "text/markdown",
  json: "application/json",
  html: "text/html",
  csv: "text/csv",
  xml: "application/xml",
  yaml: "application/yaml",
  yml: "application/yaml",
  js: "text/javascript",
  ts: "text/typescript",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  pdf: "application/pdf",
  bin: "application/octet-stream",
};

/** MIME type guessed from a path's extension, or undefined. */
export function mimeTypeOfPath(path: string): string | undefined {
  const dot = path.lastIndexOf(".");
  if (dot < 0 || dot < path.lastIndexOf("/")) return undefined;
  return MIME_BY_EXTENSION[path.slice(dot + 1).toLowerCase()];
}

/** Whether content of this MIME type is text. */
export function isTextMimeType(mimeType: string): boolean {
  const m = mimeType.toLowerCase().split(";")[0]!.trim();
  return (
    m.startsWith("text/") ||
    m === "application/json" ||
    m.endsWith("+json") ||
    m === "application/xml" ||
    m.endsWith("+xml") ||
    m === "application/yaml" ||
    m === "application/javascript"
  );
}

/** `StorageEntry` → MCP `Resource` (name = path; size when known; MIME type from the extension). */
export function storageEntryToResource(entry: StorageEntry): Resource {
  const resource: Resource = { uri: storagePathToUri(entry.path), name: entry.path };
  const mimeType = mimeTypeOfPath(entry.path);
  if (mimeType) resource.mimeType = mimeType;
  const size = Number(entry.size);
  if (Number.isSafeInteger(size) && size >= 0) resource.size = size;
  return resource;
}

/** Exposed entries of several `storage_list` answers, each path once, sorted by path (a stable order for pagination). */
function exposedEntries(entries: Iterable<StorageEntry>, prefixes: readonly string[]): StorageEntry[] {
  const byPath = new Map<string, StorageEntry>();
  for (const e of entries) if (isExposed(e.path, prefixes) && !byPath.has(e.path)) byPath.set(e.path, e);
  return [...byPath.keys()].sort().map((p) => byPath.get(p)!);
}

/**
 * The entries of several `storage_list` answers → MCP resources: only exposed paths that are not
 * {@link isUriTemplatePath template resources}, each path once, sorted by path.
 */
export function storageEntriesToResources(entries: Iterable<StorageEntry>, prefixes: readonly string[]): Resource[] {
  return exposedEntries(entries, prefixes)
    .filter((e) => !isUriTemplatePath(e.path))
    .map(storageEntryToResource);
}

/**
 * The resource templates for the exposed prefixes and listed entries: first one per exposed prefix,
 * `orchestra://storage/<prefix>{+path}` (RFC 6570 reserved expansion, so `path` may contain `/`);
 * then each exposed {@link isUriTemplatePath template resource} entry, as `{uriTemplate: path,
 * name: path}` (MIME type from the extension), sorted.
 */
export function resourceTemplatesFor(prefixes: readonly string[], entries: Iterable<StorageEntry> = []): ResourceTemplate[] {
  const listed = exposedEntries(entries, prefixes)
    .filter((e) => isUriTemplatePath(e.path))
    .map((e) => {
      const template: ResourceTemplate = { uriTemplate: e.path, name: e.path };
      const mimeType = mimeTypeOfPath(e.path);
      if (mimeType) template.mimeType = mimeType;
      return template;
    });
  return [...storageTemplatesFor(prefixes), ...listed];
}

function storageTemplatesFor(prefixes: readonly string[]): ResourceTemplate[] {
  return prefixes.map((prefix) => ({
    uriTemplate: `${prefix === "" ? STORAGE_URI_PREFIX : storagePathToUri(prefix)}{+path}`,
    name: prefix === "" ? "storage" : `storage:${prefix}`,
    description: prefix === "" ? "Any entry of the orchestrator's storage, by path" : `Entries of the orchestrator's storage under ${prefix}`,
  }));
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * `StorageReadResponse` → the `contents` element for `uri`, or `undefined` when the entry does
 * not exist (`version == 0`).
 * MIME type: `metadata.mimeType` (or `metadata.contentType`) when a string, else from the path's
 * extension.
 */
export function storageReadResponseToContents(uri: string, path: string, response: StorageReadResponse): ResourceContents | undefined {
  if (response.version === 0n) return undefined;
  const metadata = structToObject(response.metadata);
  const declared = typeof metadata.mimeType === "string" ? metadata.mimeType : typeof metadata.contentType === "string" ? metadata.contentType : undefined;
  const mimeType = declared ?? mimeTypeOfPath(path);
  const bytes = response.content;
  if (mimeType === undefined || isTextMimeType(mimeType)) {
    let text: string | undefined;
    try {
      text = strictUtf8.decode(bytes);
    } catch {
      text = undefined;
    }
    if (text !== undefined) {
      const contents: TextResourceContents = { uri, text };
      if (mimeType) contents.mimeType = mimeType;
      return contents;
    }
  }
  return { uri, mimeType: mimeType ?? "application/octet-stream", blob: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64") };
}
