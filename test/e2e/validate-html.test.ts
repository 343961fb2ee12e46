/**
 * `validate --format html`: the page, opened in a real headless Chromium (Debian's, driven by
 * puppeteer-core), renders without errors or network requests, lists every session and every
 * finding of a sample capture of our own, and its severity and rule filters work.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { CHROMIUM, requireChromium } from "../helpers/requires.js";
import { requireBuiltCli, runCli, tempDir } from "../helpers/cli.js";

const skip = requireChromium();
const rec = (ts: string, dir: string, msg: object) => JSON.stringify({ ts: `2025-06-18T10:00:${ts}Z`, dir, msg });
const CAPTURE = [
  rec("00.000", "c2s", { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } } }),
  rec("00.040", "s2c", { jsonrpc: "2.0", id: 0, result: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "s", version: "1" } } }),
  rec("00.050", "c2s", { jsonrpc: "2.0", method: "notifications/initialized" }),
  rec("00.060", "c2s", { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  rec("00.071", "s2c", { jsonrpc: "2.0", id: 1, result: { tools: [{ name: "echo", description: "x".repeat(400), inputSchema: { type: "object" } }] } }),
  rec("00.100", "c2s", { jsonrpc: "2.0", id: 2, method: "resources/list", params: {} }), // warning: capability
  rec("00.105", "s2c", { jsonrpc: "2.0", id: 2, error: { code: -32601, message: "Method not found" } }),
  rec("00.200", "c2s", { jsonrpc: "2.0", id: 3, method: "tools/call", params: { arguments: {} } }), // error: no name
  rec("01.450", "s2c", { jsonrpc: "2.0", id: 3, result: { content: [{ type: "text", text: "<script>alert(1)</script>" }] } }),
  rec("01.500", "s2c", { jsonrpc: "2.0", id: 9, result: {} }), // error: unmatched
  rec("01.600", "c2s", { jsonrpc: "2.0", id: 4, method: "ping" }), // error: unanswered
].join("\n");
const claude = (ts: string, server: string, who: string, msg: object) => `2025-06-18T10:00:${ts}Z [${server}] [info] Message from ${who}: ${JSON.stringify(msg)}`;
const CLAUDE_LOG = [
  claude("00.000", "weather", "client", {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } },
  }),
  claude("00.010", "files", "client", {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } },
  }),
  claude("00.300", "weather", "server", { jsonrpc: "2.0", id: 0, result: { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "w", version: "1" } } }),
  claude("00.310", "weather", "client", { jsonrpc: "2.0", method: "notifications/initialized" }),
  claude("00.320", "weather", "client", { jsonrpc: "2.0", method: "prompts/list", params: {} }), // error: kind-mismatch
].join("\n");

interface JsonFinding {
  type: string;
  rule: string;
  severity: string;
  line: number;
  session?: string;
}

describe.skipIf(skip !== undefined)(`validate --format html in headless Chromium${skip === undefined ? "" : ` (skipped: ${skip})`}`, () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let browser: Browser;
  let page: Page;
  let findings: JsonFinding[];
  const requests: string[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    requireBuiltCli();
    dir = await tempDir("validate-html-");
    const files = [join(dir.path, "sample.capture.jsonl"), join(dir.path, "mcp.log")];
    writeFileSync(files[0]!, CAPTURE);
    writeFileSync(files[1]!, CLAUDE_LOG);
    const html = await runCli(["validate", "--format", "html", ...files]);
    expect(html.code).toBe(1);
    writeFileSync(join(dir.path, "report.html"), html.stdout);
    const json = await runCli(["validate", "--format", "json", ...files]);
    findings = json.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as JsonFinding)
      .filter((f) => f.type === "finding");
    // No background networking (this machine's network is closed: lookups and refused connections
    // slow the start), and a launch timeout for a loaded 2-core CI machine.
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
      headless: true,
      timeout: 90_000,
    });
    page = await browser.newPage();
    page.on("request", (r) => requests.push(r.url()));
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("dialog", (d) => {
      errors.push(`dialog: ${d.message()}`);
      void d.dismiss();
    });
    await page.setViewport({ width: 1200, height: 900 });
    await page.goto(`file://${join(dir.path, "report.html")}`, { waitUntil: "load" });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await dir?.remove();
  });

  const visible = (selector: string) => page.$$eval(selector, (els) => els.filter((e) => (e as HTMLElement).offsetParent !== null).length);

  it("renders with no script error, no dialog and no request but the page itself", async () => {
    expect(errors).toEqual([]);
    expect(requests.every((u) => u.startsWith("file://"))).toBe(true);
    expect(await page.$eval("#summary", (e) => e.textContent)).toMatch(/errors?.*warnings?.*messages?/);
  });

  it("lists every session and every finding, each on the line it concerns", async () => {
    const sessions = await page.$$eval(".session[data-session]", (els) => els.map((e) => (e as HTMLElement).dataset.session));
    expect(sessions).toEqual(["", "weather", "files"]);
    expect(findings.length).toBeGreaterThanOrEqual(5);
    const shown = await page.$$eval(".finding", (els) =>
      els.map((e) => {
        const msg = e.closest(".msg");
        const where = msg?.querySelector(".where")?.textContent ?? "";
        return `${(e as HTMLElement).dataset.rule} ${(e as HTMLElement).dataset.severity} ${/line (\d+)/.exec(where)?.[1] ?? "?"}`;
      }),
    );
    expect(shown.sort()).toEqual(findings.map((f) => `${f.rule} ${f.severity} ${f.line}`).sort());
    // a request and its response show the latency between them
    expect(await page.$$eval(".latency", (els) => els.map((e) => e.textContent))).toContain("answered in 1.25 s");
    // payload text is text: the <script> in a tool result is not run (no dialog) and shows as written
    expect(await page.$$eval("pre", (els) => els.some((e) => e.textContent!.includes("<script>alert(1)</script>")))).toBe(true);
  });

  it("the severity filter hides warnings and the rule filter keeps one rule", async () => {
    const errorsCount = findings.filter((f) => f.severity === "error").length;
    expect(await visible(".finding")).toBe(findings.length);
    await page.click('#filter-severity input[value="warning"]');
    expect(await visible(".finding")).toBe(errorsCount);
    expect(await visible(".finding.warning")).toBe(0);
    await page.click('#filter-severity input[value="warning"]');
    await page.select("#filter-rule", "session/unmatched-response");
    expect(await page.$$eval(".finding", (els) => els.filter((e) => (e as HTMLElement).offsetParent !== null).map((e) => (e as HTMLElement).dataset.rule))).toEqual([
      "session/unmatched-response",
    ]);
    // messages without a finding of that rule are hidden too
    expect(await visible(".msg")).toBe(1);
    await page.select("#filter-rule", "");
    await page.click("#only-findings");
    expect(await visible(".msg")).toBe(new Set(findings.map((f) => `${f.session ?? ""} ${f.line}`)).size);
  });
});
