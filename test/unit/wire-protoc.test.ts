/**
 * Byte-level interoperability: what we put on the wire must decode with the reference protobuf
 * implementation (`protoc --decode`) against our .proto, field numbers and all.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { PluginRequestSchema, PluginResponseSchema } from "../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { encodeFrame, FrameDecoder } from "../../src/framing/frame.js";
import { firstReason, requireCommand, skipTitle } from "../helpers/requires.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PROTO = "orchestra/plugin/v1/plugin.proto";

function findProtoc(): { bin: string; include: string } | undefined {
  const which = spawnSync("sh", ["-c", "command -v protoc"], { encoding: "utf8" });
  const bin = which.status === 0 ? which.stdout.trim() : "";
  if (!bin) return undefined;
  const candidates = ["/usr/include", "/usr/local/include", join(dirname(dirname(bin)), "include")];
  const include = candidates.find((d) => existsSync(join(d, "google/protobuf/struct.proto")));
  return include ? { bin, include } : undefined;
}

const protoc = findProtoc();
const protocMissing = firstReason(requireCommand("protoc"), protoc ? undefined : "needs google/protobuf/*.proto beside protoc (apt-get install protobuf-compiler)");

function decodeWithProtoc(type: string, bytes: Uint8Array): string {
  const r = spawnSync(protoc!.bin, [`--decode=${type}`, "-I", join(ROOT, "proto"), "-I", protoc!.include, PROTO], { input: bytes, encoding: "buffer" });
  if (r.status !== 0) throw new Error(`protoc failed: ${r.stderr.toString()}`);
  return r.stdout.toString("utf8");
}

function encodeWithProtoc(type: string, text: string): Uint8Array {
  const r = spawnSync(protoc!.bin, [`--encode=${type}`, "-I", join(ROOT, "proto"), "-I", protoc!.include, PROTO], { input: Buffer.from(text), encoding: "buffer" });
  if (r.status !== 0) throw new Error(`protoc failed: ${r.stderr.toString()}`);
  return new Uint8Array(r.stdout);
}

describe.skipIf(protocMissing !== undefined)(skipTitle("wire format vs protoc", protocMissing), () => {
  it("a framed tool_call PluginRequest with Struct arguments decodes with protoc", () => {
    const request = create(PluginRequestSchema, {
      requestId: "0190f3c4-7a1b-7cde-8f00-123456789abc",
      request: {
        case: "toolCall",
        value: {
          toolName: "echo",
          arguments: { text: "héllo wire", count: 3, nested: { ok: true, list: ["a", 1.5, null] } },
          callerPlugin: "transport.stdio",
          sessionId: "sess-1",
        },
      },
    });
    // Through the framer, as it would travel on a stream.
    const frame = encodeFrame(toBinary(PluginRequestSchema, request));
    const [payload] = new FrameDecoder().push(frame);
    const text = decodeWithProtoc("orchestra.plugin.v1.PluginRequest", payload!);

    expect(text).toContain('request_id: "0190f3c4-7a1b-7cde-8f00-123456789abc"');
    expect(text).toMatch(/tool_call \{/);
    expect(text).toContain('tool_name: "echo"');
    expect(text).toContain('caller_plugin: "transport.stdio"');
    expect(text).toContain('session_id: "sess-1"');
    // google.protobuf.Struct is a map<string, Value>: keys and typed values.
    expect(text).toMatch(/key: "text"\s+value \{\s+string_value: "h\\303\\251llo wire"/);
    expect(text).toMatch(/key: "count"\s+value \{\s+number_value: 3/);
    expect(text).toMatch(/key: "ok"\s+value \{\s+bool_value: true/);
    expect(text).toMatch(/null_value: NULL_VALUE/);
    expect(text).toMatch(/number_value: 1\.5/);
  });

  it("health and list_tools requests carry their oneof field numbers", () => {
    const health = toBinary(PluginRequestSchema, create(PluginRequestSchema, { requestId: "h", request: { case: "health", value: {} } }));
    expect(decodeWithProtoc("orchestra.plugin.v1.PluginRequest", health)).toMatch(/health \{\s*\}/);
    // Field 13, length-delimited, empty: tag byte (13 << 3 | 2) = 0x6a.
    expect([...health]).toEqual([0x0a, 0x01, 0x68, 0x6a, 0x00]);
    const list = toBinary(PluginRequestSchema, create(PluginRequestSchema, { requestId: "l", request: { case: "listTools", value: {} } }));
    expect(decodeWithProtoc("orchestra.plugin.v1.PluginRequest", list)).toMatch(/list_tools \{\s*\}/);
  });

  it("a PluginResponse encoded by protoc decodes in our code", () => {
    const bytes = encodeWithProtoc(
      "orchestra.plugin.v1.PluginResponse",
      `request_id: "r-1"
       tool_call {
         success: true
         result { fields { key: "text" value { string_value: "pong" } } }
       }`,
    );
    const response = fromBinary(PluginResponseSchema, bytes);
    expect(response.requestId).toBe("r-1");
    expect(response.response.case).toBe("toolCall");
    if (response.response.case !== "toolCall") return;
    expect(response.response.value.success).toBe(true);
    expect(response.response.value.result).toEqual({ text: "pong" });
  });
});
