import { describe, expect, it } from "vitest";
import { describeClose } from "../../src/quic/engine/connection.js";
import { describeTlsClose, describeTlsFailure, tlsAlertName } from "../../src/quic/engine/tls-alert.js";

describe("TLS alert naming (RFC 8446 §6, RFC 9001 §4.8)", () => {
  it("names the certificate alerts", () => {
    expect(tlsAlertName(40)).toBe("handshake_failure");
    expect(tlsAlertName(42)).toBe("bad_certificate");
    expect(tlsAlertName(45)).toBe("certificate_expired");
    expect(tlsAlertName(46)).toBe("certificate_unknown");
    expect(tlsAlertName(48)).toBe("unknown_ca");
    expect(tlsAlertName(116)).toBe("certificate_required");
    expect(tlsAlertName(120)).toBe("no_application_protocol");
    expect(tlsAlertName(201)).toBe("alert_201");
  });

  it("describeClose names the alert of a QUIC crypto error (0x100 + alert)", () => {
    const info = { kind: "local", app: false, code: 0x100 + 48, reason: "", tls: true, established: false } as const;
    expect(describeClose(info)).toBe("local closed the connection: TLS alert 48 (unknown_ca)");
  });

  it("explains our verdict on the orchestrator's certificate", () => {
    expect(describeTlsClose({ kind: "local", code: 0x100 + 48 })).toBe("the orchestrator's certificate is not signed by our CA (unknown_ca, TLS alert 48): check --certs-dir");
    expect(describeTlsClose({ kind: "local", code: 0x100 + 42 }, "other.example")).toMatch(
      /^the orchestrator's certificate was rejected \(bad_certificate, TLS alert 42\): does it carry the server name "other\.example"\? check --server-name/,
    );
    expect(describeTlsFailure(45, "local")).toMatch(/expired/);
    expect(describeTlsFailure(120, "local")).toMatch(/ALPN/);
  });

  it("explains the orchestrator's verdict on us", () => {
    expect(describeTlsClose({ kind: "peer", code: 0x100 + 116 })).toBe("the orchestrator requires a client certificate (certificate_required, TLS alert 116): check --certs-dir");
    expect(describeTlsFailure(48, "peer")).toMatch(/does not trust our client certificate/);
    expect(describeTlsFailure(42, "peer")).toMatch(/rejected our client certificate \(bad_certificate, TLS alert 42\)/);
  });
});
