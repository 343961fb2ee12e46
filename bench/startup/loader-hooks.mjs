// Module hooks of bench/startup/probe.cjs (they run on Node's loader thread): every ES module,
// and every CommonJS module an ES module imports, is reported with its URL, format, source size
// and when its source was loaded (ms since the process started).
import { performance } from "node:perf_hooks";

let port;
/** Receives the probe's MessagePort (module.register's `data`). */
export function initialize(data) {
  port = data.port;
}

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  const bytes = result.source == null ? 0 : typeof result.source === "string" ? Buffer.byteLength(result.source) : result.source.byteLength;
  port.postMessage({ url, format: result.format, bytes, at: performance.timeOrigin + performance.now() });
  return result;
}
