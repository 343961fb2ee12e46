/**
 * Worker-thread entry for `--jobs` (see `jobs.ts`): validates the files it is sent, one at a
 * time, posting findings in batches of up to 1000, progress events, and a summary per file.
 */
import { parentPort, workerData } from "node:worker_threads";
import { validateFile } from "./file.js";
import type { WorkerOptions, WorkerReply, WorkerTask } from "./jobs.js";
import { prepareValidators, type ValidatorSetup } from "./setup.js";
import type { Finding, ValidateOptions } from "./types.js";

const port = parentPort;
if (port === null) throw new Error("validate/worker.js must run in a worker thread");
const wopts = workerData as WorkerOptions;
const options: ValidateOptions = { ...wopts };
let setup: Promise<ValidatorSetup> | undefined;

const post = (reply: WorkerReply): void => port.postMessage(reply);

port.on("message", (task: WorkerTask) => {
  if (task.type === "stop") {
    port.close();
    return;
  }
  void (async () => {
    try {
      setup ??= prepareValidators(options);
      const s = await setup;
      let batch: Finding[] = [];
      const fileOptions: ValidateOptions = wopts.progress
        ? { ...options, onProgress: (event) => post({ type: "progress", index: task.index, event }) }
        : options;
      const summary = await validateFile(task.path, fileOptions, s, (f) => {
        batch.push(f);
        if (batch.length >= 1000) {
          post({ type: "findings", index: task.index, findings: batch });
          batch = [];
        }
      });
      if (batch.length > 0) post({ type: "findings", index: task.index, findings: batch });
      post({ type: "done", index: task.index, summary });
    } catch (err) {
      post({ type: "failed", index: task.index, error: err instanceof Error ? err.message : String(err) });
    }
  })();
});
