/**
 * Live inputs: a pipe whose writer pauses (`tail -f capture | orchestra-stdio validate -`, a
 * recorder still running). Reading waits for more bytes only so long before acting on what has
 * arrived: the format is sniffed from the whole lines there are instead of the full 64 KiB head, so
 * that findings come out as the traffic comes in (README: "as it is found").
 */

/** Milliseconds an input may pause before what has arrived of it is acted on. */
export const IDLE_INPUT_MS = 100;

/**
 * Waits for `pending` at most `ms` milliseconds.
 * @returns true when it settled (fulfilled or rejected: the caller awaits it for the outcome)
 *   within `ms`, false when it is still pending then.
 */
export async function settlesWithin(pending: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(resolve, ms, false);
  });
  try {
    const settled = pending.then(
      () => true,
      () => true,
    );
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}
