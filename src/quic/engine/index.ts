/**
 * A lean QUIC engine over the quiche native binding that @matrixai/quic ships
 * (`@matrixai/quic/native`): UDP endpoints, connections and streams as plain objects with
 * callbacks. Design and measurements: docs/quic-performance.md, "The engine".
 */
export { buildQuicheConfig, CONN_ID_BYTES, quiche, resolveLimits, type EngineConfig, type EngineTls } from "./config.js";
export { ConnectionClosedError, describeClose, UNREACHABLE_CONFIRM_MS, type CloseInfo } from "./close.js";
export { ACK_DELAY_MS } from "./timers.js";
export { AMPLIFICATION_FACTOR, QuicConnection } from "./connection.js";
export {
  connectQuic,
  DEFAULT_MAX_HANDSHAKES,
  ENGINE_UDP_BUFFER_BYTES,
  QuicConnectError,
  QuicServerEndpoint,
  statelessResetToken,
  UdpEndpoint,
  type ConnectOptions,
  type ListenOptions,
} from "./endpoint.js";
export { describeTlsClose, describeTlsFailure, QUIC_CRYPTO_ERROR_BASE, tlsAlertLabel, tlsAlertName } from "./tls-alert.js";
export { PeerResetError, PeerStopError, QuicStream, StreamClosedError } from "./stream.js";
