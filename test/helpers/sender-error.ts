/** Awaits a call that must fail with a transport `SenderError`, and returns that error. */
import { expect } from "vitest";
import { SenderError } from "../../src/transport/sender.js";

export async function rejection(p: Promise<unknown>): Promise<SenderError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(SenderError);
    return e as SenderError;
  }
  throw new Error("expected the call to reject");
}
