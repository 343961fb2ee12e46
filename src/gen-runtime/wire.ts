/**
 * The protobuf binary wire format (https://protobuf.dev/programming-guides/encoding/) for the
 * codecs that `protoc-gen-orchestra-codec` generates (src/gen/proto/**\/*_codec.ts): a writer, a
 * reader, and `google.protobuf.Struct` / `Value` / `ListValue` in their JSON representation
 * (`JsonObject`, as protobuf-es gives fields of type Struct).
 *
 * Generated code calls these directly; nothing here knows a message type of its own. Messages are
 * the plain objects protobuf-es defines (`$typeName` and the fields' local names), so that a
 * message decoded here equals what protobuf-es's `fromBinary` gives, and the bytes written equal
 * its `toBinary` (test/unit/wire-codec.test.ts checks both).
 *
 * Decoding is strict where protobuf-go is: a string that is not valid UTF-8, a varint over 10
 * bytes, a length past the end of the data or of the enclosing message, an end-group tag without
 * its start, wire types 6 and 7, and field number 0 are errors ({@link WireError}). A known field
 * with another wire type than its declared one is skipped as an unknown field; unknown fields are
 * not kept. Nesting deeper than {@link WireOptions.recursionLimit} messages is an error on both
 * sides, so that a cyclic or hostile object ends in an error, not in a stack overflow.
 */
import { isUtf8 } from "node:buffer";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";

/** Options of every generated `encode…` / `decode…` function. */
export interface WireOptions {
  /**
   * Most messages nested in one another, the outermost counting 1 (as protobuf-es's
   * `recursionLimit`): each level of a Struct is two (the `Struct` and the `Value`). Default 100.
   */
  readonly recursionLimit?: number;
}

/** The default {@link WireOptions.recursionLimit} (protobuf-es's). */
export const DEFAULT_RECURSION_LIMIT = 100;

/** Malformed protobuf data, or a message that cannot be encoded. */
export class WireError extends Error {
  override readonly name = "WireError";
}

/** Wire types (encoding guide, "Message Structure"). */
const VARINT = 0;
const I64 = 1;
const LEN = 2;
const SGROUP = 3;
const EGROUP = 4;
const I32 = 5;

/** Strings up to this many UTF-16 code units are written by a JavaScript loop when they are ASCII. */
const SHORT_STRING = 32;
/** `Buffer.allocUnsafe` takes up to this many bytes from Node's shared pool (half its 8 KiB). */
const POOLED_BYTES = 4 * 1024;

const float64 = new Float64Array(1);
const float64Bytes = new Uint8Array(float64.buffer);

/**
 * Writes one message into a growing buffer (one writer per message). A length-delimited field is written in one
 * pass: {@link fork} reserves one byte for its length, {@link join} writes the length and, when it
 * needs more than one byte, moves the field's bytes up.
 */
export class Writer {
  buf: Buffer;
  pos = 0;
  private readonly limit: number;

  constructor(options: WireOptions | undefined, initialBytes = 256) {
    this.buf = Buffer.allocUnsafe(initialBytes);
    this.limit = options?.recursionLimit ?? DEFAULT_RECURSION_LIMIT;
  }

  /** Room for `n` more bytes. */
  ensure(n: number): void {
    const need = this.pos + n;
    if (need <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(need, this.buf.length * 2));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** Throws when a message at `depth` (the outermost is 1) is deeper than the limit. */
  depth(depth: number, typeName: string): void {
    if (depth > this.limit) throw new WireError(`cannot encode ${typeName}: more than ${this.limit} nested messages`);
  }

  /** An unsigned 32-bit varint (tags, lengths, `uint32`, booleans, non-negative `int32`). */
  uint32(v: number): void {
    this.ensure(5);
    const b = this.buf;
    let p = this.pos;
    while (v > 0x7f) {
      b[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    b[p++] = v;
    this.pos = p;
  }

  /** `int32` and enum values: a negative one takes 10 bytes (sign-extended to 64 bits). */
  int32(v: number): void {
    if (v >= 0) this.uint32(v);
    else this.varint64(BigInt.asUintN(64, BigInt(v | 0)));
  }

  /** `int64` (two's complement, 10 bytes when negative). */
  int64(v: bigint): void {
    this.varint64(BigInt.asUintN(64, v));
  }

  /** `uint64`. */
  uint64(v: bigint): void {
    this.varint64(BigInt.asUintN(64, v));
  }

  private varint64(v: bigint): void {
    if (v <= 0xffffffffn) {
      this.uint32(Number(v));
      return;
    }
    this.ensure(10);
    const b = this.buf;
    let p = this.pos;
    while (v > 0x7fn) {
      b[p++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    b[p++] = Number(v);
    this.pos = p;
  }

  bool(v: boolean): void {
    this.ensure(1);
    this.buf[this.pos++] = v ? 1 : 0;
  }

  /** `double`, 8 bytes little-endian. */
  double(v: number): void {
    this.ensure(8);
    float64[0] = v;
    this.buf.set(float64Bytes, this.pos);
    this.pos += 8;
  }

  /** `float`, 4 bytes little-endian. */
  float(v: number): void {
    this.ensure(4);
    this.buf.writeFloatLE(v, this.pos);
    this.pos += 4;
  }

  /** A string as UTF-8 with its length (a lone surrogate becomes U+FFFD, as TextEncoder writes it). */
  string(v: string): void {
    const n = v.length;
    if (n <= SHORT_STRING) {
      this.ensure(1 + n);
      const b = this.buf;
      const start = this.pos;
      let i = 0;
      for (; i < n; i++) {
        const c = v.charCodeAt(i);
        if (c > 0x7f) break;
        b[start + 1 + i] = c;
      }
      if (i === n) {
        b[start] = n;
        this.pos = start + 1 + n;
        return;
      }
    }
    const bytes = Buffer.byteLength(v, "utf8");
    this.uint32(bytes);
    this.ensure(bytes);
    this.pos += this.buf.write(v, this.pos, bytes, "utf8");
  }

  /** `bytes` with its length. */
  bytes(v: Uint8Array): void {
    this.uint32(v.byteLength);
    this.ensure(v.byteLength);
    this.buf.set(v, this.pos);
    this.pos += v.byteLength;
  }

  /** Starts a length-delimited field after its tag; returns where its bytes start, for {@link join}. */
  fork(): number {
    this.ensure(1);
    return ++this.pos;
  }

  /** Ends the length-delimited field started by {@link fork} at `start`. */
  join(start: number): void {
    const length = this.pos - start;
    if (length < 0x80) {
      this.buf[start - 1] = length;
      return;
    }
    let extra = 1;
    while (length >>> (7 * (extra + 1)) !== 0) extra++;
    this.ensure(extra);
    this.buf.copyWithin(start + extra, start, this.pos);
    let p = start - 1;
    let v = length;
    while (v > 0x7f) {
      this.buf[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[p] = v;
    this.pos += extra;
  }

  /**
   * The bytes written. A view of the writer's buffer while that is small (Node's Buffer pool) or
   * mostly used; else a copy, so that a message does not keep a grown buffer's spare half alive.
   */
  finish(): Uint8Array {
    const b = this.buf;
    if (b.length > POOLED_BYTES && this.pos < b.length / 2) return new Uint8Array(b.subarray(0, this.pos));
    return new Uint8Array(b.buffer, b.byteOffset, this.pos);
  }
}

/** Reads one message: the generated decoders switch on {@link Reader.uint32} (the whole tag). */
export class Reader {
  readonly buf: Buffer;
  pos = 0;
  readonly limit: number;

  constructor(bytes: Uint8Array, options: WireOptions | undefined) {
    this.buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.limit = options?.recursionLimit ?? DEFAULT_RECURSION_LIMIT;
  }

  /** Throws when a message at `depth` (the outermost is 1) is deeper than the limit. */
  depth(depth: number, typeName: string): void {
    if (depth > this.limit) throw new WireError(`cannot decode ${typeName}: more than ${this.limit} nested messages`);
  }

  private eof(): WireError {
    return new WireError("premature end of data");
  }

  /** A varint's low 32 bits, unsigned (a longer varint's high bits are dropped, as protobuf does for 32-bit fields). */
  uint32(): number {
    const b = this.buf;
    let p = this.pos;
    if (p >= b.length) throw this.eof();
    let byte = b[p++]!;
    if (byte < 0x80) {
      this.pos = p;
      return byte;
    }
    let v = byte & 0x7f;
    for (let shift = 7; shift < 70; shift += 7) {
      if (p >= b.length) throw this.eof();
      byte = b[p++]!;
      if (shift < 32) v |= (byte & 0x7f) << shift;
      if (byte < 0x80) {
        this.pos = p;
        return v >>> 0;
      }
    }
    throw new WireError("varint longer than 10 bytes");
  }

  /** `int32` and enum values. */
  int32(): number {
    return this.uint32() | 0;
  }

  /** A varint as an unsigned 64-bit bigint. */
  private varint64(): bigint {
    const b = this.buf;
    let p = this.pos;
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < 10; i++) {
      if (p >= b.length) throw this.eof();
      const byte = b[p++]!;
      const bits = byte & 0x7f;
      if (i < 4) lo |= bits << (7 * i);
      else if (i === 4) {
        lo |= (bits & 0x0f) << 28;
        hi = bits >>> 4;
      } else hi |= bits << (7 * i - 32);
      if (byte < 0x80) {
        this.pos = p;
        return hi === 0 ? BigInt(lo >>> 0) : (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
      }
    }
    throw new WireError("varint longer than 10 bytes");
  }

  int64(): bigint {
    return BigInt.asIntN(64, this.varint64());
  }

  uint64(): bigint {
    return this.varint64();
  }

  bool(): boolean {
    return this.varint64() !== 0n;
  }

  double(): number {
    if (this.pos + 8 > this.buf.length) throw this.eof();
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }

  float(): number {
    if (this.pos + 4 > this.buf.length) throw this.eof();
    const v = this.buf.readFloatLE(this.pos);
    this.pos += 4;
    return v;
  }

  /** Reads a length; returns where the length-delimited bytes end. */
  end(): number {
    const length = this.uint32();
    const end = this.pos + length;
    if (end > this.buf.length) throw this.eof();
    return end;
  }

  /** Throws unless the last field of a message of `typeName` ended exactly at its `end`. */
  ended(end: number, typeName: string): void {
    if (this.pos !== end) throw new WireError(`a field of ${typeName} crosses the end of the message`);
  }

  /** A string field: its bytes must be valid UTF-8. */
  string(): string {
    const end = this.end();
    const b = this.buf;
    const start = this.pos;
    this.pos = end;
    const n = end - start;
    if (n <= SHORT_STRING) {
      let ascii = true;
      for (let i = start; i < end; i++) {
        if (b[i]! > 0x7f) {
          ascii = false;
          break;
        }
      }
      if (ascii) return b.toString("latin1", start, end);
    }
    const slice = b.subarray(start, end);
    if (!isUtf8(slice)) throw new WireError("string field is not valid UTF-8");
    return b.toString("utf8", start, end);
  }

  /** A `bytes` field: a view of the data read (not a copy), as protobuf-es gives. */
  bytes(): Uint8Array {
    const end = this.end();
    const start = this.pos;
    this.pos = end;
    return new Uint8Array(this.buf.buffer, this.buf.byteOffset + start, end - start);
  }

  /** Skips the value of a field this decoder does not know (`tag` read already); groups nest up to the limit. */
  skip(tag: number, depth: number): void {
    const wireType = tag & 7;
    if (tag >>> 3 === 0) throw new WireError("field number 0");
    switch (wireType) {
      case VARINT:
        this.varint64();
        return;
      case I64:
        this.advance(8);
        return;
      case LEN:
        this.pos = this.end();
        return;
      case I32:
        this.advance(4);
        return;
      case SGROUP: {
        this.depth(depth + 1, "a group");
        for (;;) {
          const inner = this.uint32();
          if ((inner & 7) === EGROUP) {
            if (inner >>> 3 !== tag >>> 3) throw new WireError("end-group tag does not match its start");
            return;
          }
          this.skip(inner, depth + 1);
        }
      }
      case EGROUP:
        throw new WireError("end-group tag without its start");
      default:
        throw new WireError(`invalid wire type ${wireType} (field ${tag >>> 3})`);
    }
  }

  private advance(n: number): void {
    if (this.pos + n > this.buf.length) throw this.eof();
    this.pos += n;
  }
}

/** `record[key] = value`, also for the key `__proto__` (an own property, not the prototype). */
export function setOwn<T>(record: Record<string, T>, key: string, value: T): void {
  if (key === "__proto__") Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  else record[key] = value;
}

const STRUCT = "google.protobuf.Struct";
const VALUE = "google.protobuf.Value";
const LIST_VALUE = "google.protobuf.ListValue";

/** The fields of a `google.protobuf.Struct` at `depth` from its JSON form (each member a map entry). */
export function writeStruct(w: Writer, json: JsonObject, depth: number): void {
  w.depth(depth, STRUCT);
  if (Array.isArray(json)) return;
  for (const key of Object.keys(json)) {
    w.uint32(0x0a); // fields = 1, a map entry
    const entry = w.fork();
    w.uint32(0x0a); // key = 1
    w.string(key);
    w.uint32(0x12); // value = 2
    const value = w.fork();
    writeValue(w, json[key], depth + 1);
    w.join(value);
    w.join(entry);
  }
}

/** The fields of a `google.protobuf.Value` at `depth` (`undefined` and non-JSON types: no kind). */
function writeValue(w: Writer, json: JsonValue | undefined, depth: number): void {
  w.depth(depth, VALUE);
  switch (typeof json) {
    case "number":
      w.uint32(0x11); // number_value = 2
      w.double(json);
      return;
    case "string":
      w.uint32(0x1a); // string_value = 3
      w.string(json);
      return;
    case "boolean":
      w.uint32(0x20); // bool_value = 4
      w.bool(json);
      return;
    case "object":
      break;
    default:
      return;
  }
  if (json === null) {
    w.uint32(0x08); // null_value = 1
    w.uint32(0);
  } else if (Array.isArray(json)) {
    w.uint32(0x32); // list_value = 6
    const list = w.fork();
    w.depth(depth + 1, LIST_VALUE);
    for (const item of json) {
      w.uint32(0x0a); // values = 1
      const value = w.fork();
      writeValue(w, item, depth + 2);
      w.join(value);
    }
    w.join(list);
  } else {
    w.uint32(0x2a); // struct_value = 5
    const struct = w.fork();
    writeStruct(w, json, depth + 1);
    w.join(struct);
  }
}

/**
 * A `google.protobuf.Struct` at `depth` ending at `end`, as JSON; merged into `into` when the
 * field was already read (later members win, as with any map).
 */
export function readStruct(r: Reader, end: number, depth: number, into?: JsonObject): JsonObject {
  r.depth(depth, STRUCT);
  const json: JsonObject = into ?? {};
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag !== 0x0a) {
      r.skip(tag, depth);
      continue;
    }
    const entryEnd = r.end();
    let key = "";
    let value: JsonValue | undefined;
    while (r.pos < entryEnd) {
      const t = r.uint32();
      if (t === 0x0a) key = r.string();
      else if (t === 0x12) value = readValue(r, r.end(), depth + 1, value);
      else r.skip(t, depth);
    }
    r.ended(entryEnd, STRUCT);
    setOwn(json, key, value === undefined ? null : value);
  }
  r.ended(end, STRUCT);
  return json;
}

/**
 * A `google.protobuf.Value` at `depth` as JSON (no kind: `null`). `existing` is the value read
 * before from the same field: a struct or list read again is merged into it, as protobuf merges a
 * message field that occurs twice.
 */
function readValue(r: Reader, end: number, depth: number, existing: JsonValue | undefined): JsonValue {
  r.depth(depth, VALUE);
  let value: JsonValue = existing === undefined ? null : existing;
  while (r.pos < end) {
    const tag = r.uint32();
    switch (tag) {
      case 0x08: // null_value
        r.int32();
        value = null;
        break;
      case 0x11: // number_value
        value = r.double();
        break;
      case 0x1a: // string_value
        value = r.string();
        break;
      case 0x20: // bool_value
        value = r.bool();
        break;
      case 0x2a: // struct_value
        value = readStruct(r, r.end(), depth + 1, isJsonObject(value) ? value : undefined);
        break;
      case 0x32: // list_value
        value = readList(r, r.end(), depth + 1, Array.isArray(value) ? value : []);
        break;
      default:
        r.skip(tag, depth);
    }
  }
  r.ended(end, VALUE);
  return value;
}

function readList(r: Reader, end: number, depth: number, into: JsonValue[]): JsonValue[] {
  r.depth(depth, LIST_VALUE);
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag === 0x0a) into.push(readValue(r, r.end(), depth + 1, undefined));
    else r.skip(tag, depth);
  }
  r.ended(end, LIST_VALUE);
  return into;
}

function isJsonObject(v: JsonValue): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
