/**
 * `--jobs N`: validates files on N worker threads (one file at a time per worker). Findings are
 * delivered file by file in input order: the file whose turn it is streams straight through,
 * later files are buffered until their turn. Only serialisable options cross the thread
 * boundary (formats, direction, version, schema, limits); callbacks stay on the main thread.
 *
 * When this module runs from TypeScript sources (tests), there is no compiled worker script and
 * files are validated in-process, one after another, with the same results.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { validateFile } from "./file.js";
import { prepareValidators } from "./setup.js";
import type { FileSummary, Finding, ProgressEvent, ValidateOptions } from "./types.js";

/** Options a worker receives (structured-cloneable). */
export interface WorkerOptions {
  inputFormat?: ValidateOptions["inputFormat"];
  direction?: ValidateOptions["direction"];
  protocolVersion?: string;
  schema?: object;
  schemaPath?: string;
  maxLineBytes?: number;
  maxIssuesPerMessage?: number;
  progress: boolean;
}

/** Messages from a worker to the main thread. */
export type WorkerReply =
  | { type: "findings"; index: number; findings: Finding[] }
  | { type: "progress"; index: number; event: ProgressEvent }
  | { type: "done"; index: number; summary: FileSummary }
  | { type: "failed"; index: number; error: string };

/** Messages from the main thread to a worker. */
export type WorkerTask = { type: "file"; index: number; path: string } | { type: "stop" };

/** The structured-cloneable subset of `options` sent to workers. */
export function workerOptions(options: ValidateOptions): WorkerOptions {
  const w: WorkerOptions = { progress: options.onProgress !== undefined };
  if (options.inputFormat !== undefined) w.inputFormat = options.inputFormat;
  if (options.direction !== undefined) w.direction = options.direction;
  if (options.protocolVersion !== undefined) w.protocolVersion = options.protocolVersion;
  if (options.schema !== undefined) w.schema = options.schema;
  if (options.schemaPath !== undefined) w.schemaPath = options.schemaPath;
  if (options.maxLineBytes !== undefined) w.maxLineBytes = options.maxLineBytes;
  if (options.maxIssuesPerMessage !== undefined) w.maxIssuesPerMessage = options.maxIssuesPerMessage;
  return w;
}

/**
 * Validates `paths` on up to `jobs` workers; `deliver` gets each file's summary and findings in
 * input order. @throws the first worker failure (e.g. ValidateUsageError text for a bad version).
 */
export async function runInWorkers(
  paths: readonly string[],
  options: ValidateOptions,
  jobs: number,
  deliver: (file: FileSummary, findings: Finding[]) => void,
): Promise<void> {
  const script = new URL("./worker.js", import.meta.url);
  if (!import.meta.url.endsWith(".js") || !existsSync(fileURLToPath(script))) {
    const setup = await prepareValidators(options);
    for (const path of paths) {
      const findings: Finding[] = [];
      const summary = await validateFile(path, options, setup, (f) => findings.push(f));
      deliver(summary, findings);
    }
    return;
  }

  const wopts = workerOptions(options);
  const buffered = new Map<number, Finding[]>();
  const done = new Map<number, FileSummary>();
  let next = 0; // index of the file whose findings may stream through
  let assigned = 0;
  const onFinding = options.onFinding;

  const flush = (): void => {
    while (done.has(next)) {
      const summary = done.get(next)!;
      done.delete(next);
      const pending = buffered.get(next) ?? [];
      buffered.delete(next);
      deliver(summary, pending);
      next++;
      // The new current file streams from now on: first release what it buffered so far.
      const early = buffered.get(next);
      if (onFinding !== undefined && early !== undefined) {
        buffered.delete(next);
        for (const f of early) onFinding(f);
      }
    }
  };

  await new Promise<void>((resolve, reject) => {
    const workers: Worker[] = [];
    let live = 0;
    let failed = false;
    const stopAll = (): void => {
      for (const w of workers) w.postMessage({ type: "stop" } satisfies WorkerTask);
    };
    const assign = (w: Worker): void => {
      if (assigned < paths.length && !failed) {
        const index = assigned++;
        w.postMessage({ type: "file", index, path: paths[index]! } satisfies WorkerTask);
      } else {
        w.postMessage({ type: "stop" } satisfies WorkerTask);
      }
    };
    const count = Math.min(jobs, paths.length);
    for (let i = 0; i < count; i++) {
      const w = new Worker(script, { workerData: wopts });
      workers.push(w);
      live++;
      w.on("message", (reply: WorkerReply) => {
        switch (reply.type) {
          case "findings":
            if (reply.index === next && onFinding !== undefined) {
              // Its turn: stream straight through (deliver() then gets only what was buffered).
              for (const f of reply.findings) onFinding(f);
            } else {
              const list = buffered.get(reply.index) ?? [];
              for (const f of reply.findings) list.push(f);
              buffered.set(reply.index, list);
            }
            break;
          case "progress":
            options.onProgress?.(reply.event);
            break;
          case "done":
            done.set(reply.index, reply.summary);
            flush();
            assign(w);
            break;
          case "failed":
            if (!failed) {
              failed = true;
              stopAll();
              reject(new Error(reply.error));
            }
            break;
        }
      });
      w.on("error", (err) => {
        if (!failed) {
          failed = true;
          stopAll();
          reject(err);
        }
      });
      w.on("exit", () => {
        live--;
        if (live === 0 && !failed) resolve();
      });
      assign(w);
    }
  });
  flush();
}
