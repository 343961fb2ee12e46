/**
 * Worker-thread entry for `--jobs` (see `jobs.ts`): prepares the validators its `workerData`
 * ({@link WorkerInit}) names, then validates each file it is sent on the one line path
 * (`validateFile`), posting the file's findings in batches as they are found, its progress when
 * asked, and its summary. Files are validated one at a time, in the order received.
 */
import { parentPort, workerData } from "node:worker_threads";
import { validateFile } from "./file.js";
import type { WorkerInit, WorkerReply, WorkerRequest } from "./jobs.js";
import { prepareValidators } from "./setup.js";
import { ValidateUsageError, type Finding, type ValidateOptions } from "./types.js";

/** Findings posted per message at most (fewer at the end of a file or of a read). */
const BATCH = 256;

const port = parentPort;
if (port === null) throw new Error("validate/worker.js must run in a worker thread");
const init = workerData as WorkerInit;
const base: ValidateOptions = { ...init };
delete (base as { progress?: boolean }).progress;
const ready = prepareValidators(base);
ready.catch(() => undefined); // (reported with the first file)
const post = (reply: WorkerReply): void => port.postMessage(reply);

async function run(request: WorkerRequest): Promise<void> {
  const { index, path } = request;
  const setup = await ready;
  let batch: Finding[] = [];
  const flush = (): void => {
    if (batch.length === 0) return;
    post({ type: "findings", index, findings: batch });
    batch = [];
  };
  const options: ValidateOptions = { ...base, ...request.file };
  // Findings go out after each read too, so that a long file's findings flow while it is read.
  options.onProgress = (event) => {
    flush();
    if (init.progress === true) post({ type: "progress", index, event });
  };
  const summary = await validateFile(path, options, setup, (f) => {
    batch.push(f);
    if (batch.length >= BATCH) flush();
  });
  flush();
  post({ type: "done", index, summary });
}

let previous: Promise<unknown> = Promise.resolve();
port.on("message", (request: WorkerRequest) => {
  previous = previous
    .then(() => run(request))
    .catch((err: unknown) => post({ type: "failed", index: request.index, error: err instanceof Error ? err.message : String(err), usage: err instanceof ValidateUsageError }));
});
