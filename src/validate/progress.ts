/**
 * The progress bar of `orchestra-stdio validate` (cli-progress on stderr). The CLI shows it only
 * when stderr is a TTY and the inputs add up to more than {@link PROGRESS_MIN_BYTES}.
 */
import cliProgress from "cli-progress";
import type { ProgressEvent } from "./types.js";

/** Inputs smaller than this (bytes, all files together) get no bar. */
export const PROGRESS_MIN_BYTES = 50 * 1024 * 1024;

export interface ProgressBar {
  /** Feed a `ValidateOptions.onProgress` event. */
  update(event: ProgressEvent): void;
  /** Removes the bar. Idempotent. */
  stop(): void;
}

/** A bar over `totalBytes` (sum of the input sizes) drawn on `stream`. */
export function createProgressBar(totalBytes: number, stream: NodeJS.WritableStream = process.stderr): ProgressBar {
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: "validating {bar} {percentage}% | {mb}/{totalMb} MB | {file} | ETA {eta_formatted}",
      hideCursor: true,
      clearOnComplete: true,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  const perFile = new Map<string, number>();
  const mb = (n: number): string => (n / 1e6).toFixed(0);
  let stopped = false;
  let banked = 0;
  bar.start(totalBytes, 0, { file: "", mb: "0", totalMb: mb(totalBytes) });
  return {
    update(event) {
      if (stopped) return;
      // A path given twice restarts at 0: bank what the earlier pass read.
      const before = perFile.get(event.file) ?? 0;
      if (event.bytesRead < before) banked += before;
      perFile.set(event.file, event.bytesRead);
      let sum = banked;
      for (const v of perFile.values()) sum += v;
      bar.update(Math.min(sum, totalBytes), { file: event.file, mb: mb(sum), totalMb: mb(totalBytes) });
    },
    stop() {
      if (stopped) return;
      stopped = true;
      bar.stop();
    },
  };
}
