/**
 * Retry tokens and packets (src/quic/engine/retry.ts; RFC 9000 §8.1.2, §17.2.5; RFC 9001 §5.8).
 */
import { createDecipheriv, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { buildRetry, RETRY_TOKEN_LIFETIME_MS, validateRetryToken } from "../../src/quic/engine/retry.js";

const secret = randomBytes(32);
const odcid = randomBytes(8);
const clientScid = randomBytes(8);
const newScid = randomBytes(20);
const now = 1_700_000_000_000;

/** Splits a Retry packet into its fields. */
function parse(p: Buffer): { version: number; dcid: Buffer; scid: Buffer; token: Buffer; tag: Buffer; body: Buffer } {
  let o = 5;
  const dcid = p.subarray(o + 1, o + 1 + p[o]!);
  o += 1 + dcid.length;
  const scid = p.subarray(o + 1, o + 1 + p[o]!);
  o += 1 + scid.length;
  return { version: p.readUInt32BE(1), dcid, scid, token: p.subarray(o, p.length - 16), tag: p.subarray(p.length - 16), body: p.subarray(0, p.length - 16) };
}

describe("QUIC Retry", () => {
  const packet = buildRetry(secret, 1, odcid, clientScid, newScid, "127.0.0.1", 4433, now);
  const f = parse(packet);

  it("is a v1 long-header Retry to the client's ID, from the new ID, with an integrity tag over the pseudo-packet", () => {
    expect(packet[0]! & 0xf0).toBe(0xf0);
    expect(f.version).toBe(1);
    expect(f.dcid.equals(clientScid)).toBe(true);
    expect(f.scid.equals(newScid)).toBe(true);
    const decipher = createDecipheriv("aes-128-gcm", Buffer.from("be0c690b9f66575a1d766b54e368c84e", "hex"), Buffer.from("461599d35d632bf2239825bb", "hex"));
    decipher.setAAD(Buffer.concat([Buffer.from([odcid.length]), odcid, f.body]));
    decipher.setAuthTag(f.tag);
    expect(() => decipher.final()).not.toThrow();
  });

  it("its token gives back the original ID, only from the same address and port, only while fresh, only unaltered", () => {
    expect(Buffer.from(validateRetryToken(secret, f.token, "127.0.0.1", 4433, now + 1)!).equals(odcid)).toBe(true);
    expect(validateRetryToken(secret, f.token, "127.0.0.2", 4433, now)).toBeUndefined();
    expect(validateRetryToken(secret, f.token, "127.0.0.1", 4434, now)).toBeUndefined();
    expect(validateRetryToken(secret, f.token, "127.0.0.1", 4433, now + RETRY_TOKEN_LIFETIME_MS + 1)).toBeUndefined();
    expect(validateRetryToken(randomBytes(32), f.token, "127.0.0.1", 4433, now)).toBeUndefined();
    const forged = Buffer.from(f.token);
    forged[10]! ^= 1;
    expect(validateRetryToken(secret, forged, "127.0.0.1", 4433, now)).toBeUndefined();
    expect(validateRetryToken(secret, f.token.subarray(0, 20), "127.0.0.1", 4433, now)).toBeUndefined();
  });
});
