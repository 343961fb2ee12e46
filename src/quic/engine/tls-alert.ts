/**
 * TLS alert names (RFC 8446 §6) and plain-language hints for certificate failures.
 *
 * QUIC carries a TLS alert as the transport error code `0x100 + alert` (RFC 9001 §4.8); the
 * engine's `CloseInfo` flags those with `tls: true`.
 */

/** TLS alert descriptions (RFC 8446 §6, plus RFC 8446 §B.2 / RFC 7301 registry entries). */
const ALERT_NAMES: Readonly<Record<number, string>> = {
  0: "close_notify",
  10: "unexpected_message",
  20: "bad_record_mac",
  22: "record_overflow",
  40: "handshake_failure",
  42: "bad_certificate",
  43: "unsupported_certificate",
  44: "certificate_revoked",
  45: "certificate_expired",
  46: "certificate_unknown",
  47: "illegal_parameter",
  48: "unknown_ca",
  49: "access_denied",
  50: "decode_error",
  51: "decrypt_error",
  70: "protocol_version",
  71: "insufficient_security",
  80: "internal_error",
  86: "inappropriate_fallback",
  90: "user_canceled",
  109: "missing_extension",
  110: "unsupported_extension",
  112: "unrecognized_name",
  113: "bad_certificate_status_response",
  115: "unknown_psk_identity",
  116: "certificate_required",
  120: "no_application_protocol",
};

/** The RFC 8446 name of TLS alert `alert`, or `alert_<n>` for an unregistered one. */
export function tlsAlertName(alert: number): string {
  return ALERT_NAMES[alert] ?? `alert_${alert}`;
}

/** `unknown_ca, TLS alert 48`: name and number, for messages. */
export function tlsAlertLabel(alert: number): string {
  return `${tlsAlertName(alert)}, TLS alert ${alert}`;
}

/**
 * Explains a client's failed TLS handshake with the orchestrator in plain words.
 *
 * @param alert the TLS alert (QUIC crypto error code minus 0x100)
 * @param sentBy `local`: we sent it (the orchestrator's certificate or ALPN failed our checks);
 *   `peer`: the orchestrator sent it (it refused our client certificate or parameters)
 * @param serverName the server name we expect in the orchestrator's certificate
 * @returns e.g. `the orchestrator's certificate is not signed by our CA (unknown_ca, TLS alert
 *   48): check --certs-dir`
 */
export function describeTlsFailure(alert: number, sentBy: "local" | "peer", serverName?: string): string {
  const label = tlsAlertLabel(alert);
  if (sentBy === "local") {
    switch (alert) {
      case 48:
        return `the orchestrator's certificate is not signed by our CA (${label}): check --certs-dir`;
      case 42:
      case 46:
      case 43:
        return (
          `the orchestrator's certificate was rejected (${label})` +
          `: does it carry the server name ${serverName ? JSON.stringify(serverName) : "we expect"}? check --server-name and --certs-dir`
        );
      case 45:
        return `the orchestrator's certificate has expired or is not yet valid (${label}): renew it or check the clock`;
      case 44:
        return `the orchestrator's certificate has been revoked (${label})`;
      case 120:
        return `the orchestrator does not speak our application protocol (${label}): ALPN mismatch, is it an Orchestra orchestrator?`;
      case 40:
      case 70:
      case 71:
        return `no TLS parameters in common with the orchestrator (${label})`;
      default:
        return `we rejected the orchestrator's TLS handshake (${label})`;
    }
  }
  switch (alert) {
    case 116:
      return `the orchestrator requires a client certificate (${label}): check --certs-dir`;
    case 48:
      return `the orchestrator does not trust our client certificate: another CA signed it (${label}): use the orchestrator's cert store in --certs-dir`;
    case 42:
    case 43:
    case 46:
      return `the orchestrator rejected our client certificate (${label}): check --certs-dir`;
    case 45:
      return `the orchestrator says our client certificate has expired or is not yet valid (${label}): renew it or check the clock`;
    case 44:
      return `the orchestrator says our client certificate has been revoked (${label})`;
    case 120:
      return `the orchestrator does not accept our application protocol (${label}): ALPN mismatch, is it an Orchestra orchestrator?`;
    case 112:
      return `the orchestrator does not serve the server name ${serverName ? JSON.stringify(serverName) : "we sent"} (${label}): check --server-name`;
    case 40:
    case 70:
    case 71:
      return `no TLS parameters in common with the orchestrator (${label})`;
    default:
      return `the orchestrator refused the TLS handshake (${label})`;
  }
}

/** QUIC transport error code of TLS alert 0 (RFC 9001 §4.8: crypto error = 0x100 + alert). */
export const QUIC_CRYPTO_ERROR_BASE = 0x100;

/**
 * {@link describeTlsFailure} for a QUIC close carrying a TLS alert (`info.tls`): `local` closes
 * are our verdict on the orchestrator, `peer` closes the orchestrator's verdict on us.
 */
export function describeTlsClose(info: { kind: string; code: number }, serverName?: string): string {
  return describeTlsFailure(info.code - QUIC_CRYPTO_ERROR_BASE, info.kind === "peer" ? "peer" : "local", serverName);
}
