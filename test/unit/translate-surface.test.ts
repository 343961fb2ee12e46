/**
 * Pure translators of the server surface: cursors, storage ⇄ resources, prompts, stream chunks,
 * per-revision result shaping.
 */
import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import {
  PromptGetResponseSchema,
  StorageEntrySchema,
  StorageReadResponseSchema,
  StreamChunkSchema,
  StreamEndSchema,
  ToolResponseSchema,
} from "../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { featuresOf } from "../../src/translate/features.js";
import { decodeCursor, encodeCursor, InvalidCursorError, paginate } from "../../src/translate/pagination.js";
import { missingPromptArguments, promptGetResponseToResult, PromptTranslationError, resourcePathsOf } from "../../src/translate/prompts.js";
import {
  isExposed,
  resourceTemplatesFor,
  ResourceUriError,
  storageEntriesToResources,
  storagePathToUri,
  storageReadResponseToContents,
  uriToStoragePath,
} from "../../src/translate/resources.js";
import { isStreamRefusal, PROGRESS_CONTENT_TYPE, StreamAccumulator } from "../../src/translate/streams.js";
import { callToolParamsToPluginRequest, toolResponseToCallToolResult } from "../../src/translate/tools.js";
import { isUri } from "../../src/mcp/formats.js";

describe("pagination", () => {
  it("walks a list page by page and ends without a cursor", () => {
    const items = Array.from({ length: 7 }, (_, i) => i);
    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = paginate(items, "tools", cursor, 3);
      seen.push(...page.items);
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(seen).toEqual(items);
    expect(pages).toBe(3);
  });

  it("refuses cursors of another list, foreign strings and bad offsets", () => {
    const c = encodeCursor("tools", 3);
    expect(decodeCursor("tools", c)).toBe(3);
    expect(() => decodeCursor("prompts", c)).toThrow(InvalidCursorError);
    expect(() => decodeCursor("tools", "abc$")).toThrow(InvalidCursorError);
    expect(() => decodeCursor("tools", Buffer.from('{"l":"tools","o":-1}').toString("base64url"))).toThrow(InvalidCursorError);
    expect(() => paginate([1], "tools", undefined, 0)).toThrow(RangeError);
  });
});

describe("storage ⇄ resources", () => {
  it("round-trips paths through orchestra://storage URIs that are valid URIs", () => {
    for (const path of ["a.txt", "dir/b c.md", "ünï/çødé/文件.txt", "x/%41/y#z?q"]) {
      const uri = storagePathToUri(path);
      expect(isUri(uri)).toBe(true);
      expect(uriToStoragePath(uri)).toBe(path);
    }
    expect(() => uriToStoragePath("urn:a")).toThrow(ResourceUriError); // no scheme://: neither form
    expect(uriToStoragePath("file:///a")).toBe("file:///a"); // a resource with its own URI
    expect(() => uriToStoragePath("orchestra://storage/")).toThrow(ResourceUriError);
    expect(() => uriToStoragePath("orchestra://storage/%E0%A4%A")).toThrow(ResourceUriError);
  });

  it("filters by exposed prefixes, deduplicates and sorts entries", () => {
    const entries = ["b/2", "a/1", "b/2", "c/3"].map((path) => create(StorageEntrySchema, { path, size: 4n }));
    const resources = storageEntriesToResources(entries, ["a/", "b/"]);
    expect(resources.map((r) => r.name)).toEqual(["a/1", "b/2"]);
    expect(isExposed("c/3", [""])).toBe(true);
    expect(resourceTemplatesFor([""])).toEqual([expect.objectContaining({ uriTemplate: "orchestra://storage/{+path}" })]);
  });

  it("reads text as text, non-UTF-8 or binary types as base64, and version 0 as missing", () => {
    const text = create(StorageReadResponseSchema, { content: new TextEncoder().encode("héllo"), version: 1n });
    expect(storageReadResponseToContents("u:1", "a.txt", text)).toEqual({ uri: "u:1", mimeType: "text/plain", text: "héllo" });
    const bad = create(StorageReadResponseSchema, { content: new Uint8Array([0xff, 0xfe]), version: 1n });
    expect(storageReadResponseToContents("u:2", "noext", bad)).toEqual({ uri: "u:2", mimeType: "application/octet-stream", blob: "//4=" });
    const png = create(StorageReadResponseSchema, { content: new TextEncoder().encode("abc"), version: 2n, metadata: { mimeType: "image/png" } });
    expect(storageReadResponseToContents("u:3", "x", png)).toEqual({ uri: "u:3", mimeType: "image/png", blob: "YWJj" });
    expect(storageReadResponseToContents("u:4", "x", create(StorageReadResponseSchema, { version: 0n }))).toBeUndefined();
  });
});

describe("prompts", () => {
  it("lists missing required arguments", () => {
    const prompt = { name: "p", arguments: [{ name: "a", required: true }, { name: "b" }, { name: "c", required: true }] };
    expect(missingPromptArguments(prompt, { a: "1" })).toEqual(["c"]);
    expect(missingPromptArguments(prompt, undefined)).toEqual(["a", "c"]);
  });

  it("embeds resource blocks from what was read and rejects unknown roles and types", () => {
    const response = create(PromptGetResponseSchema, {
      messages: [
        { role: "assistant", content: { type: "resource", text: "orchestra://storage/d/x.md" } },
        { role: "user", content: { type: "resource", text: "d/x.md" } },
      ],
    });
    expect(resourcePathsOf(response)).toEqual(["d/x.md"]);
    const contents = { uri: "orchestra://storage/d/x.md", text: "X" };
    const result = promptGetResponseToResult(response, new Map([["d/x.md", contents]]));
    expect(result.messages.map((m) => m.content)).toEqual([
      { type: "resource", resource: contents },
      { type: "resource", resource: contents },
    ]);
    expect(() => promptGetResponseToResult(response)).toThrow(PromptTranslationError);
    const image = create(PromptGetResponseSchema, { messages: [{ role: "user", content: { type: "image", text: "" } }] });
    expect(() => promptGetResponseToResult(image)).toThrow(/content type/);
  });
});

describe("streams and per-revision tool results", () => {
  it("accumulates chunks into progress and a text result", () => {
    const acc = new StreamAccumulator();
    const chunk = (data: string, contentType = "") => create(StreamChunkSchema, { data: new TextEncoder().encode(data), contentType });
    expect(acc.add(chunk("a"))).toEqual({ kind: "progress", update: { progress: 1, message: "a" } });
    expect(acc.add(chunk('{"progress":0.5}', PROGRESS_CONTENT_TYPE))).toEqual({ kind: "progress", update: { progress: 1 } });
    expect(acc.add(chunk("x".repeat(500)))).toMatchObject({ kind: "progress", update: { progress: 3, message: "x".repeat(200) } });
    expect(acc.result(create(StreamEndSchema, { success: true })).content).toEqual([{ type: "text", text: "a" + "x".repeat(500) }]);
    expect(isStreamRefusal(create(StreamEndSchema, { success: false, errorCode: "stream_unsupported" }), 0)).toBe(true);
    expect(isStreamRefusal(create(StreamEndSchema, { success: false, errorCode: "stream_unsupported" }), 1)).toBe(false);
  });

  it("puts structuredContent only in revisions that have it", () => {
    const response = create(ToolResponseSchema, { success: true, result: { n: 1 } });
    expect(toolResponseToCallToolResult(response, featuresOf("2025-06-18"))).toHaveProperty("structuredContent", { n: 1 });
    expect(toolResponseToCallToolResult(response, featuresOf("2025-03-26"))).not.toHaveProperty("structuredContent");
    expect(toolResponseToCallToolResult(response)).toHaveProperty("structuredContent");
  });

  it("builds stream_start with the request id as stream id", () => {
    const req = callToolParamsToPluginRequest({ name: "count", arguments: { to: 2 } }, { sessionId: "s-1", requestId: "rid" }, "streamStart");
    expect(req.requestId).toBe("rid");
    expect(req.request.case === "streamStart" && req.request.value).toMatchObject({ streamId: "rid", toolName: "count", callerPlugin: "transport.stdio", arguments: { to: 2 } });
  });

  it("knows which revisions batch and which are stateless", () => {
    expect(["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"].map((v) => featuresOf(v).batches)).toEqual([false, true, false, false, false]);
    expect(featuresOf("2026-07-28").stateless).toBe(true);
    expect(featuresOf("2025-11-25").inputErrorsAreToolErrors).toBe(true);
    expect(featuresOf("2025-06-18").inputErrorsAreToolErrors).toBe(false);
  });
});
