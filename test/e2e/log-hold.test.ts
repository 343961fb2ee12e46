/**
 * src/log.ts holding records (what `serve` does until its start-up is over): nothing is lost and
 * the order is kept, whether the hold ends by `startLogging`, by an `error` record or by the
 * process exiting; each held record keeps the time it was logged. Runs dist/log.js in a child
 * process, since the logger writes to fd 2.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { requireBuiltCli, ROOT } from "../helpers/cli.js";

const LOG_MODULE = pathToFileURL(join(ROOT, "dist/log.js")).href;

interface Run {
  /** stderr lines: JSON records parsed, other lines as text. */
  lines: Array<{ level: number; time: number; component: string; msg: string } | string>;
  code: number | null;
}

/** Runs `body` (an ES module body with `log`, `holdLogging`, `startLogging`, `configureLogging` in scope). */
function run(body: string): Promise<Run> {
  const script = `import { childLogger, configureLogging, holdLogging, startLogging } from ${JSON.stringify(LOG_MODULE)};\nconfigureLogging({ format: "json" });\nconst log = childLogger("t");\n${body}`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  return new Promise((resolve) =>
    child.on("close", (code) =>
      resolve({
        code,
        lines: stderr
          .split("\n")
          .filter(Boolean)
          .map((l) => (l.startsWith("{") ? (JSON.parse(l) as Run["lines"][number]) : l)),
      }),
    ),
  );
}

const msgs = (r: Run) => r.lines.map((l) => (typeof l === "string" ? l : `${l.level}:${l.msg}`));

describe("log records held until start-up is over", () => {
  beforeAll(() => requireBuiltCli());

  it("writes held records in order, with the time each was logged, when startLogging runs; below the level none", async () => {
    const r = await run(`
      holdLogging();
      log.info("first");
      const loggedAt = Date.now();
      log.debug("below the level");
      log.warn({ n: 2 }, "second");
      process.stderr.write("HELD\\n");
      await new Promise((res) => setTimeout(res, 50));
      process.stderr.write("AT " + loggedAt + "\\n");
      startLogging();
      process.stderr.write("STARTED\\n");
      log.info("direct");`);
    expect(r.code).toBe(0);
    const at = Number((r.lines.find((l) => typeof l === "string" && l.startsWith("AT ")) as string).slice(3));
    expect(msgs(r)).toEqual(["HELD", `AT ${at}`, "30:first", "40:second", "STARTED", "30:direct"]);
    const first = r.lines[2] as { time: number; component: string };
    expect(first.time).toBeLessThanOrEqual(at);
    expect(first.component).toBe("t");
  });

  it("an error record ends the hold at once: the held records, then the error, before the code after it runs", async () => {
    const r = await run(`
      holdLogging();
      log.info("before");
      log.error("failed");
      process.stderr.write("AFTER\\n");
      log.warn("later");`);
    expect(msgs(r)).toEqual(["30:before", "50:failed", "AFTER", "40:later"]);
  });

  it("process.exit while holding writes the held records", async () => {
    const r = await run(`
      holdLogging();
      log.info("one");
      log.warn("two");
      process.exit(3);`);
    expect(r.code).toBe(3);
    expect(msgs(r)).toEqual(["30:one", "40:two"]);
  });

  it("the level in force when a record is logged decides, held or not", async () => {
    const r = await run(`
      holdLogging();
      configureLogging({ level: "warn" });
      log.info("dropped");
      log.warn("kept");
      startLogging();
      log.info("dropped too");`);
    expect(msgs(r)).toEqual(["40:kept"]);
  });
});
