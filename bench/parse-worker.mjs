/**
 * Worker of the validate benchmark's parallel split+parse stage (bench/validate-bench.mjs): for
 * each message `{ start, end }` it reads the lines that start in that byte range of the capture in
 * 1 MiB ranges with the same reader as `validate --jobs` (`readRange`), splits them with the
 * project's `LineSplitter`, JSON.parses every line, and posts the number of lines. It stays up
 * between rounds (as `--jobs` keeps its workers between runs). workerData: { dist, file, chunk }.
 */
import { closeSync, fstatSync, openSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";

const { dist, file, chunk } = workerData;
const { readRange } = await import(new URL("validate/chunk.js", dist).href);
const { LineSplitter } = await import(new URL("validate/index.js", dist).href);
const fd = openSync(file, "r");
const size = fstatSync(fd).size;
let scratch;
parentPort.on("message", (msg) => {
  if (msg === "close") {
    closeSync(fd);
    parentPort.close();
    return;
  }
  const { start, end } = msg;
  let lines = 0;
  for (let at = start; at < end; at += chunk) {
    const read = readRange({ fd, start: at, end: Math.min(end, at + chunk), size }, 64 * 1024 * 1024, scratch);
    scratch = read.buffer;
    const splitter = new LineSplitter((text) => {
      lines++;
      JSON.parse(text);
    });
    splitter.push(read.buffer.subarray(0, read.length));
    splitter.end();
  }
  parentPort.postMessage(lines);
});
parentPort.postMessage("ready");
