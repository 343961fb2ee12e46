/**
 * Interop with quic-go, the QUIC stack of the existing Go orchestrators and plugins
 * (orchestra-protocol.md): our engine's server (the reference orchestrator) against a quic-go
 * client, and `QuicSender` against a quic-go echo server, with mutual TLS from one cert store.
 *
 * Needs the Go toolchain and Debian's quic-go sources (`apt-get install golang-go
 * golang-github-lucas-clemente-quic-go-dev`, quic-go 0.29); skipped when either is missing.
 * The peer is test/helpers/quic/go-interop/main.go, built in GOPATH mode into a temp dir.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, copyFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PluginRequestSchema, PluginResponseSchema } from "../../src/gen/proto/orchestra/plugin/v1/plugin_pb.js";
import { ensureCertStore } from "../../src/pki/store.js";
import { encodeFrame } from "../../src/framing/frame.js";
import { QuicSender } from "../../src/quic/quic-link.js";
import { startOrchestrator, type RunningOrchestrator } from "../../src/orchestrator/quic-server.js";
import { healthRequest } from "../helpers/quic/index.js";
import { firstReason, requireCommand, requirePath, skipTitle } from "../helpers/requires.js";

const run = promisify(execFile);
const GOPATH_SYSTEM = "/usr/share/gocode";
const goMissing = firstReason(
  requireCommand("go", ["version"]),
  requirePath(join(GOPATH_SYSTEM, "src/github.com/lucas-clemente/quic-go"), "quic-go sources (apt-get install golang-github-lucas-clemente-quic-go-dev)"),
);

describe.skipIf(goMissing !== undefined)(skipTitle("interop with quic-go", goMissing), () => {
  let work: string;
  let bin: string;
  let certs: string;
  let orch: RunningOrchestrator;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "quic-go-interop-"));
    const src = join(work, "src", "interop");
    mkdirSync(src, { recursive: true });
    copyFileSync(join(import.meta.dirname, "../helpers/quic/go-interop/main.go"), join(src, "main.go"));
    bin = join(work, "interop");
    await run("go", ["build", "-o", bin, "interop"], {
      cwd: work,
      env: {
        ...process.env,
        GO111MODULE: "off",
        GOPATH: `${work}:${GOPATH_SYSTEM}`,
        GOFLAGS: "",
        // Reuse the user's build cache when there is one (quic-go takes a while to compile).
        ...(process.env.GOCACHE || process.env.HOME ? {} : { GOCACHE: join(work, "cache") }),
      },
      timeout: 240_000,
    });
    certs = join(work, "certs");
    await ensureCertStore(certs, "transport.stdio-client");
    orch = await startOrchestrator({ certsDir: certs });
  }, 300_000);

  afterAll(async () => {
    await orch?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("a quic-go client calls the reference orchestrator (200 calls, 8 in flight)", async () => {
    const req = create(PluginRequestSchema, {
      requestId: "go-1",
      request: { case: "toolCall", value: { toolName: "echo", arguments: { text: "hello from quic-go" } } },
    });
    const hex = Buffer.from(encodeFrame(toBinary(PluginRequestSchema, req))).toString("hex");
    const { stdout } = await run(bin, ["client", `127.0.0.1:${orch.port}`, certs, hex, "200", "transport.stdio-client"], { timeout: 60_000 });
    expect(stdout).toContain("DONE 200 fails 0");
    const reply = Buffer.from(/REPLY ([0-9a-f]+)/.exec(stdout)![1]!, "hex");
    const response = fromBinary(PluginResponseSchema, reply.subarray(4));
    expect(response.requestId).toBe("go-1");
    expect(response.response.case === "toolCall" && response.response.value.result).toEqual({ text: "hello from quic-go" });
  }, 60_000);

  it("the reference orchestrator refuses a quic-go client whose certificate another CA signed", async () => {
    const other = join(work, "other");
    await ensureCertStore(other, "transport.stdio-client");
    copyFileSync(join(certs, "ca.crt"), join(other, "ca.crt")); // trusts the right CA, presents a foreign cert
    const hex = Buffer.from(encodeFrame(toBinary(PluginRequestSchema, healthRequest()))).toString("hex");
    const r = await run(bin, ["client", `127.0.0.1:${orch.port}`, other, hex, "1", "transport.stdio-client"], { timeout: 60_000 }).catch((e: { stdout?: string }) => ({
      stdout: String(e.stdout),
    }));
    expect(r.stdout).toMatch(/0x130|unknown certificate authority/);
    expect(r.stdout).not.toContain("REPLY");
  }, 60_000);

  it("QuicSender talks to a quic-go server granting 10 streams (300 calls queue and complete)", async () => {
    await ensureCertStore(certs, "orchestrator");
    const server: ChildProcess = spawn(bin, ["server", "127.0.0.1:0", certs], { env: { ...process.env, STREAMS: "10" } });
    try {
      const port = await new Promise<number>((resolve, reject) => {
        server.stdout!.on("data", (d: Buffer) => {
          const m = /LISTENING \S+:(\d+)/.exec(String(d));
          if (m) resolve(Number(m[1]));
        });
        server.once("exit", (code) => reject(new Error(`quic-go server exited with ${code}`)));
      });
      const s = new QuicSender({ host: "127.0.0.1", port, certsDir: certs });
      try {
        // The echo server returns the request bytes: a PluginRequest{health} decodes as a
        // PluginResponse{health} with the same request_id (same field numbers).
        const ids = Array.from({ length: 300 }, (_, i) => `to-go-${i}`);
        const responses = await Promise.all(ids.map((id) => s.send(healthRequest(id))));
        expect(responses.map((r) => r.requestId)).toEqual(ids);
        expect(responses.every((r) => r.response.case === "health")).toBe(true);
      } finally {
        await s.close();
      }
    } finally {
      server.kill();
    }
  }, 60_000);
});
