/**
 * The one place that frames bytes for the Orchestra plugin protocol.
 *
 * Every message on a QUIC stream (and on the multiplexed TLS connection) is `[4-byte big-endian unsigned length N][N bytes of protobuf]`
 * with `N <= 16 MiB` (orchestra-protocol.md, "Framing and RPC shape"). A larger frame is an
 * error on both sides; the decoder reports it as soon as the 4 header bytes are known, without
 * buffering any of the body.
 */
import { MAX_NESTING_DEPTH } from "../jsonrpc/line-scan.js";

/** Largest allowed payload length N, in bytes (16 MiB). */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;

/**
 * Codec options for every Orchestra payload (`encode…` / `decode…` of the generated codec,
 * src/gen/proto/…/plugin_codec.ts): 100 nested messages by default, which a
 * `google.protobuf.Struct` reaches at about 50 levels of JSON (each level is a `Struct` and a
 * `Value`). This admits the JSON nesting limit of the stdio side (256, src/jsonrpc/line-scan.ts)
 * with room for the enclosing messages, on both sides: what is encoded can be decoded.
 */
export const PAYLOAD_CODEC_OPTIONS = { recursionLimit: 3 * MAX_NESTING_DEPTH + 32 } as const;

/** Size of the length prefix, in bytes. */
export const FRAME_HEADER_BYTES = 4;

/** Base class of every framing failure. */
export class FrameError extends Error {
  override readonly name: string = "FrameError";
}

/** A frame whose (declared or actual) payload length exceeds the cap. */
export class FrameTooLargeError extends FrameError {
  override readonly name = "FrameTooLargeError";
  /**
   * @param length the offending payload length in bytes
   * @param max the cap that was exceeded, in bytes
   */
  constructor(
    readonly length: number,
    readonly max: number = MAX_FRAME_BYTES,
  ) {
    super(`frame of ${length} bytes exceeds the ${max}-byte limit`);
  }
}

/** The byte stream ended in the middle of a frame (see {@link FrameDecoder.end}). */
export class FrameTruncatedError extends FrameError {
  override readonly name = "FrameTruncatedError";
  /**
   * @param received bytes of the incomplete frame received so far (header included)
   * @param expected total bytes of the frame when the header was complete, else `undefined`
   */
  constructor(
    readonly received: number,
    readonly expected: number | undefined,
  ) {
    super(
      expected === undefined ? `stream ended inside a frame header (${received} of ${FRAME_HEADER_BYTES} bytes)` : `stream ended inside a frame (${received} of ${expected} bytes)`,
    );
  }
}

function checkLength(length: number, max: number): void {
  if (!Number.isInteger(length) || length < 0) throw new RangeError(`invalid frame length ${length}`);
  if (length > max) throw new FrameTooLargeError(length, max);
}

/**
 * The 4-byte big-endian length prefix for a payload of `length` bytes.
 * @throws FrameTooLargeError when `length > max` (default {@link MAX_FRAME_BYTES})
 */
export function encodeFrameHeader(length: number, max: number = MAX_FRAME_BYTES): Uint8Array {
  checkLength(length, max);
  const header = new Uint8Array(FRAME_HEADER_BYTES);
  new DataView(header.buffer).setUint32(0, length, false);
  return header;
}

/**
 * `length` uninitialised bytes as a `Uint8Array`: up to 4 KiB a slice of Node's shared `Buffer`
 * pool (`Buffer.allocUnsafe`), which costs no memory block of its own (a `new Uint8Array` over 64
 * bytes does: a `malloc`, a `free` and the collector's tracking); larger ones are allocated. The
 * result's `buffer` may hold other data: use it through `byteOffset` and `byteLength`.
 */
export function allocFrameBytes(length: number): Uint8Array {
  const b = Buffer.allocUnsafe(length);
  return new Uint8Array(b.buffer, b.byteOffset, length);
}

/**
 * One contiguous frame: header followed by a copy of `payload`, in {@link allocFrameBytes} memory.
 * Use {@link encodeFrameParts} to avoid the copy for large payloads.
 * @throws FrameTooLargeError when `payload.byteLength > max` (default {@link MAX_FRAME_BYTES})
 */
export function encodeFrame(payload: Uint8Array, max: number = MAX_FRAME_BYTES): Uint8Array {
  const length = payload.byteLength;
  checkLength(length, max);
  const out = allocFrameBytes(FRAME_HEADER_BYTES + length);
  out[0] = length >>> 24;
  out[1] = (length >>> 16) & 0xff;
  out[2] = (length >>> 8) & 0xff;
  out[3] = length & 0xff;
  out.set(payload, FRAME_HEADER_BYTES);
  return out;
}

/** Payloads up to this size are copied into one buffer by {@link encodeFrameParts}; larger ones are not. */
export const FRAME_COALESCE_BYTES = 64 * 1024;

/**
 * The frame as a list of chunks to write back to back, without copying large payloads:
 * `[header+payload]` for payloads up to {@link FRAME_COALESCE_BYTES}, else `[header, payload]`
 * (the payload chunk is the caller's buffer, not a copy).
 * @throws FrameTooLargeError when `payload.byteLength > max` (default {@link MAX_FRAME_BYTES})
 */
export function encodeFrameParts(payload: Uint8Array, max: number = MAX_FRAME_BYTES): Uint8Array[] {
  if (payload.byteLength <= FRAME_COALESCE_BYTES) return [encodeFrame(payload, max)];
  return [encodeFrameHeader(payload.byteLength, max), payload];
}

/**
 * Incremental decoder: push chunks as they arrive, get back the payloads completed by each chunk.
 *
 * - A payload that lies entirely inside one pushed chunk is returned as a view of that chunk
 *   (zero-copy); the caller must not mutate the chunk afterwards. A payload spanning chunks is
 *   assembled once into a buffer of exactly its declared size.
 * - A declared length over the cap throws {@link FrameTooLargeError} from the `push` that
 *   completes the header; no body byte is buffered. After any error the decoder is unusable
 *   and every later `push` rethrows the same error.
 */
export class FrameDecoder {
  /** A header split across chunks (allocated the first time one is). */
  private header: Uint8Array | undefined;
  private headerFilled = 0;
  private body: Uint8Array | undefined;
  private bodyFilled = 0;
  private failure: FrameError | undefined;

  /** @param maxFrameBytes payload cap in bytes (default {@link MAX_FRAME_BYTES}) */
  constructor(readonly maxFrameBytes: number = MAX_FRAME_BYTES) {}

  /** Bytes of the incomplete frame received so far, header included (0 at a frame boundary). */
  get buffered(): number {
    return this.body === undefined ? this.headerFilled : FRAME_HEADER_BYTES + this.bodyFilled;
  }

  /** True when no partial frame is held (the stream may end here cleanly). */
  get atBoundary(): boolean {
    return this.headerFilled === 0 && this.body === undefined;
  }

  /**
   * Feeds one chunk.
   * @returns the payloads completed by this chunk, in order (possibly none)
   * @throws FrameTooLargeError when a header declares more than {@link maxFrameBytes}
   */
  push(chunk: Uint8Array): Uint8Array[] {
    if (this.failure) throw this.failure;
    const out: Uint8Array[] = [];
    let pos = 0;
    const end = chunk.byteLength;
    while (pos < end) {
      if (this.body === undefined) {
        let length: number;
        if (this.headerFilled === 0 && end - pos >= FRAME_HEADER_BYTES) {
          length = ((chunk[pos]! << 24) >>> 0) + (chunk[pos + 1]! << 16) + (chunk[pos + 2]! << 8) + chunk[pos + 3]!;
          pos += FRAME_HEADER_BYTES;
        } else {
          const header = (this.header ??= new Uint8Array(FRAME_HEADER_BYTES));
          const take = Math.min(FRAME_HEADER_BYTES - this.headerFilled, end - pos);
          header.set(chunk.subarray(pos, pos + take), this.headerFilled);
          this.headerFilled += take;
          pos += take;
          if (this.headerFilled < FRAME_HEADER_BYTES) break;
          length = ((header[0]! << 24) >>> 0) + (header[1]! << 16) + (header[2]! << 8) + header[3]!;
          this.headerFilled = 0;
        }
        if (length > this.maxFrameBytes) {
          this.failure = new FrameTooLargeError(length, this.maxFrameBytes);
          throw this.failure;
        }
        if (end - pos >= length) {
          // Zero-copy: the whole body is inside this chunk.
          out.push(chunk.subarray(pos, pos + length));
          pos += length;
          continue;
        }
        // The body spans chunks: allocate it once at its declared size.
        this.body = new Uint8Array(length);
        this.bodyFilled = 0;
      }
      const body: Uint8Array = this.body;
      const take = Math.min(body.byteLength - this.bodyFilled, end - pos);
      body.set(chunk.subarray(pos, pos + take), this.bodyFilled);
      this.bodyFilled += take;
      pos += take;
      if (this.bodyFilled === body.byteLength) {
        out.push(body);
        this.body = undefined;
        this.bodyFilled = 0;
      }
    }
    return out;
  }

  /**
   * Declares the end of the byte stream.
   * @throws FrameTruncatedError when a partial frame is held
   */
  end(): void {
    if (this.failure) throw this.failure;
    if (this.atBoundary) return;
    const expected = this.body === undefined ? undefined : FRAME_HEADER_BYTES + this.body.byteLength;
    this.failure = new FrameTruncatedError(this.buffered, expected);
    throw this.failure;
  }
}

/** A stream ended cleanly before any byte of its (only) frame arrived. */
export class FrameEmptyStreamError extends FrameError {
  override readonly name = "FrameEmptyStreamError";
  constructor() {
    super("stream ended before a frame arrived");
  }
}
