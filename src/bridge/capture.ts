/**
 * `serve --capture FILE`: appends every JSON-RPC message in both directions as one JSON line
 * `{"ts": <ISO-8601>, "dir": "c2s" | "s2c", "msg": <message>}`; a c2s line that is not valid
 * JSON is kept as `"raw": <text>` instead of `msg`. A c2s line the bridge refused for exceeding
 * its line limit (answered with `-32600`, never forwarded) is not stored; a marker record
 * `{"ts": <ISO-8601>, "dir": "c2s", "dropped": {"bytes": <its length>, "limit": <the limit>,
 * "reason": "line-too-long"}}` takes its place, so that `validate` knows a message is missing.
 * This is the default input format of `orchestra-stdio validate`.
 */
import { createWriteStream, openSync, type WriteStream } from "node:fs";
import { childLogger } from "../log.js";
import { once } from "node:events";

export type CaptureDirection = "c2s" | "s2c";

export class CaptureWriter {
  private readonly out: WriteStream;

  /**
   * Opens `path` for appending (created if missing).
   * @throws Error (Node's `ENOENT`, `EISDIR`, `EACCES`...) when the file cannot be opened, so that
   *   `serve --capture` fails at start-up instead of silently recording nothing.
   */
  constructor(path: string) {
    const fd = openSync(path, "a");
    this.out = createWriteStream(path, { fd });
    this.out.once("error", (err) => {
      // A write failure later on (disk full...) must never take the bridge down: log it once.
      childLogger("capture").error({ err, path }, "capture stopped: cannot write the capture file");
    });
  }

  /**
   * Records one message. `text` is its JSON text exactly as read or written; it is embedded
   * verbatim when it parses, so the capture holds the bytes that crossed the wire.
   */
  record(dir: CaptureDirection, text: string): void {
    const ts = new Date().toISOString();
    let line: string;
    try {
      JSON.parse(text);
      line = `{"ts":"${ts}","dir":"${dir}","msg":${text}}\n`;
    } catch {
      line = JSON.stringify({ ts, dir, raw: text }) + "\n";
    }
    this.out.write(line);
  }

  /**
   * Records that a message of `bytes` bytes was dropped unrecorded because it exceeded the
   * `limit`-byte line limit (the marker record described in the module comment).
   */
  dropped(dir: CaptureDirection, bytes: number, limit: number): void {
    const ts = new Date().toISOString();
    this.out.write(`${JSON.stringify({ ts, dir, dropped: { bytes, limit, reason: "line-too-long" } })}\n`);
  }

  /** Flushes and closes the file. */
  async close(): Promise<void> {
    this.out.end();
    if (!this.out.closed) await once(this.out, "close").catch(() => undefined);
  }
}
