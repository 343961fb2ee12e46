/**
 * {@link FramedStream}: the Orchestra framing (orchestra-protocol.md, "Framing and RPC shape":
 * `[u32 BE length N][N bytes]`, `N <= 16 MiB`) on one engine {@link QuicStream}, which carries
 * bytes only. The one place where QUIC stream bytes become frames; used by the QUIC link
 * (./quic-link.ts, client) and the reference orchestrator (src/orchestrator/quic-server.ts).
 *
 * Decoding is {@link FrameDecoder}'s (src/framing/frame.ts): a frame inside one chunk is copied
 * once out of the engine's shared receive buffer; a frame spanning chunks is assembled once at its
 * declared size. A header declaring more than {@link maxFrameBytes} ends reading at once (nothing
 * of the body is buffered; later bytes are dropped by the engine).
 */
import { allocFrameBytes, encodeFrame, encodeFrameHeader, FRAME_COALESCE_BYTES, FrameDecoder, MAX_FRAME_BYTES } from "../framing/frame.js";
import type { QuicStream } from "./engine/index.js";

/**
 * Frames over one bidirectional QUIC stream. Construct it synchronously when the stream is
 * obtained (before data can arrive); it takes over the stream's `onData`/`onReadEnd`/
 * `onWriteError`.
 *
 * Callbacks (each fires at most as described):
 * - {@link onFrame}(payload): once per complete frame read (payload is owned by the callee);
 * - {@link onReadEnd}(error?): once, when the read side ends: `undefined` for a FIN at a frame
 *   boundary; `FrameTooLargeError` (header declared more than {@link maxFrameBytes}; reading
 *   stops), `FrameTruncatedError` (FIN inside a frame), or the stream's own error
 *   (`PeerResetError`, `ConnectionClosedError`, ...);
 * - {@link onWriteError}(error): the stream's (`PeerStopError`, `ConnectionClosedError`).
 */
export class FramedStream {
  /** Complete frames handed to {@link onFrame} so far. */
  framesRead = 0;
  /** Largest frame payload accepted (bytes; default 16 MiB). Set before data arrives. */
  maxFrameBytes = MAX_FRAME_BYTES;
  onFrame: ((payload: Uint8Array) => void) | undefined = undefined;
  onReadEnd: ((error?: Error) => void) | undefined = undefined;
  onWriteError: ((error: Error) => void) | undefined = undefined;
  private decoder: FrameDecoder | undefined;

  constructor(readonly stream: QuicStream) {
    stream.onData = (chunk) => this.receive(chunk);
    stream.onReadEnd = (error) => this.readEnded(error);
    stream.onWriteError = (error) => {
      if (this.onWriteError) this.onWriteError(error);
    };
  }

  /** True once the read side ended (FIN read, reset, stopped, or given up on a bad frame). */
  get readFinished(): boolean {
    return this.stream.readFinished;
  }

  /** True once our FIN (or a reset) has been handed to quiche, or the peer stopped us. */
  get writeFinished(): boolean {
    return this.stream.writeFinished;
  }

  /**
   * Writes one frame `[u32 BE length][payload]`; with `fin` the FIN goes in the same
   * `stream_send` call as the frame's last bytes. Payloads up to `FRAME_COALESCE_BYTES` (64 KiB)
   * are copied behind the header into one write; larger ones are written as header + payload
   * without a copy (`payload` must then stay unmodified until sent).
   * @throws FrameTooLargeError (before anything is written) when the payload exceeds 16 MiB
   * @throws StreamClosedError when the send side is already finished
   */
  writeFrame(payload: Uint8Array, fin: boolean): void {
    if (payload.byteLength <= FRAME_COALESCE_BYTES) this.stream.write(encodeFrame(payload), fin);
    else {
      const header = encodeFrameHeader(payload.byteLength);
      this.stream.write(header, false);
      this.stream.write(payload, fin);
    }
  }

  /** See {@link QuicStream.reset}: RESET_STREAM + STOP_SENDING with `code`; fires no callback. */
  reset(code: number): void {
    this.stream.reset(code);
  }

  /** See {@link QuicStream.stopReading}: STOP_SENDING with `code`, the send side stays open. */
  stopReading(code: number): void {
    this.stream.stopReading(code);
  }

  private receive(chunk: Uint8Array): void {
    const decoder = (this.decoder ??= new FrameDecoder(this.maxFrameBytes));
    let frames: Uint8Array[];
    try {
      frames = decoder.push(chunk);
    } catch (e) {
      this.stream.abandonRead();
      if (this.onReadEnd) this.onReadEnd(e as Error);
      return;
    }
    for (let i = 0; i < frames.length; i++) {
      let f = frames[i]!;
      // Views into the engine's shared receive buffer must be copied before they leave this call.
      // (Buffer#slice does not copy: copy explicitly.)
      if (f.buffer === chunk.buffer) {
        const copy = allocFrameBytes(f.byteLength);
        copy.set(f);
        f = copy;
      }
      this.framesRead++;
      if (this.onFrame) this.onFrame(f);
      if (this.stream.readFinished) return; // the callback reset the stream
    }
  }

  private readEnded(error: Error | undefined): void {
    if (error === undefined && this.decoder && !this.decoder.atBoundary) {
      try {
        this.decoder.end();
      } catch (e) {
        error = e as Error;
      }
    }
    if (this.onReadEnd) this.onReadEnd(error);
  }
}
