/**
 * V8 flags set at run time (`v8.setFlagsFromString`), each announced on {@link V8_FLAGS_CHANNEL}.
 * V8 rejects code-cache data made under other flags than those in force where it is used, so the
 * CLI's code cache (src/cli/code-cache.ts) makes each script's data under the flags that were in
 * force when that script was compiled: it sets the flags announced since then back to their
 * `before` value meanwhile.
 */
import { channel } from "node:diagnostics_channel";
import { setFlagsFromString } from "node:v8";

/** diagnostics_channel name; each message is a {@link V8FlagChange}. */
export const V8_FLAGS_CHANNEL = "orchestra-stdio:v8-flags";

/** A flag set at run time: `set` (e.g. `--heap-growing-percent=20`) and the value it replaces (V8's default, e.g. `--heap-growing-percent=0`). */
export interface V8FlagChange {
  readonly set: string;
  readonly before: string;
}

/** Sets `change.set` and announces it. */
export function setV8Flag(change: V8FlagChange): void {
  setFlagsFromString(change.set);
  const announced = channel(V8_FLAGS_CHANNEL);
  if (announced.hasSubscribers) announced.publish(change);
}
