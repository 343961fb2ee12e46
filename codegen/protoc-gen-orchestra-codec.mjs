#!/usr/bin/env node
// protoc-gen-orchestra-codec: a protoc / buf plugin (buf.gen.yaml) that writes, for each .proto
// file, `<name>_codec.ts`: for every message of the file (and every message of another file one
// refers to), `create<Message>(init)`, `encode<Message>(message, options)` and
// `decode<Message>(bytes, options)` over the plain objects protobuf-es generates (`<name>_pb.ts`),
// with the field numbers, wire types and defaults compiled into straight-line code over the
// wire runtime (src/gen-runtime/wire.ts). The codec imports only types from `<name>_pb.ts` and
// `@bufbuild/protobuf`, so using it loads no descriptor and no reflection (docs/startup.md).
//
// Supported: proto3 implicit-presence scalars (string, bytes, bool, int32, int64, uint32, uint64,
// double, float), open enums, messages, oneofs, repeated fields (numeric ones packed, and read
// packed or not), maps with string keys, and google.protobuf.Struct fields as JsonObject (as
// protobuf-es gives them). Anything else is an error of this plugin naming the field: the codec
// covers what the Orchestra protocol uses, and says so when a .proto outgrows it.
import { ScalarType } from "@bufbuild/protobuf";
import { createEcmaScriptPlugin, runNodeJs } from "@bufbuild/protoplugin";

const STRUCT = "google.protobuf.Struct";
/** The runtime, as a path from buf's output directory (src/gen/proto/) to src/gen-runtime/. */
const RUNTIME = "../../gen-runtime/wire.js";

const WIRE = { varint: 0, i64: 1, len: 2, i32: 5 };

/** Per scalar type: wire type, zero value (TypeScript), the test for "not zero", writer and reader method. */
const SCALARS = new Map([
  [ScalarType.STRING, { wire: WIRE.len, zero: `""`, set: (v) => `${v} !== ""`, method: "string" }],
  [ScalarType.BYTES, { wire: WIRE.len, zero: "new Uint8Array(0)", set: (v) => `${v}.byteLength !== 0`, method: "bytes" }],
  [ScalarType.BOOL, { wire: WIRE.varint, zero: "false", set: (v) => v, method: "bool" }],
  [ScalarType.INT32, { wire: WIRE.varint, zero: "0", set: (v) => `${v} !== 0`, method: "int32" }],
  [ScalarType.UINT32, { wire: WIRE.varint, zero: "0", set: (v) => `${v} !== 0`, method: "uint32" }],
  [ScalarType.INT64, { wire: WIRE.varint, zero: "0n", set: (v) => `${v} !== 0n`, method: "int64" }],
  [ScalarType.UINT64, { wire: WIRE.varint, zero: "0n", set: (v) => `${v} !== 0n`, method: "uint64" }],
  [ScalarType.DOUBLE, { wire: WIRE.i64, zero: "0", set: (v) => `!Object.is(${v}, 0)`, method: "double" }],
  [ScalarType.FLOAT, { wire: WIRE.i32, zero: "0", set: (v) => `!Object.is(${v}, 0)`, method: "float" }],
]);
const ENUM = { wire: WIRE.varint, method: "int32" };

const tagOf = (number, wire) => number * 8 + wire;

function unsupported(field, what) {
  throw new Error(`protoc-gen-orchestra-codec: ${field.parent.typeName}.${field.name}: ${what} is not supported`);
}

function scalarOf(field, type) {
  const s = SCALARS.get(type);
  if (s === undefined) unsupported(field, `scalar type ${ScalarType[type]}`);
  if ((type === ScalarType.INT64 || type === ScalarType.UINT64) && field.longAsString) unsupported(field, "jstype = JS_STRING");
  return s;
}

/** Kind of a field's value: `scalar` | `enum` | `struct` | `message`, with what writing and reading it needs. */
function valueOf(field, kind, scalar, message) {
  if (kind === "scalar") return { kind, ...scalarOf(field, scalar) };
  if (kind === "enum") {
    if (!field.enum.open) unsupported(field, "a closed enum");
    return { kind, ...ENUM, zero: String(field.enum.values[0].number), set: (v) => `${v} !== ${field.enum.values[0].number}` };
  }
  if (message.typeName === STRUCT) return { kind: "struct", wire: WIRE.len };
  if (field.delimitedEncoding) unsupported(field, "delimited (group) encoding");
  return { kind: "message", wire: WIRE.len, message };
}

/** The messages to generate: the file's (nested ones too, map entries excluded) and those they refer to. */
function messagesOf(file) {
  const out = new Map();
  const visit = (desc) => {
    if (out.has(desc.typeName) || desc.typeName === STRUCT) return;
    out.set(desc.typeName, desc);
    for (const field of desc.fields) {
      const m = field.message;
      if (m !== undefined) visit(m);
    }
  };
  const walk = (desc) => {
    visit(desc);
    for (const nested of desc.nestedMessages) walk(nested);
  };
  for (const desc of file.messages) walk(desc);
  return [...out.values()];
}

function generate(schema) {
  for (const file of schema.files) {
    const f = schema.generateFile(`${file.name}_codec.ts`);
    f.preamble(file);
    const rt = (name, typeOnly = false) => f.import(name, RUNTIME, typeOnly);
    const Writer = rt("Writer");
    const Reader = rt("Reader");
    const WireOptions = rt("WireOptions", true);
    const Init = f.import("MessageInitShape", "@bufbuild/protobuf", true);
    const messages = messagesOf(file);
    const nameOf = (desc) => f.importShape(desc).name;
    const names = new Map(messages.map((desc) => [desc.typeName, nameOf(desc)]));
    const fn = (prefix, desc) => `${prefix}${names.get(desc.typeName)}`;

    for (const desc of messages) {
      const Shape = f.importShape(desc);
      const Schema = f.importSchema(desc, true);
      const InitOf = [Init, "<typeof ", Schema, ">"];
      const typeName = JSON.stringify(desc.typeName);
      const fields = desc.fields.concat().sort((a, b) => a.number - b.number);

      // new…: the zero message decoding starts from (message fields left out, as protobuf-es does).
      f.print("function ", fn("new", desc), "(): ", Shape, " {");
      const zero = [`$typeName: ${typeName}`];
      for (const member of desc.members) {
        if (member.kind === "oneof") zero.push(`${member.localName}: { case: undefined }`);
        else if (member.fieldKind === "list") zero.push(`${member.localName}: []`);
        else if (member.fieldKind === "map") zero.push(`${member.localName}: {}`);
        else if (member.fieldKind === "scalar" || member.fieldKind === "enum")
          zero.push(`${member.localName}: ${valueOf(member, member.fieldKind, member.scalar, member.message).zero}`);
      }
      f.print("  return { ", zero.join(", "), " };");
      f.print("}");
      f.print();

      // create…: as protobuf-es's create(Schema, init).
      f.print(
        f.jsDoc(`\`${desc.typeName}\` from an init object, as \`create(${nameOf(desc)}Schema, init)\` of protobuf-es: a message is returned as it is, fields left out are zero.`),
      );
      f.print(f.export("function", fn("create", desc)), "(init?: ", ...InitOf, "): ", Shape, " {");
      f.print("  if (init === undefined) return ", fn("new", desc), "();");
      f.print("  if ((init as { $typeName?: string }).$typeName === ", typeName, ") return init as ", Shape, ";");
      f.print("  const m = ", fn("new", desc), "();");
      for (const member of desc.members) {
        const at = `init.${member.localName}`;
        if (member.kind === "oneof") {
          f.print("  const ", member.localName, " = ", at, ";");
          f.print("  if (", member.localName, " !== undefined) {");
          f.print("    switch (", member.localName, ".case) {");
          for (const field of member.fields) {
            const v = valueOf(field, field.fieldKind, field.scalar, field.message);
            const value = v.kind === "message" ? `${fn("create", v.message)}(${member.localName}.value)` : `${member.localName}.value`;
            f.print("      case ", JSON.stringify(field.localName), ":");
            f.print("        m.", member.localName, " = { case: ", JSON.stringify(field.localName), ", value: ", value, " };");
            f.print("        break;");
          }
          f.print("    }");
          f.print("  }");
          continue;
        }
        let value = at;
        if (member.fieldKind === "message") {
          const v = valueOf(member, "message", undefined, member.message);
          if (v.kind === "message") value = `${fn("create", v.message)}(${at})`;
        } else if (member.fieldKind === "list" && member.listKind === "message") {
          const v = valueOf(member, "message", undefined, member.message);
          if (v.kind === "message") value = `${at}.map((v) => ${fn("create", v.message)}(v))`;
        } else if (member.fieldKind === "map" && member.mapKind === "message") {
          const v = valueOf(member, "message", undefined, member.message);
          if (v.kind === "message") value = `Object.fromEntries(Object.entries(${at}).map(([k, v]) => [k, ${fn("create", v.message)}(v)]))`;
        }
        f.print("  if (", at, " !== undefined) m.", member.localName, " = ", value, ";");
      }
      f.print("  return m;");
      f.print("}");
      f.print();

      // write…: the fields in field-number order (protobuf-es's order), zero scalars left out.
      f.print("function ", fn("write", desc), "(w: ", Writer, ", m: ", Shape, ", depth: number): void {");
      f.print("  w.depth(depth, ", typeName, ");");
      for (const field of fields) {
        const at = field.oneof ? `m.${field.oneof.localName}.value` : `m.${field.localName}`;
        const guard = field.oneof ? `m.${field.oneof.localName}.case === ${JSON.stringify(field.localName)}` : undefined;
        printWrite(f, field, at, guard, fn);
      }
      f.print("}");
      f.print();

      // read…: switch on the whole tag; another wire type for a known field is an unknown field.
      f.print("function ", fn("read", desc), "(r: ", Reader, ", end: number, depth: number, m: ", Shape, "): ", Shape, " {");
      f.print("  r.depth(depth, ", typeName, ");");
      f.print("  while (r.pos < end) {");
      f.print("    const tag = r.uint32();");
      f.print("    switch (tag) {");
      for (const field of fields) printRead(f, field, typeName, fn);
      f.print("      default:");
      f.print("        r.skip(tag, depth);");
      f.print("    }");
      f.print("  }");
      f.print("  r.ended(end, ", typeName, ");");
      f.print("  return m;");
      f.print("}");
      f.print();

      f.print(f.jsDoc(`\`${desc.typeName}\` in the protobuf binary format. @throws WireError when nested deeper than \`options.recursionLimit\` (default 100)`));
      f.print(f.export("function", fn("encode", desc)), "(message: ", Shape, ", options?: ", WireOptions, "): Uint8Array {");
      f.print("  const w = new ", Writer, "(options);");
      f.print("  ", fn("write", desc), "(w, message, 1);");
      f.print("  return w.finish();");
      f.print("}");
      f.print();
      f.print(
        f.jsDoc(
          `\`${desc.typeName}\` from the protobuf binary format; \`bytes\` fields are views of \`bytes\`. @throws WireError on malformed data (src/gen-runtime/wire.ts) or nesting deeper than \`options.recursionLimit\` (default 100)`,
        ),
      );
      f.print(f.export("function", fn("decode", desc)), "(bytes: Uint8Array, options?: ", WireOptions, "): ", Shape, " {");
      f.print("  return ", fn("read", desc), "(new ", Reader, "(bytes, options), bytes.byteLength, 1, ", fn("new", desc), "());");
      f.print("}");
      f.print();
    }
  }
}

/** Writes one field's value(s) with their tags. `guard`: the oneof case test, for oneof members. */
function printWrite(f, field, at, guard, fn) {
  const rt = (name) => f.import(name, RUNTIME);
  if (field.fieldKind === "map") {
    if (field.mapKey !== ScalarType.STRING) unsupported(field, `map key type ${ScalarType[field.mapKey]}`);
    const v = valueOf(field, field.mapKind, field.scalar, field.message);
    f.print("  for (const k of Object.keys(", at, ")) {");
    f.print("    w.uint32(", tagOf(field.number, WIRE.len), ");");
    f.print("    const e = w.fork();");
    f.print("    w.uint32(", tagOf(1, WIRE.len), ");");
    f.print("    w.string(k);");
    f.print("    w.uint32(", tagOf(2, v.wire), ");");
    printValue(f, v, `${at}[k]!`, "    ", rt, fn);
    f.print("    w.join(e);");
    f.print("  }");
    return;
  }
  if (field.fieldKind === "list") {
    const v = valueOf(field, field.listKind, field.scalar, field.message);
    if (field.packed && v.wire !== WIRE.len) {
      f.print("  if (", at, ".length !== 0) {");
      f.print("    w.uint32(", tagOf(field.number, WIRE.len), ");");
      f.print("    const s = w.fork();");
      f.print("    for (const v of ", at, ") w.", v.method, "(v);");
      f.print("    w.join(s);");
      f.print("  }");
      return;
    }
    f.print("  for (const v of ", at, ") {");
    f.print("    w.uint32(", tagOf(field.number, v.wire), ");");
    printValue(f, v, "v", "    ", rt, fn);
    f.print("  }");
    return;
  }
  const v = valueOf(field, field.fieldKind, field.scalar, field.message);
  const test = guard ?? (v.kind === "message" || v.kind === "struct" ? `${at} !== undefined` : v.set(at));
  f.print("  if (", test, ") {");
  f.print("    w.uint32(", tagOf(field.number, v.wire), ");");
  printValue(f, v, at, "    ", rt, fn);
  f.print("  }");
}

/** Writes one value after its tag (a message or Struct with its length). */
function printValue(f, v, at, indent, rt, fn) {
  if (v.kind === "message" || v.kind === "struct") {
    f.print(indent, "{");
    f.print(indent, "  const s = w.fork();");
    if (v.kind === "struct") f.print(indent, "  ", rt("writeStruct"), "(w, ", at, ", depth + 1);");
    else f.print(indent, "  ", fn("write", v.message), "(w, ", at, ", depth + 1);");
    f.print(indent, "  w.join(s);");
    f.print(indent, "}");
    return;
  }
  f.print(indent, "w.", v.method, "(", at, ");");
}

/** The expression that reads one value whose tag was read; `existing` (an expression, or none) is merged into. */
function readExpr(f, v, existing, fn) {
  if (v.kind === "struct") return [f.import("readStruct", RUNTIME), "(r, r.end(), depth + 1, ", existing, ")"];
  if (v.kind === "message") {
    const fresh = [fn("new", v.message), "()"];
    return [fn("read", v.message), "(r, r.end(), depth + 1, ", ...(existing === undefined ? fresh : [existing, " ?? ", ...fresh]), ")"];
  }
  return [`r.${v.method}()`];
}

function printRead(f, field, typeName, fn) {
  const m = `m.${field.localName}`;
  if (field.fieldKind === "map") {
    const v = valueOf(field, field.mapKind, field.scalar, field.message);
    const setOwn = f.import("setOwn", RUNTIME);
    f.print("      case ", tagOf(field.number, WIRE.len), ": {");
    f.print("        const e = r.end();");
    f.print('        let k = "";');
    if (v.kind === "message" || v.kind === "struct")
      f.print("        let v: ", v.kind === "struct" ? f.import("JsonObject", "@bufbuild/protobuf", true) : f.importShape(v.message), " | undefined;");
    else f.print("        let v = ", v.zero, ";");
    f.print("        while (r.pos < e) {");
    f.print("          const t = r.uint32();");
    f.print("          if (t === ", tagOf(1, WIRE.len), ") k = r.string();");
    f.print("          else if (t === ", tagOf(2, v.wire), ") v = ", ...readExpr(f, v, "v", fn), ";");
    f.print("          else r.skip(t, depth);");
    f.print("        }");
    f.print("        r.ended(e, ", typeName, ");");
    const value = v.kind === "message" ? ["v ?? ", fn("new", v.message), "()"] : v.kind === "struct" ? ["v ?? {}"] : ["v"];
    f.print("        ", setOwn, "(", m, ", k, ", ...value, ");");
    f.print("        break;");
    f.print("      }");
    return;
  }
  if (field.fieldKind === "list") {
    const v = valueOf(field, field.listKind, field.scalar, field.message);
    if (v.wire !== WIRE.len) {
      f.print("      case ", tagOf(field.number, WIRE.len), ": {");
      f.print("        const e = r.end();");
      f.print("        while (r.pos < e) ", m, ".push(r.", v.method, "());");
      f.print("        r.ended(e, ", typeName, ");");
      f.print("        break;");
      f.print("      }");
    }
    f.print("      case ", tagOf(field.number, v.wire), ":");
    f.print("        ", m, ".push(", ...readExpr(f, v, undefined, fn), ");");
    f.print("        break;");
    return;
  }
  const v = valueOf(field, field.fieldKind, field.scalar, field.message);
  f.print("      case ", tagOf(field.number, v.wire), ":");
  if (field.oneof) {
    const o = `m.${field.oneof.localName}`;
    const name = JSON.stringify(field.localName);
    const existing = `(${o}.case === ${name} ? ${o}.value : undefined)`;
    f.print("        ", o, " = { case: ", name, ", value: ", ...readExpr(f, v, v.kind === "message" || v.kind === "struct" ? existing : "", fn), " };");
  } else {
    f.print("        ", m, " = ", ...readExpr(f, v, m, fn), ";");
  }
  f.print("        break;");
}

runNodeJs(
  createEcmaScriptPlugin({
    name: "protoc-gen-orchestra-codec",
    version: "v1",
    generateTs: generate,
  }),
);
