/**
 * QUIC Retry (RFC 9000 §8.1.2, §17.2.5): address validation without server state. A server
 * answers a client Initial with a Retry packet carrying a token; the client repeats its
 * Initial with that token, which proves it receives at its address. The quiche binding has no
 * `retry()`, so the packet and its integrity tag (RFC 9001 §5.8) are built here.
 *
 * Token (opaque to the client): `issued (u64 BE ms) | odcid length (u8) | odcid | tag`, where
 * tag = HMAC-SHA256(secret, issued | odcid | client address | client port)[0..16]. Valid for
 * {@link RETRY_TOKEN_LIFETIME_MS}, from the address it was sent to only.
 */
import { createCipheriv, createHmac, randomFillSync, timingSafeEqual } from "node:crypto";

/** How long a Retry token is accepted (ms). */
export const RETRY_TOKEN_LIFETIME_MS = 10_000;

/** RFC 9001 §5.8: the fixed AEAD key and nonce of the Retry integrity tag (QUIC version 1). */
const RETRY_KEY = Buffer.from("be0c690b9f66575a1d766b54e368c84e", "hex");
const RETRY_NONCE = Buffer.from("461599d35d632bf2239825bb", "hex");
const TAG_BYTES = 16;

function tokenTag(secret: Uint8Array, issued: Buffer, odcid: Uint8Array, host: string, port: number): Buffer {
  return createHmac("sha256", secret).update(issued).update(odcid).update(`${host}|${port}`).digest().subarray(0, TAG_BYTES);
}

/**
 * A Retry packet answering a client Initial (version `version`, client connection IDs `dcid`
 * = the original destination ID and `scid`), telling it to use `newScid` and `token`.
 */
export function buildRetry(secret: Uint8Array, version: number, dcid: Uint8Array, scid: Uint8Array, newScid: Uint8Array, host: string, port: number, now = Date.now()): Buffer {
  const issued = Buffer.alloc(8);
  issued.writeBigUInt64BE(BigInt(now));
  const token = Buffer.concat([issued, Buffer.from([dcid.byteLength]), dcid, tokenTag(secret, issued, dcid, host, port)]);
  const first = Buffer.alloc(1);
  randomFillSync(first);
  const versionBytes = Buffer.alloc(4);
  versionBytes.writeUInt32BE(version >>> 0);
  const packet = Buffer.concat([
    Buffer.from([0xf0 | (first[0]! & 0x0f)]), // long header, fixed bit, type Retry (0b11)
    versionBytes,
    Buffer.from([scid.byteLength]),
    scid, // the client's source ID becomes the destination
    Buffer.from([newScid.byteLength]),
    newScid,
    token,
  ]);
  const cipher = createCipheriv("aes-128-gcm", RETRY_KEY, RETRY_NONCE);
  cipher.setAAD(Buffer.concat([Buffer.from([dcid.byteLength]), dcid, packet]));
  cipher.final();
  return Buffer.concat([packet, cipher.getAuthTag()]);
}

/**
 * The original destination connection ID carried by a valid token from `host`:`port`, or
 * `undefined` when the token is malformed, forged, expired or from another address.
 */
export function validateRetryToken(secret: Uint8Array, token: Uint8Array, host: string, port: number, now = Date.now()): Uint8Array | undefined {
  const t = Buffer.from(token.buffer, token.byteOffset, token.byteLength);
  if (t.byteLength < 9) return undefined;
  const odcidLen = t[8]!;
  if (odcidLen > 20 || t.byteLength !== 9 + odcidLen + TAG_BYTES) return undefined;
  const issued = t.subarray(0, 8);
  const age = now - Number(issued.readBigUInt64BE());
  if (age < 0 || age > RETRY_TOKEN_LIFETIME_MS) return undefined;
  const odcid = t.subarray(9, 9 + odcidLen);
  if (!timingSafeEqual(t.subarray(9 + odcidLen), tokenTag(secret, issued, odcid, host, port))) return undefined;
  return Uint8Array.from(odcid);
}
