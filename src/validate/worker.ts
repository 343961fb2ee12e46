/**
 * Worker-thread entry for `--jobs` (see `pipeline.ts` and `chunk.ts`): prepares the validators
 * named by its `workerData` ({@link WorkerInit}; the generated ones are loaded per protocol
 * revision when first needed), says `ready`, then answers each chunk it is sent with
 * the chunk's {@link ChunkResult}, sharing its row table (and handing back the chunk's
 * buffer, for chunks sent as bytes). Chunks are processed one at a time, in the order received.
 */
import { parentPort, workerData } from "node:worker_threads";
import { ChunkProcessor, RangeClaims, rangeTask, releaseRows, type ChunkResult, type ChunkTask, type RangeJob } from "./chunk.js";
import type { WorkerInit, WorkerReply, WorkerRequest } from "./pipeline.js";
import { prepareValidators, type ValidatorSetup } from "./setup.js";
import { ValidateUsageError, type ValidateOptions } from "./types.js";

const port = parentPort;
if (port === null) throw new Error("validate/worker.js must run in a worker thread");
const init = workerData as WorkerInit;
const options: ValidateOptions = { ...init };
// The generated validators load per protocol revision, when a chunk needs one (lazy).
const ready = prepareValidators(options, true).then((setup) => ({ setup, processor: new ChunkProcessor(setup) }));
// Tell the pool when chunks can come; a failed setup is reported with the first chunk instead
// (and must not become an unhandled rejection before that).
ready.then(
  () => port.postMessage({ type: "ready" } satisfies WorkerReply),
  () => port.postMessage({ type: "ready" } satisfies WorkerReply),
);

/**
 * Processes one chunk. With lazily loaded validators: first loads the revisions the chunk's hints
 * name (the forced one with --protocol-version); when the chunk turns out to need another one
 * (the first chunk, whose initialize exchange names the version; a version change), loads that and
 * processes the chunk again, so that its verdicts are all there (the first pass left them out,
 * which would only have cost the main thread re-validations).
 */
async function handle(task: ChunkTask, setup: ValidatorSetup, processor: ChunkProcessor): Promise<ChunkResult> {
  const lazy = setup.lazy;
  if (lazy === undefined) return processor.process(task);
  await lazy.load(setup.forcedVersion !== undefined ? [setup.forcedVersion] : task.hints.map(([, v]) => v));
  lazy.takeRequested();
  let result = processor.process(task);
  for (let pass = 0; pass < 3; pass++) {
    const more = lazy.takeRequested();
    if (more.length === 0) break;
    await lazy.load(more);
    releaseRows(result);
    result = processor.process(task);
  }
  return result;
}

/**
 * Posts a chunk's result: its row table is shared memory (the main thread releases it), the
 * chunk's buffer (buffer tasks) is transferred back.
 */
function reply(message: WorkerReply & { result: ChunkResult }): void {
  const result = message.result;
  port!.postMessage(message, result.buffer.byteLength > 0 ? [result.buffer] : []);
}

function failure(err: unknown, id: number, job?: number): WorkerReply {
  return {
    type: "failed",
    id,
    error: err instanceof Error ? err.message : String(err),
    usage: err instanceof ValidateUsageError,
    ...(job === undefined ? {} : { job }),
  };
}

/** A shared file: takes chunks ahead of the calling thread until none is left (see `RangeJob`). */
async function shareOf(job: RangeJob, setup: ValidatorSetup, processor: ChunkProcessor): Promise<void> {
  const claims = new RangeClaims(job);
  for (;;) {
    const k = claims.next();
    if (k < 0) return;
    reply({ type: "range-result", job: job.id, result: await handle(rangeTask(job, k), setup, processor) });
  }
}

// Requests are served one at a time, in the order received.
let previous: Promise<unknown> = Promise.resolve();
port.on("message", (request: WorkerRequest) => {
  if (request.type === "ranges") {
    const job = request.job;
    previous = previous
      .then(() => ready)
      .then(({ setup, processor }) => shareOf(job, setup, processor))
      .catch((err: unknown) => port.postMessage(failure(err, -1, job.id)));
    return;
  }
  const task = request.task;
  previous = previous
    .then(() => ready)
    .then(({ setup, processor }) => handle(task, setup, processor))
    .then((result) => reply({ type: "result", result }))
    .catch((err: unknown) => port.postMessage(failure(err, task.id)));
});
