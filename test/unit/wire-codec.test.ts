/**
 * The generated codec (src/gen/proto/…/plugin_codec.ts over src/gen-runtime/wire.ts) against
 * protobuf-es as the oracle: for random messages of every type of plugin.proto, the same bytes as
 * `toBinary`, the same message as `fromBinary` (merging of repeated occurrences too), the same
 * message as `create`; and malformed data ends in a WireError, never another exception.
 */
import { create, fromBinary, toBinary, ScalarType, type DescField, type DescMessage, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { isDeepStrictEqual } from "node:util";
import { describe, expect, it } from "vitest";
import * as pb from "../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import * as codec from "../../src/gen/proto/orchestra/plugin/v1/plugin_codec.js";
import { Reader, WireError, Writer, readStruct, writeStruct } from "../../src/gen-runtime/wire.js";
import { PAYLOAD_CODEC_OPTIONS } from "../../src/framing/frame.js";
import { mulberry32 } from "../helpers/prng.js";

type Codec = {
  create: (init?: unknown) => unknown;
  encode: (m: unknown, o?: object) => Uint8Array;
  decode: (b: Uint8Array, o?: object) => unknown;
};

/** Every message schema of plugin.proto with its generated functions. */
const MESSAGES: Array<{ schema: DescMessage; codec: Codec }> = Object.entries(pb)
  .filter(([name, v]) => name.endsWith("Schema") && (v as DescMessage).kind === "message")
  .map(([name, v]) => {
    const base = name.slice(0, -"Schema".length);
    const c = codec as unknown as Record<string, Codec["create"]>;
    return {
      schema: v as DescMessage,
      codec: { create: c[`create${base}`]!, encode: c[`encode${base}`] as Codec["encode"], decode: c[`decode${base}`] as Codec["decode"] },
    };
  });

/**
 * Deep equality as node:util's isDeepStrictEqual (prototypes, -0, own `__proto__` and `constructor`
 * keys, which vitest's toStrictEqual compares as the objects' classes), shown as a diff when false.
 */
function same(actual: unknown, expected: unknown, label: string): void {
  if (!isDeepStrictEqual(actual, expected)) expect(actual, label).toStrictEqual(expected);
}

const STRINGS = ["", "a", "echo", "x".repeat(31), "x".repeat(32), "y".repeat(200), "é", "日本語", "😀 emoji", "\u0000nul", "\ud800 lone", "\ufeffbom", "__proto__", "constructor"];

function randomString(rnd: () => number): string {
  if (rnd() < 0.6) return STRINGS[Math.floor(rnd() * STRINGS.length)]!;
  const n = Math.floor(rnd() * 300);
  let s = "";
  for (let i = 0; i < n; i++) s += String.fromCharCode(rnd() < 0.8 ? 32 + Math.floor(rnd() * 95) : Math.floor(rnd() * 0xffff));
  return s;
}

function randomJson(rnd: () => number, depth: number): JsonValue {
  const r = rnd();
  if (depth > 4 || r < 0.15) return rnd() < 0.5 ? null : rnd() < 0.5;
  if (r < 0.35) return [0, -0, 1, -1, 0.5, 1e300, -1e-300, 2 ** 53 + 2, Number.MAX_VALUE][Math.floor(rnd() * 9)]!;
  if (r < 0.55) return randomString(rnd);
  if (r < 0.75) return Array.from({ length: Math.floor(rnd() * 4) }, () => randomJson(rnd, depth + 1));
  return randomObject(rnd, depth + 1);
}

function randomObject(rnd: () => number, depth: number): JsonObject {
  const o: JsonObject = {};
  const n = Math.floor(rnd() * 4);
  for (let i = 0; i < n; i++) Object.defineProperty(o, randomString(rnd), { value: randomJson(rnd, depth), enumerable: true, writable: true, configurable: true });
  return o;
}

function randomScalar(rnd: () => number, type: ScalarType): unknown {
  switch (type) {
    case ScalarType.STRING:
      return randomString(rnd);
    case ScalarType.BOOL:
      return rnd() < 0.5;
    case ScalarType.INT32:
      return [0, 1, -1, 127, 128, 2 ** 31 - 1, -(2 ** 31), Math.floor(rnd() * 1e6)][Math.floor(rnd() * 8)];
    case ScalarType.INT64:
      return [0n, 1n, -1n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 32n, BigInt(Math.floor(rnd() * 1e12))][Math.floor(rnd() * 7)];
    case ScalarType.BYTES:
      return Uint8Array.from({ length: Math.floor(rnd() * 40) }, () => Math.floor(rnd() * 256));
    default:
      throw new Error(`no generator for ${ScalarType[type]}`);
  }
}

/** A random init object for `desc` (fields set or left out at random). */
function randomInit(rnd: () => number, desc: DescMessage, depth = 0): Record<string, unknown> {
  const init: Record<string, unknown> = {};
  const value = (field: DescField, kind: string): unknown => {
    if (kind === "message") {
      if (field.message!.typeName === "google.protobuf.Struct") return randomObject(rnd, 0);
      return depth > 3 ? {} : randomInit(rnd, field.message!, depth + 1);
    }
    if (kind === "enum") return field.enum!.values[Math.floor(rnd() * field.enum!.values.length)]!.number;
    return randomScalar(rnd, field.scalar!);
  };
  for (const member of desc.members) {
    if (rnd() < 0.3) continue;
    if (member.kind === "oneof") {
      const field = member.fields[Math.floor(rnd() * member.fields.length)]!;
      init[member.localName] = { case: field.localName, value: value(field, field.fieldKind) };
    } else if (member.fieldKind === "list") {
      init[member.localName] = Array.from({ length: Math.floor(rnd() * 4) }, () => value(member, member.listKind));
    } else if (member.fieldKind === "map") {
      const m: Record<string, unknown> = {};
      for (let i = Math.floor(rnd() * 4); i > 0; i--) m[randomString(rnd)] = value(member, member.mapKind);
      init[member.localName] = m;
    } else {
      init[member.localName] = value(member, member.fieldKind);
    }
  }
  return init;
}

describe("generated codec against protobuf-es", () => {
  it("covers every message of plugin.proto", () => {
    expect(MESSAGES.length).toBe(40);
    for (const { schema, codec: c } of MESSAGES) {
      expect(typeof c.create, schema.typeName).toBe("function");
      expect(typeof c.encode, schema.typeName).toBe("function");
      expect(typeof c.decode, schema.typeName).toBe("function");
    }
  });

  it("create gives what protobuf-es's create gives", () => {
    const rnd = mulberry32(1);
    for (const { schema, codec: c } of MESSAGES) {
      expect(c.create(), schema.typeName).toStrictEqual(create(schema));
      for (let i = 0; i < 30; i++) {
        const init = randomInit(rnd, schema);
        same(c.create(init), create(schema, init), schema.typeName);
      }
      const message = create(schema, randomInit(rnd, schema));
      expect(c.create(message)).toBe(message);
    }
  });

  it("encodes to protobuf-es's bytes and decodes to its messages", () => {
    const rnd = mulberry32(2);
    for (const { schema, codec: c } of MESSAGES) {
      for (let i = 0; i < 60; i++) {
        const message = create(schema, randomInit(rnd, schema));
        const expected = toBinary(schema, message);
        const bytes = c.encode(message);
        expect(Buffer.from(bytes).equals(Buffer.from(expected)), `${schema.typeName} #${i}`).toBe(true);
        same(c.decode(expected), fromBinary(schema, expected, { readUnknownFields: false }), `${schema.typeName} #${i}`);
      }
    }
  });

  it("merges a field that occurs twice as protobuf-es does (concatenated messages)", () => {
    const rnd = mulberry32(3);
    for (const { schema, codec: c } of MESSAGES) {
      for (let i = 0; i < 20; i++) {
        const a = toBinary(schema, create(schema, randomInit(rnd, schema)));
        const b = toBinary(schema, create(schema, randomInit(rnd, schema)));
        const both = new Uint8Array(Buffer.concat([a, b]));
        same(c.decode(both), fromBinary(schema, both, { readUnknownFields: false }), `${schema.typeName} #${i}`);
      }
    }
  });

  it("round-trips Struct values that JSON cannot tell apart only where protobuf cannot either", () => {
    const args: JsonObject = { n: -0, big: 2 ** 60, list: [[], [null, true, "s"], {}], nested: { a: { b: { c: [1, 2, 3] } } } };
    Object.defineProperty(args, "__proto__", { value: { own: true }, enumerable: true, writable: true, configurable: true });
    const message = codec.createToolRequest({ toolName: "echo", arguments: args });
    const decoded = codec.decodeToolRequest(codec.encodeToolRequest(message));
    expect(decoded).toStrictEqual(fromBinary(pb.ToolRequestSchema, toBinary(pb.ToolRequestSchema, message)));
    expect(Object.is(decoded.arguments!.n, -0)).toBe(true);
    expect(Object.getPrototypeOf(decoded.arguments)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(decoded.arguments, "__proto__")?.value).toStrictEqual({ own: true });
  });

  it("writes lengths of every size (1 to 4 varint bytes) and strings past the short-string path", () => {
    for (const n of [0, 1, 31, 32, 33, 127, 128, 16383, 16384, 2_100_000]) {
      const message = create(pb.ToolRequestSchema, { toolName: "t", arguments: { text: "é".repeat(n >> 1) + "x".repeat(n & 1) } });
      const bytes = codec.encodeToolRequest(message);
      expect(Buffer.from(bytes).equals(Buffer.from(toBinary(pb.ToolRequestSchema, message))), `n=${n}`).toBe(true);
      expect(codec.decodeToolRequest(bytes)).toStrictEqual(message);
    }
  });
});

describe("generated codec on malformed data", () => {
  const valid = codec.encodePluginResponse(
    create(pb.PluginResponseSchema, {
      requestId: "r-1",
      response: { case: "toolCall", value: { success: true, result: { text: "héllo", list: [1, { a: null }] }, errorCode: "", errorMessage: "" } },
    }),
  );

  it("a cut anywhere decodes or fails with a WireError", () => {
    for (let cut = 0; cut < valid.length; cut++) {
      try {
        codec.decodePluginResponse(valid.subarray(0, cut));
      } catch (e) {
        expect(e, `cut at ${cut}`).toBeInstanceOf(WireError);
      }
    }
  });

  it("random byte changes decode or fail with a WireError, never another exception", () => {
    const rnd = mulberry32(4);
    let failed = 0;
    for (let i = 0; i < 3000; i++) {
      const bytes = Uint8Array.from(valid);
      for (let k = 1 + Math.floor(rnd() * 3); k > 0; k--) bytes[Math.floor(rnd() * bytes.length)] = Math.floor(rnd() * 256);
      try {
        codec.decodePluginResponse(bytes, PAYLOAD_CODEC_OPTIONS);
      } catch (e) {
        expect(e).toBeInstanceOf(WireError);
        failed++;
      }
    }
    expect(failed).toBeGreaterThan(0);
  });

  it.each([
    ["a string that is not UTF-8", [0x0a, 0x02, 0xff, 0x41], /not valid UTF-8/],
    ["a varint of 11 bytes", [0x08, ...Array(10).fill(0xff), 0x01], /longer than 10 bytes/],
    ["a length past the end", [0x0a, 0x05, 0x41], /premature end/],
    ["wire type 7", [0x0f], /invalid wire type 7/],
    ["field number 0", [0x00, 0x00], /field number 0/],
    ["an end-group tag without its start", [0x0c], /end-group tag without its start/],
    ["a group that ends with another field's tag", [0x0b, 0x14], /does not match/],
    ["a field crossing the end of its message", [0xa2, 0x01, 0x02, 0x0a, 0x05, 0x41, 0x41, 0x41, 0x41, 0x41], /crosses the end/],
  ])("%s is a WireError", (_what, bytes, message) => {
    expect(() => codec.decodePluginResponse(Uint8Array.from(bytes))).toThrow(message);
    expect(() => codec.decodePluginResponse(Uint8Array.from(bytes))).toThrow(WireError);
  });

  it("skips unknown fields of every wire type, groups included", () => {
    const unknown = [0xf8, 0x07, 0x96, 0x01, 0xf9, 0x07, ...Array(8).fill(1), 0xfa, 0x07, 0x01, 0x41, 0xfd, 0x07, 1, 2, 3, 4, 0xfb, 0x07, 0x08, 0x01, 0xfc, 0x07];
    const bytes = Uint8Array.from([...unknown, ...valid]);
    expect(codec.decodePluginResponse(bytes)).toStrictEqual(codec.decodePluginResponse(valid));
  });

  it("skips a known field with another wire type, as protobuf-go does", () => {
    // request_id (field 1, a string) as a varint.
    expect(codec.decodePluginResponse(Uint8Array.from([0x08, 0x05, ...valid]))).toStrictEqual(codec.decodePluginResponse(valid));
  });
});

describe("nesting limits", () => {
  /** A Struct nested `levels` deep: {"a": {"a": … {}}}. */
  function nested(levels: number): JsonObject {
    let o: JsonObject = {};
    for (let i = 0; i < levels; i++) o = { a: o };
    return o;
  }

  it("decode stops where protobuf-es's recursionLimit does", () => {
    for (const limit of [10, 11, 100, PAYLOAD_CODEC_OPTIONS.recursionLimit]) {
      for (const levels of [Math.floor(limit / 2) - 3, Math.floor(limit / 2) - 2, Math.floor(limit / 2) - 1]) {
        const bytes = toBinary(pb.ToolRequestSchema, create(pb.ToolRequestSchema, { arguments: nested(levels) }));
        let expected: unknown;
        try {
          expected = fromBinary(pb.ToolRequestSchema, bytes, { recursionLimit: limit, readUnknownFields: false });
        } catch {
          expected = "error";
        }
        let actual: unknown;
        try {
          actual = codec.decodeToolRequest(bytes, { recursionLimit: limit });
        } catch (e) {
          expect(e).toBeInstanceOf(WireError);
          actual = "error";
        }
        expect(actual, `limit ${limit}, ${levels} levels`).toStrictEqual(expected);
      }
    }
  });

  it("encode refuses what decode with the same limit would refuse, and a cyclic object", () => {
    const limit = 20;
    for (let levels = 1; levels < 15; levels++) {
      const message = codec.createToolRequest({ arguments: nested(levels) });
      let encoded: Uint8Array | undefined;
      try {
        encoded = codec.encodeToolRequest(message, { recursionLimit: limit });
      } catch (e) {
        expect(e).toBeInstanceOf(WireError);
      }
      const decodable = (() => {
        try {
          codec.decodeToolRequest(codec.encodeToolRequest(message), { recursionLimit: limit });
          return true;
        } catch {
          return false;
        }
      })();
      expect(encoded !== undefined, `${levels} levels`).toBe(decodable);
    }
    const cyclic: JsonObject = { a: 1 };
    cyclic.self = cyclic;
    expect(() => codec.encodeToolRequest(codec.createToolRequest({ arguments: cyclic }))).toThrow(/more than 100 nested messages/);
  });

  it("a group nested past the limit is a WireError, not a stack overflow", () => {
    const bytes = Uint8Array.from([
      ...Array(100_000)
        .fill(0xfb)
        .flatMap((b) => [b, 0x07]),
    ]);
    expect(() => codec.decodePluginResponse(bytes)).toThrow(WireError);
  });
});

describe("wire runtime", () => {
  it("writeStruct and readStruct round-trip at depth 1", () => {
    const w = new Writer(undefined);
    const json = { a: [1, "b", null, { c: false }] };
    writeStruct(w, json, 1);
    const bytes = w.finish();
    expect(readStruct(new Reader(bytes, undefined), bytes.byteLength, 1)).toStrictEqual(json);
  });

  it("a small message is a view of Node's Buffer pool; a large one in a grown buffer is copied to its size", () => {
    const small = codec.encodeToolRequest(codec.createToolRequest({ toolName: "echo" }));
    expect(small.buffer.byteLength).toBeGreaterThan(small.byteLength);
    const large = codec.encodeToolRequest(codec.createToolRequest({ arguments: { text: "x".repeat(100_000) } }));
    expect(large.buffer.byteLength).toBeLessThan(2 * large.byteLength);
  });
});
