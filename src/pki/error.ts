/**
 * The error of the cert store (src/pki/): a failure to read, create or validate it; the message
 * names the file involved and the fix.
 */
export class CertStoreError extends Error {
  override readonly name = "CertStoreError";
  /** `"no-ca"`: the store has no `ca.crt` and was not allowed to create one. */
  code: "no-ca" | undefined;
}
