/**
 * Engine configuration: what an endpoint needs to build a quiche `Config` (TLS 1.3 via
 * BoringSSL, ALPN, transport parameters of RFC 9000 §18.2), and the shared native handle.
 */
import { existsSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Config as QuicheConfig, Quiche } from "@matrixai/quic/native/index.js";

/**
 * The quiche binding (napi-rs) that @matrixai/quic ships as its optional dependency
 * `@matrixai/quic-<platform>-<arch>` (`darwin-universal` too on macOS), required as CommonJS from
 * @matrixai/quic's own location: the package's loader (`native/quiche.js`) is an ES module, and
 * importing it would start Node's ES module loader in a process that runs none otherwise
 * (docs/startup.md). The same module instance as @matrixai/quic's `quiche` export
 * (test/unit/quic-layers.test.ts).
 * @throws Error naming the package to install when no binding exists for this platform
 */
export const quiche: Quiche = requireBinding();

function requireBinding(): Quiche {
  const fromQuic = createRequire(quicPackageJson());
  const targets = [`${process.platform}-${process.arch}`, ...(process.platform === "darwin" ? ["darwin-universal"] : [])];
  for (const target of targets) {
    try {
      return fromQuic(`@matrixai/quic-${target}`) as Quiche;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND") throw e;
    }
  }
  throw new Error(`no QUIC native binding for ${targets[0]}: @matrixai/quic-${targets[0]} (an optional dependency of @matrixai/quic) is not installed`);
}

/**
 * The path of @matrixai/quic's package.json, where Node's CommonJS resolution finds the package
 * (the first `node_modules` of the lookup paths from here that holds it; its real path, so that
 * its own dependencies resolve from where it is installed, as with pnpm's links). Not
 * `require.resolve("@matrixai/quic/package.json")`: the package has an `exports` map, and
 * resolving through it loads Node's ES module resolver (`internal/modules/esm/resolve` and the
 * modules it needs, ~3 ms) on the first call of a `serve` that has no other use for it.
 */
function quicPackageJson(): string {
  const fromHere = createRequire(import.meta.url);
  for (const dir of fromHere.resolve.paths("@matrixai/quic") ?? []) {
    const file = join(dir, "@matrixai", "quic", "package.json");
    if (existsSync(file)) return realpathSync(file);
  }
  return fromHere.resolve("@matrixai/quic/package.json"); // MODULE_NOT_FOUND, as Node words it
}

/** Length of every connection ID this engine issues (bytes; RFC 9000 §5.1, max 20). */
export const CONN_ID_BYTES = 20;

/** TLS signature algorithms offered / accepted (BoringSSL names). Ed25519 is what Orchestra parties use. */
const SIGALGS = [
  "ed25519",
  "ecdsa_secp256r1_sha256",
  "ecdsa_secp384r1_sha384",
  "ecdsa_secp521r1_sha512",
  "rsa_pss_rsae_sha256",
  "rsa_pss_rsae_sha384",
  "rsa_pss_rsae_sha512",
  "rsa_pkcs1_sha256",
  "rsa_pkcs1_sha384",
  "rsa_pkcs1_sha512",
].join(":");

/** PEM material of one party. */
export interface EngineTls {
  /** CA certificate(s) (PEM) the peer's certificate must chain to. */
  caPem: string;
  /** This party's certificate chain (PEM, leaf first). */
  certPem: string;
  /** This party's private key (PEM, PKCS#8). */
  keyPem: string;
}

/** Settings shared by client and server endpoints. */
export interface EngineConfig {
  /** TLS material. Both sides always verify the peer against `tls.caPem` (mutual TLS). */
  tls: EngineTls;
  /** ALPN protocol ids offered (client) / accepted (server), e.g. `["orchestra-plugin"]`. */
  alpn: readonly string[];
  /**
   * `max_idle_timeout` transport parameter in ms (RFC 9000 §10.1; > 0). The connection closes
   * silently once nothing arrived for the smaller of both peers' values.
   */
  idleTimeoutMs: number;
  /**
   * Interval in ms of ack-eliciting PINGs sent when nothing else was sent (must be below
   * `idleTimeoutMs`; default: a third of it). RFC 9000 §10.1.2.
   */
  keepAliveMs?: number;
  /** `initial_max_streams_bidi` granted to the peer (default 100). RFC 9000 §4.6. */
  maxStreamsBidi?: number;
  /** Largest UDP payload this side sends, in bytes (default 1350). */
  maxSendUdpPayload?: number;
  /** `max_udp_payload_size` advertised to the peer, in bytes (default 16 KiB). */
  maxRecvUdpPayload?: number;
  /** `initial_max_data` in bytes (default 10 MiB; quiche auto-tunes upwards). */
  initialMaxData?: number;
  /** `initial_max_stream_data_bidi_*` in bytes (default 1 MiB; quiche auto-tunes upwards). */
  initialMaxStreamData?: number;
  /**
   * Application error code (RFC 9000 §20.2) of the RESET_STREAM + STOP_SENDING sent for a
   * peer-initiated stream when the connection has no `onStream` handler (default 0).
   */
  refusedStreamCode?: number;
}

/** Resolved numeric settings. */
export interface ResolvedLimits {
  idleTimeoutMs: number;
  keepAliveMs: number;
  maxSendUdpPayload: number;
  /** `initial_max_streams_bidi` granted to the peer (0: the peer cannot open streams). */
  maxStreamsBidi: number;
  refusedStreamCode: number;
}

/**
 * Validates `config` and returns the numbers the endpoint uses at run time.
 * @throws RangeError when a value is out of range (idle ≤ 0, keep-alive ≥ idle, payload sizes
 *   outside 1200..65527, a non-positive stream limit, a refused-stream code that is no varint)
 */
export function resolveLimits(config: EngineConfig): ResolvedLimits {
  const idle = config.idleTimeoutMs;
  if (!(Number.isFinite(idle) && idle > 0)) throw new RangeError(`idleTimeoutMs must be > 0, got ${String(idle)}`);
  const keepAlive = config.keepAliveMs ?? Math.max(1, Math.floor(idle / 3));
  if (!(keepAlive > 0 && keepAlive < idle)) {
    throw new RangeError(`keepAliveMs (${keepAlive}) must be positive and below idleTimeoutMs (${idle})`);
  }
  const send = config.maxSendUdpPayload ?? 1350;
  const recv = config.maxRecvUdpPayload ?? 16 * 1024;
  for (const [name, v] of [
    ["maxSendUdpPayload", send],
    ["maxRecvUdpPayload", recv],
  ] as const) {
    if (!Number.isInteger(v) || v < 1200 || v > 65527) throw new RangeError(`${name} must be an integer in 1200..65527, got ${v}`);
  }
  const streams = config.maxStreamsBidi ?? 100;
  if (!Number.isInteger(streams) || streams < 0) throw new RangeError(`maxStreamsBidi must be a non-negative integer, got ${streams}`);
  const refused = config.refusedStreamCode ?? 0;
  if (!Number.isSafeInteger(refused) || refused < 0) throw new RangeError(`refusedStreamCode must be a non-negative integer, got ${refused}`);
  return { idleTimeoutMs: idle, keepAliveMs: keepAlive, maxSendUdpPayload: send, maxStreamsBidi: streams, refusedStreamCode: refused };
}

const encoder = new TextEncoder();

/**
 * Builds a quiche `Config`: BoringSSL context with the CA, key and certificate, peer
 * verification on (the server then requests a client certificate: mutual TLS), ALPN,
 * transport parameters, active migration disabled, no unidirectional streams (the Orchestra
 * protocol has none), no DATAGRAM extension, no 0-RTT.
 * @throws RangeError for bad limits (see {@link resolveLimits}); Error from quiche when the PEM
 *   material cannot be loaded
 */
export function buildQuicheConfig(config: EngineConfig): QuicheConfig {
  resolveLimits(config);
  let c: QuicheConfig;
  try {
    c = quiche.Config.withBoringSslCtx(
      true,
      false,
      encoder.encode(config.tls.caPem.trim() + "\n"),
      [encoder.encode(config.tls.keyPem.trim() + "\n")],
      [encoder.encode(config.tls.certPem.trim() + "\n")],
      SIGALGS,
    );
  } catch (e) {
    throw new Error(`cannot load TLS material into quiche: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  const streamData = config.initialMaxStreamData ?? 1024 * 1024;
  c.setApplicationProtos([...config.alpn]);
  c.setMaxIdleTimeout(config.idleTimeoutMs);
  c.setMaxSendUdpPayloadSize(config.maxSendUdpPayload ?? 1350);
  c.setMaxRecvUdpPayloadSize(config.maxRecvUdpPayload ?? 16 * 1024);
  c.setInitialMaxData(config.initialMaxData ?? 10 * 1024 * 1024);
  c.setInitialMaxStreamDataBidiLocal(streamData);
  c.setInitialMaxStreamDataBidiRemote(streamData);
  c.setInitialMaxStreamDataUni(0);
  c.setInitialMaxStreamsBidi(config.maxStreamsBidi ?? 100);
  c.setInitialMaxStreamsUni(0);
  c.setDisableActiveMigration(true);
  c.enableDgram(false, 0, 0);
  return c;
}
