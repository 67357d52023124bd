import { createPublicKey, ECDH } from "node:crypto";

/** A P-256 public key as a request stores it: the 65-byte uncompressed point, base64url (87 characters). */
export const P256_POINT_B64U = /^[A-Za-z0-9_-]{87}$/;

/** The 65-byte uncompressed point of a key node:crypto parsed, checked to be P-256. */
function pointOfKeyObject(key: ReturnType<typeof createPublicKey>): Buffer | undefined {
  if (key.asymmetricKeyType !== "ec") return undefined;
  const jwk = key.export({ format: "jwk" });
  if (jwk.crv !== "P-256" || typeof jwk.x !== "string" || typeof jwk.y !== "string") return undefined;
  return Buffer.concat([Buffer.of(4), Buffer.from(jwk.x, "base64url"), Buffer.from(jwk.y, "base64url")]);
}

/** A raw point (65 bytes uncompressed or 33 compressed), checked to lie on P-256, as the uncompressed point. */
function checkedPoint(raw: Buffer): Buffer | undefined {
  if (!((raw.length === 65 && raw[0] === 4) || (raw.length === 33 && (raw[0] === 2 || raw[0] === 3)))) return undefined;
  try {
    // convertKey refuses a point that is not on the curve.
    return ECDH.convertKey(raw, "prime256v1", undefined, undefined, "uncompressed") as Buffer;
  } catch {
    return undefined;
  }
}

/**
 * An asker's public key as given to `POST /requests` (docs/requests.md,
 * "The envelope"), in the one form the vault stores and answers: the
 * uncompressed P-256 point (SEC 1), base64url without padding. Taken as
 * given: that point (or the 33-byte compressed one) in base64url or
 * base64; an SPKI public key in PEM or base64 DER; or a JWK object
 * (`{kty: "EC", crv: "P-256", x, y}`), as WebCrypto exports one. Every form is
 * checked to be a point of P-256.
 * @returns the point in base64url (87 characters), or undefined when the
 *   input is none of these, or not a P-256 point.
 */
export function normalizeP256PublicKey(input: unknown): string | undefined {
  try {
    if (typeof input === "object" && input !== null && !Array.isArray(input)) {
      const jwk = input as Record<string, unknown>;
      if (jwk.kty !== "EC" || jwk.crv !== "P-256" || typeof jwk.x !== "string" || typeof jwk.y !== "string" || "d" in jwk) return undefined;
      const point = pointOfKeyObject(createPublicKey({ key: { kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y }, format: "jwk" }));
      return point === undefined ? undefined : checkedPoint(point)?.toString("base64url");
    }
    if (typeof input !== "string" || input.length === 0 || input.length > 4096) return undefined;
    const text = input.trim();
    if (text.startsWith("-----BEGIN PUBLIC KEY-----")) return pointOfKeyObject(createPublicKey(text))?.toString("base64url");
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return undefined;
    const bytes = Buffer.from(text.replace(/-/g, "+").replace(/_/g, "/"), "base64");
    const raw = checkedPoint(bytes);
    if (raw !== undefined) return raw.toString("base64url");
    // An SPKI DER in base64 (what WebCrypto's exportKey("spki") gives).
    if (bytes.length > 65 && bytes[0] === 0x30) return pointOfKeyObject(createPublicKey({ key: bytes, format: "der", type: "spki" }))?.toString("base64url");
    return undefined;
  } catch {
    return undefined;
  }
}
