/**
 * `serve --tools MODULE`: the embedded reference orchestrator with the user's module, through the
 * official SDK client over real stdio and QUIC: a tool returning an image, its log message, module
 * resources with their own URIs and a template resource, a prompt embedding a module resource.
 */
import { join } from "node:path";
import { LoggingMessageNotificationSchema, type LoggingMessageNotification } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBuiltCli, ROOT, runCli } from "../helpers/cli.js";
import { connectBridge, waitFor, type Bridge } from "../helpers/transport.js";

const IMAGE_TOOL = join(ROOT, "examples/image-tool.mjs");
const FIXTURES = join(ROOT, "examples/conformance-fixtures.mjs");

describe("serve --tools MODULE", () => {
  let bridge: Bridge;
  const logs: LoggingMessageNotification["params"][] = [];

  beforeAll(async () => {
    requireBuiltCli();
    bridge = await connectBridge(["--no-builtins", "--tools", IMAGE_TOOL, FIXTURES]);
    bridge.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
  });
  afterAll(async () => {
    await bridge?.close();
  });

  it("serves only the modules' tools and passes an image result through", async () => {
    const { tools } = await bridge.client.listTools();
    expect(tools.map((t) => t.name)).toContain("pixel");
    expect(tools.map((t) => t.name)).not.toContain("echo");
    const result = await bridge.client.callTool({ name: "pixel", arguments: { colour: "blue" } });
    expect(result.content).toEqual([
      { type: "text", text: "One blue pixel:" },
      { type: "image", mimeType: "image/png", data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGNgYPgPAAEDAQAIicLsAAAAAElFTkSuQmCC" },
    ]);
  });

  it("delivers the tool's log message once the client set a log level", async () => {
    await bridge.client.setLoggingLevel("info");
    await bridge.client.callTool({ name: "pixel", arguments: { colour: "red" } });
    await waitFor(() => logs.some((l) => l.logger === "pixel"), "the pixel tool's log message");
    expect(logs.find((l) => l.logger === "pixel")).toEqual({ level: "info", logger: "pixel", data: "drawing one red pixel" });
  });

  it("lists and reads module resources under their own URIs, and template resources", async () => {
    const { resources } = await bridge.client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(expect.arrayContaining(["test://static-text", "test://static-binary"]));
    expect((await bridge.client.readResource({ uri: "test://static-text" })).contents).toEqual([
      { uri: "test://static-text", mimeType: "text/plain", text: "This is the content of the static text resource." },
    ]);
    const binary = (await bridge.client.readResource({ uri: "test://static-binary" })).contents[0] as { blob?: string; mimeType?: string };
    expect(binary.mimeType).toBe("image/png");
    expect(Buffer.from(binary.blob!, "base64").subarray(1, 4).toString()).toBe("PNG");
    expect(resources.map((r) => r.uri)).not.toContain("test://template/{id}/data");
    const { resourceTemplates } = await bridge.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain("test://template/{id}/data");
    const templated = (await bridge.client.readResource({ uri: "test://template/42/data" })).contents[0] as { text?: string; uri: string };
    expect(templated.uri).toBe("test://template/42/data");
    expect(JSON.parse(templated.text!)).toMatchObject({ id: "42", templateTest: true });
  });

  it("embeds a module resource in a prompt", async () => {
    const prompt = await bridge.client.getPrompt({ name: "test_prompt_with_embedded_resource", arguments: { resourceUri: "test://example-resource" } });
    expect(prompt.messages[0]!.content).toEqual({
      type: "resource",
      resource: { uri: "test://example-resource", mimeType: "text/plain", text: "Embedded resource content for testing." },
    });
  });

  it("refuses --tools together with --orchestrator-addr", async () => {
    const r = await runCli(["serve", "--orchestrator-addr", "127.0.0.1:1", "--tools", IMAGE_TOOL]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--tools and --no-builtins configure the embedded orchestrator/);
  });
});
