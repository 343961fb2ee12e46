/**
 * The progress bar of `orchestra-stdio validate` (cli-progress on stderr). The CLI shows it only
 * when {@link progressBarWanted} and the inputs add up to more than {@link PROGRESS_MIN_BYTES},
 * and stops (clears) it before any report text reaches the terminal it is drawn on.
 */
import { fstatSync } from "node:fs";
import cliProgress from "cli-progress";
import type { ProgressEvent } from "./types.js";

/** Inputs smaller than this (bytes, all files together) get no bar. */
export const PROGRESS_MIN_BYTES = 50 * 1024 * 1024;

/**
 * Whether file descriptors `a` and `b` are both terminals and the same one (same device and
 * inode), e.g. stdout and stderr of a command run in a shell without redirection.
 */
export function sameTerminal(a: number, b: number): boolean {
  try {
    const [sa, sb] = [fstatSync(a), fstatSync(b)];
    return sa.isCharacterDevice() && sb.isCharacterDevice() && sa.rdev === sb.rdev && sa.ino === sb.ino;
  } catch {
    return false;
  }
}

/**
 * Whether `validate` may draw its bar: stderr is a terminal, and the report is not text streamed
 * to that same terminal (its lines would land on the bar's line). Other report formats on the
 * same terminal get the bar until their first output, which stops it (see the CLI).
 */
export function progressBarWanted(options: { stderrIsTTY: boolean; reportOnSameTerminal: boolean; format: string }): boolean {
  return options.stderrIsTTY && !(options.reportOnSameTerminal && options.format === "text");
}

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
