/**
 * Modules for the reference orchestrator: tools, prompts, resources with their own URIs and
 * template resources (src/orchestrator/load-tools.ts, storage.ts), and how the bridge names them.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadModule, loadOrchestratorContent } from "../../src/orchestrator/load-tools.js";
import { MemoryStorage } from "../../src/orchestrator/storage.js";
import { isUriPath, storagePathToUri, uriToStoragePath } from "../../src/translate/resources.js";
import { ROOT, tempDir } from "../helpers/cli.js";

const FIXTURES = join(ROOT, "examples/conformance-fixtures.mjs");
const text = (bytes: Uint8Array | undefined) => (bytes ? new TextDecoder().decode(bytes) : undefined);

describe("module loading", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  const mod = async (name: string, source: string) => {
    const file = join(dir.path, name);
    await writeFile(file, source);
    return file;
  };
  beforeAll(async () => {
    dir = await tempDir("orchestra-modules-");
  });
  afterAll(async () => {
    await dir.remove();
  });

  it("reads tools, prompts, resources and templates from named exports", async () => {
    const loaded = await loadModule(FIXTURES);
    expect(loaded.tools.map((t) => t.name)).toContain("test_image_content");
    expect(loaded.prompts.map((p) => p.name)).toEqual(["test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_image", "test_prompt_with_embedded_resource"]);
    expect(loaded.resources.map((r) => r.uri)).toEqual(["test://static-text", "test://static-binary", "test://example-resource"]);
    expect(loaded.templates.map((t) => t.uriTemplate)).toEqual(["test://template/{id}/data"]);
  });

  it("accepts a default export object and names the bad entry of a module", async () => {
    const ok = await mod("ok.mjs", `export default { prompts: [{ name: "p", description: "d", render: () => ({ messages: [] }) }] };`);
    expect((await loadModule(ok)).prompts.map((p) => p.name)).toEqual(["p"]);
    const both = await mod("both.mjs", `export const resources = [{ uri: "x://a", path: "a", text: "" }];`);
    await expect(loadModule(both)).rejects.toThrow(/resources\[0\]: give exactly one of "uri" and "path"/);
    const rel = await mod("rel.mjs", `export const resources = [{ uri: "a/b", text: "" }];`);
    await expect(loadModule(rel)).rejects.toThrow(/"uri" must be an absolute scheme:\/\/ URI/);
    const noRender = await mod("norender.mjs", `export const prompts = [{ name: "p", description: "" }];`);
    await expect(loadModule(noRender)).rejects.toThrow(/prompts\[0\] \(p\): "render" must be a function/);
    const none = await mod("none.mjs", `export const other = 1;`);
    await expect(loadModule(none)).rejects.toThrow(/must export an array of tools/);
    const noVar = await mod("novar.mjs", `export const resources = [{ uriTemplate: "x://fixed", read: () => "" }];`);
    await expect(loadOrchestratorContent([noVar], false)).rejects.toThrow(/has no \{name\} expression/);
  });

  it("stores resources at their URI, renders templates on read and leaves out the built-ins when asked", async () => {
    const content = await loadOrchestratorContent([FIXTURES], false);
    expect(content.tools.list().some((t) => t.name === "echo")).toBe(false);
    expect(content.prompts.list().map((p) => p.name)).not.toContain("greet");
    const entry = await content.storage.read("test://static-text");
    expect(text(entry?.content)).toBe("This is the content of the static text resource.");
    expect(entry?.metadata).toMatchObject({ mimeType: "text/plain" });
    expect((await content.storage.read("test://static-binary"))?.content.subarray(1, 4)).toEqual(new TextEncoder().encode("PNG"));
    expect(JSON.parse(text((await content.storage.read("test://template/123/data"))?.content)!)).toEqual({ id: "123", templateTest: true, data: "Data for ID: 123" });
    expect(text((await content.storage.read("test://template/a%20b/data"))?.content)).toContain('"id":"a b"');
    expect(await content.storage.read("test://template/1/2/data")).toBeUndefined(); // {id} is one segment
    expect(await content.storage.read("test://template/123/data", "other")).toBeUndefined(); // templates: default namespace only
    const withBuiltins = await loadOrchestratorContent([FIXTURES], true);
    expect(withBuiltins.tools.list().some((t) => t.name === "echo")).toBe(true);
  });

  it("serves {+rest} templates across segments and reads a throwing template as absent", async () => {
    const storage = new MemoryStorage();
    storage.addTemplate({ uriTemplate: "files://{+rest}", read: (v) => `rest=${v.rest}` });
    storage.addTemplate({
      uriTemplate: "bad://{x}",
      read: () => {
        throw new Error("no");
      },
    });
    expect(text((await storage.read("files://a/b/c"))?.content)).toBe("rest=a/b/c");
    expect(await storage.read("bad://1")).toBeUndefined();
  });

  it("lists templates as entries named by their uriTemplate (default namespace), and does not render the template itself", async () => {
    const storage = new MemoryStorage([{ path: "docs/a.md", content: "A" }]);
    storage.addTemplate({ uriTemplate: "x://{id}", read: (v) => v.id! });
    expect(storage.list().map((e) => e.path)).toEqual(["docs/a.md", "x://{id}"]);
    expect(storage.list("docs/").map((e) => e.path)).toEqual(["docs/a.md"]);
    expect(storage.list("", "", "other")).toEqual([]);
    expect(await storage.read("x://{id}")).toBeUndefined();
    expect(text((await storage.read("x://7"))?.content)).toBe("7");
  });
});

describe("resources with their own URI, on the bridge side", () => {
  it("a scheme:// storage path is its own URI, both ways; other paths keep orchestra://storage/", () => {
    expect(isUriPath("test://static-text")).toBe(true);
    expect(isUriPath("docs/readme.md")).toBe(false);
    expect(isUriPath("orchestra://storage/x")).toBe(false);
    expect(storagePathToUri("test://static-text")).toBe("test://static-text");
    expect(uriToStoragePath("test://static-text")).toBe("test://static-text");
    expect(storagePathToUri("docs/a b.md")).toBe("orchestra://storage/docs/a%20b.md");
  });
});
