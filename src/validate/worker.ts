/**
 * Worker-thread entry for `--jobs` (see `pipeline.ts` and `chunk.ts`): loads the validators named
 * by its `workerData` ({@link WorkerInit}), says `ready`, then answers each chunk it is sent with
 * the chunk's {@link ChunkResult}, transferring the row table (and handing back the chunk's
 * buffer, for chunks sent as bytes). Chunks are processed one at a time, in the order received.
 */
import { parentPort, workerData } from "node:worker_threads";
import { ChunkProcessor } from "./chunk.js";
import type { WorkerInit, WorkerReply, WorkerRequest } from "./pipeline.js";
import { prepareValidators } from "./setup.js";
import { ValidateUsageError, type ValidateOptions } from "./types.js";

const port = parentPort;
if (port === null) throw new Error("validate/worker.js must run in a worker thread");
const init = workerData as WorkerInit;
const options: ValidateOptions = { ...init };
const ready = prepareValidators(options).then((setup) => new ChunkProcessor(setup));
// Tell the pool when chunks can come; a failed setup is reported with the first chunk instead
// (and must not become an unhandled rejection before that).
ready.then(
  () => port.postMessage({ type: "ready" } satisfies WorkerReply),
  () => port.postMessage({ type: "ready" } satisfies WorkerReply),
);

port.on("message", (request: WorkerRequest) => {
  const task = request.task;
  ready
    .then((processor) => {
      const result = processor.process(task);
      const reply: WorkerReply = { type: "result", result };
      const transfer: ArrayBuffer[] = [result.rows.buffer as ArrayBuffer];
      if (result.buffer.byteLength > 0) transfer.push(result.buffer);
      port.postMessage(reply, transfer);
    })
    .catch((err: unknown) => {
      const reply: WorkerReply = {
        type: "failed",
        id: task.id,
        error: err instanceof Error ? err.message : String(err),
        usage: err instanceof ValidateUsageError,
      };
      port.postMessage(reply);
    });
});
