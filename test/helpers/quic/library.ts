/**
 * Helpers for driving @matrixai/quic's JavaScript layer (QUICClient / QUICServer) as an
 * independent QUIC peer in tests: crypto callbacks, a quiet logger, web-stream frame I/O and the
 * check that the library carries the repository's patch (patches/, applied by `prepare`).
 * The product never loads this layer (src/quic/engine drives the native binding); these respect
 * the library faults measured in ../shared/quic-notes.md.
 */
import { webcrypto } from "node:crypto";
import Logger, { Handler, LogLevel, type LogRecord } from "@matrixai/logger";
import { QUICConnection, type QUICStream, type QUICClientCrypto, type QUICServerCrypto } from "@matrixai/quic";
import { childLogger, type Logger as PinoLogger } from "../../../src/log.js";
import { encodeFrameParts, FRAME_HEADER_BYTES, FrameDecoder, FrameEmptyStreamError, MAX_FRAME_BYTES } from "../../../src/framing/frame.js";
import { StreamAbort, StreamCode, streamCodeName } from "../../../src/quic/quic-common.js";

/** `reasonToCode` for QUICClient/QUICServer: {@link StreamAbort} → its code, else INTERNAL/NONE. */
export function reasonToCode(_type: "read" | "write", reason?: unknown): number {
  if (reason instanceof StreamAbort) return reason.code;
  return reason === undefined ? StreamCode.NONE : StreamCode.INTERNAL;
}

/** What a stream read/write rejects with when the *peer* reset or stopped the stream. */
export class StreamResetByPeer extends Error {
  override readonly name = "StreamResetByPeer";
  constructor(
    readonly direction: "read" | "write",
    readonly code: number,
  ) {
    super(`peer ${direction === "read" ? "reset" : "stopped"} the stream: ${streamCodeName(code)} (code ${code})`);
  }
}

/** `codeToReason` for QUICClient/QUICServer: a {@link StreamResetByPeer}. */
export function codeToReason(type: "read" | "write", code: number): StreamResetByPeer {
  return new StreamResetByPeer(type, code);
}

/** Client crypto: the library only needs random bytes. */
export const clientCrypto: QUICClientCrypto = {
  ops: {
    async randomBytes(data: ArrayBuffer): Promise<void> {
      webcrypto.getRandomValues(new Uint8Array(data));
    },
  },
};

/**
 * Server crypto: a fresh HMAC-SHA256 key for retry tokens. `sign` resolves to a real
 * `ArrayBuffer` (a Node `Buffer` makes connecting hang: quic-notes fault 4).
 */
export async function createServerCrypto(): Promise<QUICServerCrypto> {
  const key = webcrypto.getRandomValues(new Uint8Array(32)).buffer;
  const hmac = await webcrypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
  return {
    key,
    ops: {
      async sign(_key: ArrayBuffer, data: ArrayBuffer): Promise<ArrayBuffer> {
        return webcrypto.subtle.sign("HMAC", hmac, data);
      },
      async verify(_key: ArrayBuffer, data: ArrayBuffer, sig: ArrayBuffer): Promise<boolean> {
        return webcrypto.subtle.verify("HMAC", hmac, sig, data);
      },
    },
  };
}

/** Forwards @matrixai/logger records at or above its level to a pino logger (stderr). */
class PinoHandler extends Handler {
  constructor(private readonly pino: PinoLogger) {
    super();
  }
  override handle(record: LogRecord): void {
    const msg = `${record.keys}: ${record.msg ?? ""}`;
    if (record.level >= LogLevel.ERROR) this.pino.error(msg);
    else if (record.level >= LogLevel.WARN) this.pino.warn(msg);
    else if (record.level >= LogLevel.INFO) this.pino.info(msg);
    else this.pino.debug(msg);
  }
  emit(output: string): void {
    this.pino.warn(output);
  }
}

/**
 * A @matrixai/logger for the QUIC library that stays quiet (WARN by default; the library's
 * default logs INFO lines per stream) and writes through the project's pino logger.
 */
export function quietQuicLogger(name: string, level: LogLevel = LogLevel.WARN): Logger {
  return new Logger(name, level, [new PinoHandler(childLogger(name))]);
}

/**
 * Writes one frame carrying `payload` and closes the writable side, issuing every write and the
 * close in the same event-loop turn so the last data and the FIN can leave together
 * (quic-notes.md, root cause of fault 1). Resolves when the close completes.
 * @throws FrameTooLargeError synchronously-before-any-write when the payload exceeds 16 MiB
 */
export function writeFrameAndClose(stream: QUICStream, payload: Uint8Array): Promise<void> {
  const parts = encodeFrameParts(payload); // throws before touching the stream
  const writer = stream.writable.getWriter();
  // A WritableStream runs writes and the close in order, and close() rejects when any earlier
  // write failed (the stream is then errored), so the close promise alone reports the outcome.
  // The writer is never released: the stream is closed (or errored) for good.
  for (const part of parts) writer.write(part).catch(ignore);
  return writer.close();
}

function ignore(): void {}

/**
 * Reads exactly one frame from a readable stream.
 * Resolves with the payload as soon as the frame is complete, without waiting for the peer's
 * FIN. Rejects with FrameTooLargeError (as soon as the header declares > 16 MiB),
 * FrameTruncatedError (stream ended mid-frame), FrameEmptyStreamError (ended before any byte),
 * or the stream's own error. `extra` counts bytes that followed the frame in the same chunk
 * (0 for a well-behaved peer).
 */
export async function readOneFrame(reader: ReadableStreamDefaultReader<Uint8Array>, maxFrameBytes: number = MAX_FRAME_BYTES): Promise<{ payload: Uint8Array; extra: number }> {
  // Fast path: the whole frame in the first chunk (any small response) needs no decoder.
  const first = await reader.read();
  if (!first.done) {
    const c = first.value;
    if (c.byteLength >= FRAME_HEADER_BYTES) {
      const length = ((c[0]! << 24) >>> 0) + (c[1]! << 16) + (c[2]! << 8) + c[3]!;
      if (length <= maxFrameBytes && c.byteLength >= FRAME_HEADER_BYTES + length) {
        return { payload: c.subarray(FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + length), extra: c.byteLength - FRAME_HEADER_BYTES - length };
      }
    }
  }
  const decoder = new FrameDecoder(maxFrameBytes);
  let pendingChunk: typeof first | undefined = first;
  for (;;) {
    const { value, done } = pendingChunk ?? (await reader.read());
    pendingChunk = undefined;
    if (done) {
      decoder.end(); // throws FrameTruncatedError when a partial frame is held
      throw new FrameEmptyStreamError();
    }
    const before = decoder.buffered;
    const frames = decoder.push(value);
    if (frames.length > 0) {
      const payload = frames[0]!;
      const used = FRAME_HEADER_BYTES + payload.byteLength - before;
      return { payload, extra: value.byteLength - used };
    }
  }
}

let patchChecked = false;

/**
 * Whether @matrixai/quic carries our loss-recovery patch (patches/@matrixai+quic+2.0.9.patch,
 * applied to the repository's own install by `prepare`; docs/quic-loss-recovery.md). Without it, a lost packet
 * carrying a stream's FIN can hang that call until its deadline. Logs one warning per process
 * when the patch is missing; returns the verdict.
 */
export function checkQuicPatched(log: PinoLogger): boolean {
  const patched = typeof (QUICConnection.prototype as unknown as { scheduleSend?: unknown }).scheduleSend === "function";
  if (!patched && !patchChecked) {
    log.warn("@matrixai/quic is not patched (run `npx patch-package` in the repository): lost packets can stall calls until their deadline");
  }
  patchChecked = true;
  return patched;
}
