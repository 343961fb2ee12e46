/**
 * The reference orchestrator's in-memory storage (`storage_read`, `storage_write`,
 * `storage_delete`, `storage_list`; orchestra-protocol.md "Messages").
 *
 * One namespace per `storage_type` (`""` is the default). Versions: an entry is created with
 * version 1 (`expected_version` 0 creates and fails if the entry exists); each write with a
 * matching `expected_version` increments it (compare-and-set). Reading a missing entry answers
 * `version 0` with no content (the bridge maps that to MCP "resource not found").
 * `storage_list`: entries whose path starts with `prefix` and, when `pattern` is set, whose path
 * matches the glob (`*` within a segment, `**` across segments, `?` one character); sorted by path.
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { URI_TEMPLATE_EXPRESSION } from "../translate/resources.js";

/** One stored entry. */
export interface StoredEntry {
  content: Uint8Array;
  metadata: JsonObject;
  version: number;
  modifiedAt: Date;
}

/** What {@link MemoryStorage.write} answers (`StorageWriteResponse`). */
export interface WriteOutcome {
  success: boolean;
  newVersion: number;
  error: string;
}

/**
 * A template resource (MCP `ResourceTemplate`): paths of the default namespace that match
 * `uriTemplate` and are not stored entries are read by rendering them.
 */
export interface ResourceTemplateSpec {
  /**
   * RFC 6570 template of level 1 or 2: `{name}` matches one path segment (no `/`, percent-decoded),
   * `{+name}` any non-empty rest; e.g. `test://template/{id}/data`.
   */
  uriTemplate: string;
  name?: string;
  description?: string;
  /** MIME type of the rendered contents (stored as `metadata.mimeType`). */
  mimeType?: string;
  /** Renders the contents for the variables matched in `uri`: text (UTF-8) or bytes, or a promise of either. */
  read(variables: Readonly<Record<string, string>>, uri: string): string | Uint8Array | Promise<string | Uint8Array>;
}

/** A compiled {@link ResourceTemplateSpec}. */
interface CompiledTemplate {
  spec: ResourceTemplateSpec;
  pattern: RegExp;
  names: Array<{ name: string; reserved: boolean }>;
}

/** `{name}` / `{+name}` expressions of a template as an anchored RegExp; undefined when it has none. */
function compileTemplate(spec: ResourceTemplateSpec): CompiledTemplate | undefined {
  const names: CompiledTemplate["names"] = [];
  let re = "";
  let last = 0;
  for (const m of spec.uriTemplate.matchAll(new RegExp(URI_TEMPLATE_EXPRESSION, "g"))) {
    re += escapeRegExp(spec.uriTemplate.slice(last, m.index));
    const reserved = m[1] === "+";
    re += reserved ? "(.+)" : "([^/?#]+)";
    names.push({ name: m[2]!, reserved });
    last = m.index + m[0].length;
  }
  if (names.length === 0) return undefined;
  re += escapeRegExp(spec.uriTemplate.slice(last));
  return { spec, pattern: new RegExp(`^${re}$`, "s"), names };
}

/** In-memory storage. */
export class MemoryStorage {
  private readonly spaces = new Map<string, Map<string, StoredEntry>>();
  private readonly templates: CompiledTemplate[] = [];
  /** `modified_at` of the listed templates. */
  private readonly created = new Date();

  /**
   * @param seed entries to create in the default namespace: path → text (UTF-8) or bytes, with
   *   optional metadata
   */
  constructor(seed: Iterable<{ path: string; content: string | Uint8Array; metadata?: JsonObject }> = []) {
    for (const e of seed) this.write(e.path, typeof e.content === "string" ? new TextEncoder().encode(e.content) : e.content, e.metadata ?? {}, 0);
  }

  private space(type: string, create = false): Map<string, StoredEntry> | undefined {
    let s = this.spaces.get(type);
    if (!s && create) {
      s = new Map();
      this.spaces.set(type, s);
    }
    return s;
  }

  /**
   * Adds a template resource (served by {@link read} in the default namespace).
   * @throws RangeError when `uriTemplate` has no `{name}` expression
   */
  addTemplate(spec: ResourceTemplateSpec): this {
    const compiled = compileTemplate(spec);
    if (!compiled) throw new RangeError(`resource template ${JSON.stringify(spec.uriTemplate)} has no {name} expression`);
    this.templates.push(compiled);
    return this;
  }

  /** The template resources, in the order added. */
  listTemplates(): ResourceTemplateSpec[] {
    return this.templates.map((t) => t.spec);
  }

  /**
   * The entry at `path`, or undefined. In the default namespace a path that is no stored entry
   * but matches a template is rendered by the first matching template (version 1; a template
   * whose `read` throws or rejects, gives something that is neither text nor bytes, or whose
   * variables are badly percent-encoded reads as absent).
   */
  async read(path: string, type = ""): Promise<StoredEntry | undefined> {
    const stored = this.space(type)?.get(path);
    if (stored || type !== "") return stored;
    if (this.templates.some((t) => t.spec.uriTemplate === path)) return undefined; // the template itself is no resource
    for (const t of this.templates) {
      const m = t.pattern.exec(path);
      if (!m) continue;
      try {
        const variables: Record<string, string> = {};
        t.names.forEach(({ name, reserved }, i) => (variables[name] = reserved ? m[i + 1]! : decodeURIComponent(m[i + 1]!)));
        const body = await t.spec.read(variables, path);
        if (typeof body !== "string" && !(body instanceof Uint8Array)) return undefined;
        const content = typeof body === "string" ? new TextEncoder().encode(body) : new Uint8Array(body);
        return { content, metadata: t.spec.mimeType ? { mimeType: t.spec.mimeType } : {}, version: 1, modifiedAt: new Date() };
      } catch {
        return undefined;
      }
    }
    return undefined;
  }

  /**
   * Creates (`expectedVersion` 0) or replaces (`expectedVersion` = current version) an entry.
   * A mismatch fails with `error` naming the current version; nothing changes.
   */
  write(path: string, content: Uint8Array, metadata: JsonObject, expectedVersion: number, type = ""): WriteOutcome {
    if (path === "") return { success: false, newVersion: 0, error: "empty path" };
    const space = this.space(type, true)!;
    const current = space.get(path);
    const currentVersion = current?.version ?? 0;
    if (expectedVersion !== currentVersion) {
      return {
        success: false,
        newVersion: currentVersion,
        error: current ? `version conflict: ${path} is at version ${currentVersion}` : `no entry ${path} to update (use expected_version 0 to create)`,
      };
    }
    const entry: StoredEntry = { content: new Uint8Array(content), metadata, version: currentVersion + 1, modifiedAt: new Date() };
    space.set(path, entry);
    return { success: true, newVersion: entry.version, error: "" };
  }

  /** Deletes an entry; returns whether it existed. */
  delete(path: string, type = ""): boolean {
    return this.space(type)?.delete(path) ?? false;
  }

  /**
   * Entries under `prefix` (and matching `pattern` when non-empty), sorted by path. In the default
   * namespace the templates are listed too, as empty entries whose path is the `uriTemplate` (the
   * bridge lists them as resource templates).
   */
  list(prefix = "", pattern = "", type = ""): Array<{ path: string; entry: StoredEntry }> {
    const space = this.space(type);
    const templates: Array<[string, StoredEntry]> =
      type === "" ? this.templates.map((t) => [t.spec.uriTemplate, { content: new Uint8Array(0), metadata: {}, version: 1, modifiedAt: this.created }]) : [];
    if (!space && templates.length === 0) return [];
    const re = pattern === "" ? undefined : globToRegExp(pattern);
    return [...(space?.entries() ?? []), ...templates]
      .filter(([path]) => path.startsWith(prefix) && (!re || re.test(path)))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([path, entry]) => ({ path, entry }));
  }
}

/** `text` with every RegExp metacharacter escaped. */
function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?|()[\]{}]/g, "\\$&");
}

/** A glob (`**`, `*`, `?`) as an anchored RegExp over whole paths. */
export function globToRegExp(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*") {
      if (glob[i + 1] === "*") {
        re += ".*";
        i++;
      } else {
        re += "[^/]*";
      }
    } else if (c === "?") {
      re += "[^/]";
    } else {
      re += escapeRegExp(c);
    }
  }
  return new RegExp(`^${re}$`, "s");
}

/** Sample entries the embedded reference orchestrator starts with (docs and one binary blob). */
export function sampleStorageEntries(): Array<{ path: string; content: string | Uint8Array; metadata?: JsonObject }> {
  return [
    { path: "docs/readme.md", content: "# Reference orchestrator\n\nAn in-memory storage exposed as MCP resources.\n", metadata: { mimeType: "text/markdown" } },
    { path: "docs/notes.txt", content: "Notes: résumé ✓ 世界\n" },
    { path: "data/blob.bin", content: new Uint8Array([0, 1, 2, 254, 255]), metadata: { mimeType: "application/octet-stream" } },
  ];
}
