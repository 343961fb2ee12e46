/**
 * Reading a cert store without changing it (`orchestra-stdio certs check`): every certificate,
 * expiry, key ⇄ certificate, signed by the CA, permissions, and each problem with its fix.
 */
import { createPrivateKey, X509Certificate as NodeX509Certificate } from "node:crypto";
import { promises as fs, statSync } from "node:fs";
import path from "node:path";
import { CertStoreError } from "./error.js";
import { octal } from "./files.js";
import { BRIDGE_CERT_NAME, caFlagProblem, caKeyMismatch, caKeyTypeProblem, isExpired, issueHint, noCaHint, notAfterOf, notSignedFix } from "./store.js";
import { loadX509 } from "./x509.js";
import { readRegularFile } from "../regular-file.js";

/** One certificate of a store as {@link inspectCertStore} reports it. */
export interface CertReport {
  /** `ca` for the CA, else the party name (the file's base name). */
  name: string;
  /** Absolute paths of the certificate and its key. */
  certFile: string;
  keyFile: string;
  /** Subject (RFC 4514 string as Node prints it), or undefined when the file is unreadable. */
  subject?: string;
  /** Expiry (ISO 8601), and whether it is past. */
  notAfter?: string;
  expired?: boolean;
  /** Key file present; its mode (e.g. `0600`); whether it is the certificate's key. */
  keyPresent: boolean;
  keyMode?: string;
  keyMatches?: boolean;
  /** Leaves only: whether the store's CA signed it. */
  signedByCa?: boolean;
  /** What is wrong (empty: usable), each with the fix. */
  problems: string[];
}

/** What {@link inspectCertStore} found. */
export interface CertStoreReport {
  dir: string;
  /** Directory mode (e.g. `0700`), undefined when it does not exist. */
  mode?: string;
  /** The CA (`ca.crt`/`ca.key`), undefined without `ca.crt`. */
  ca?: CertReport;
  /** Every `<name>.crt` other than `ca.crt`, by name. */
  leaves: CertReport[];
  /**
   * Store-wide problems (missing directory or CA, permissions, no `transport.stdio-client` pair
   * and no `ca.key` to issue one), each with the fix.
   */
  problems: string[];
}

/**
 * Reads a cert store without changing anything: the CA (and whether `ca.crt` is a CA
 * certificate: basicConstraints CA:true and, when it has keyUsage, keyCertSign; RFC 5280
 * §4.2.1.9, §4.2.1.3), every leaf (`*.crt`), expiry, whether each key matches its certificate and
 * the CA signed it, the permissions, and whether `serve` could open it (a
 * `transport.stdio-client` pair, or `ca.key` to issue one). Each problem names its fix, which
 * depends on whether `ca.key` is there.
 * @throws CertStoreError when the directory exists but cannot be listed
 */
export async function inspectCertStore(dir: string): Promise<CertStoreReport> {
  const root = path.resolve(dir);
  const report: CertStoreReport = { dir: root, leaves: [], problems: [] };
  let st;
  try {
    st = await fs.stat(root);
  } catch {
    report.problems.push(`${root} does not exist: ${noCaHint(root, dir)}`);
    return report;
  }
  report.mode = octal(st.mode & 0o7777);
  if ((st.mode & 0o022) !== 0) report.problems.push(`${root} is writable by group/others: run chmod go-w ${root}`);
  let names: string[];
  try {
    names = (await fs.readdir(root))
      .filter((f) => f.endsWith(".crt") && !f.startsWith("."))
      .map((f) => f.slice(0, -4))
      .sort();
  } catch (err) {
    throw new CertStoreError(`cannot list ${root}: ${(err as Error).message}`, { cause: err });
  }
  // Readable, as issuing needs it (root reads a file whatever its mode: the attempt decides).
  const haveCaKey = await readRegularFile(path.join(root, "ca.key")).then(
    () => true,
    () => false,
  );
  let caCert: NodeX509Certificate | undefined;
  let caIsCa = true;
  if (names.includes("ca")) {
    report.ca = await inspectOne(root, "ca", undefined, haveCaKey);
    try {
      caCert = new NodeX509Certificate(await readRegularFile(path.join(root, "ca.crt")));
    } catch {
      caCert = undefined;
    }
    if (caCert) {
      if (haveCaKey && report.ca.keyMatches === true) {
        const keyType = caKeyTypeProblem(caCert, root);
        if (keyType !== undefined) report.ca.problems.push(keyType);
      }
      const notCa = await notCaReason(caCert);
      caIsCa = notCa === undefined;
      if (notCa)
        report.ca.problems.push(
          `${path.join(root, "ca.crt")} is not a CA certificate (${notCa}): peers cannot verify certificates against it; copy the orchestrator's ca.crt, not its own certificate`,
        );
    }
  } else {
    report.problems.push(`no ${path.join(root, "ca.crt")}: ${noCaHint(root, dir)}`);
  }
  for (const name of names) if (name !== "ca") report.leaves.push(await inspectOne(root, name, caCert ?? null, haveCaKey));
  // With a ca.crt that is no CA's, its fix comes first: the pair's advice (copy ca.key) could not work.
  if (!haveCaKey && !names.includes(BRIDGE_CERT_NAME) && caIsCa) {
    report.problems.push(`no ${BRIDGE_CERT_NAME} pair and no ca.key to issue one, so serve cannot start with this store: ${issueHint(root, BRIDGE_CERT_NAME, false)}`);
  }
  return report;
}

/** Why `cert` cannot sign certificates (RFC 5280 §4.2.1.9 basicConstraints, §4.2.1.3 keyUsage), or undefined. */
async function notCaReason(cert: NodeX509Certificate): Promise<string | undefined> {
  if (caFlagProblem(cert) === undefined) return undefined;
  const x509 = await loadX509();
  const parsed = new x509.X509Certificate(cert.raw);
  const usages = parsed.getExtension(x509.KeyUsagesExtension);
  if (parsed.getExtension(x509.BasicConstraintsExtension)?.ca === true && usages && (usages.usages & x509.KeyUsageFlags.keyCertSign) === 0) return "keyUsage lacks keyCertSign";
  return "basicConstraints lacks CA:true";
}

async function inspectOne(root: string, name: string, ca: NodeX509Certificate | null | undefined, haveCaKey: boolean): Promise<CertReport> {
  const certFile = path.join(root, `${name}.crt`);
  const keyFile = path.join(root, `${name}.key`);
  const r: CertReport = { name, certFile, keyFile, keyPresent: false, problems: [] };
  let cert: NodeX509Certificate | undefined;
  try {
    cert = new NodeX509Certificate(await readRegularFile(certFile));
    r.subject = cert.subject.replace(/\n/g, ", ");
    r.notAfter = notAfterOf(cert);
    r.expired = isExpired(cert);
    if (r.expired) {
      r.problems.push(
        name === "ca"
          ? `${certFile} expired on ${r.notAfter}: no party can be verified against it; replace it with the orchestrator's current ca.crt (a new CA means new certificates for every party)`
          : `${certFile} expired on ${r.notAfter}: ${issueHint(root, name, haveCaKey)}`,
      );
    }
  } catch (err) {
    r.problems.push(`${certFile} is not a readable PEM certificate (${(err as Error).message})`);
  }
  try {
    const keyPem = await readRegularFile(keyFile);
    r.keyPresent = true;
    r.keyMode = octal(statSync(keyFile).mode & 0o777);
    if ((statSync(keyFile).mode & 0o077) !== 0) r.problems.push(`${keyFile} is accessible by group/others: run chmod 600 ${keyFile}`);
    if (cert) {
      try {
        r.keyMatches = cert.checkPrivateKey(createPrivateKey(keyPem));
      } catch {
        r.keyMatches = false;
      }
      if (!r.keyMatches)
        r.problems.push(name === "ca" ? caKeyMismatch(root) : `${keyFile} is not the key of ${certFile}: copy the matching pair, or ${issueHint(root, name, haveCaKey)}`);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") {
      r.keyPresent = true;
      try {
        r.keyMode = octal(statSync(keyFile).mode & 0o777);
      } catch {
        // gone meanwhile: the problem below still names it
      }
      r.problems.push(
        name === "ca"
          ? `${keyFile} cannot be read (${(err as Error).message}), so no certificate can be issued here (serve, orchestrator and certs init refuse when one must be): make it a readable regular file (chmod 600, owned by the user who runs them), or remove it if this store only trusts the CA`
          : `${keyFile} cannot be read (${(err as Error).message}): make it a readable regular file (chmod 600, owned by the user who runs serve), or ${issueHint(root, name, haveCaKey)}`,
      );
    } else if (name !== "ca") {
      // A CA without its key is normal for a party that only trusts it.
      r.problems.push(`${keyFile} is missing: copy the key that belongs to ${certFile}, or ${issueHint(root, name, haveCaKey)}`);
    }
  }
  if (ca !== undefined && cert) {
    r.signedByCa = ca !== null && cert.verify(ca.publicKey);
    if (!r.signedByCa)
      r.problems.push(`${certFile} is not signed by ${path.join(root, "ca.crt")}, so peers that trust this CA will refuse it: ${notSignedFix(root, name, haveCaKey)}`);
  }
  return r;
}
