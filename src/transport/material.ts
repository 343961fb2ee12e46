/**
 * The TLS material a link dials with: the PEM material given, or the party's certificate from
 * the cert store (created on first use). A failed read is retried on the next dial.
 */
import { BRIDGE_CERT_NAME, defaultCertsDir, ensureCertStore, type TlsMaterial } from "../pki/store.js";
import { senderError, tlsMaterialDetail, type SenderError, type SenderErrorKind } from "./errors.js";
import { formatHostPort, type Resolver } from "../quic/address.js";

/** The orchestrator a sender talks to, and who it is to the orchestrator: options every link takes. */
export interface PeerOptions {
  /** Orchestrator host name or IP address. */
  host: string;
  /** Orchestrator port (UDP for QUIC, TCP for TLS). */
  port: number;
  /** Cert store directory used when {@link tls} is absent (default `~/.orchestra/certs`). */
  certsDir?: string;
  /** Party name in the cert store (default `transport.stdio-client`). */
  certName?: string;
  /** PEM material to use instead of the cert store. */
  tls?: TlsMaterial;
  /** Name the server certificate must carry; also sent as SNI (default `localhost`). */
  serverName?: string;
  /** Name resolution (default: the system resolver, every address; see `resolveAddresses`). */
  resolver?: Resolver;
}

/** The material source of `peer`, with the defaults filled in. */
export function materialSourceOf(peer: PeerOptions): MaterialSource {
  return { tls: peer.tls, certsDir: peer.certsDir ?? defaultCertsDir(), certName: peer.certName ?? BRIDGE_CERT_NAME };
}

/** Where a link's TLS material comes from. */
export interface MaterialSource {
  /** PEM material to use instead of the cert store. */
  tls?: TlsMaterial | undefined;
  /** Cert store directory. */
  certsDir: string;
  /** Party name in the cert store. */
  certName: string;
}

/** Loads {@link MaterialSource} once and caches it (not a failure). */
export class MaterialLoader {
  private pending: Promise<TlsMaterial> | undefined;

  constructor(
    private readonly source: MaterialSource,
    private readonly address: string,
  ) {}

  /** @throws SenderError kind `connect` when the cert store cannot be read or created */
  async load(): Promise<TlsMaterial> {
    if (!this.pending) {
      const { tls, certsDir, certName } = this.source;
      this.pending = tls ? Promise.resolve(tls) : ensureCertStore(certsDir, certName);
      this.pending.catch(() => {
        this.pending = undefined; // retry reading the store next time
      });
    }
    try {
      return await this.pending;
    } catch (e) {
      throw senderError(this.address, "connect", tlsMaterialDetail(e), e);
    }
  }
}

/** What every link's dialer derives from its {@link PeerOptions}. */
export abstract class PeerDialer {
  /** `host:port` of the orchestrator, for messages. */
  readonly address: string;
  /** Name the server certificate must carry. */
  protected readonly serverName: string;
  protected readonly material: MaterialLoader;

  constructor(peer: PeerOptions) {
    this.address = formatHostPort(peer.host, peer.port);
    this.serverName = peer.serverName ?? "localhost";
    this.material = new MaterialLoader(materialSourceOf(peer), this.address);
  }

  /** A {@link SenderError} naming the orchestrator. */
  err(kind: SenderErrorKind, detail: string, cause?: unknown): SenderError {
    return senderError(this.address, kind, detail, cause);
  }
}
