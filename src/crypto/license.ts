import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from "node:crypto";
import type { KeyObject } from "node:crypto";

/** Active secrets allowed without a valid license (docs/contract.md §12). */
export const FREE_TIER_LIMIT = 100;

/** The license payload (docs/contract.md §12). `iat`, `exp`: Unix seconds. */
export interface LicensePayload {
  sub: string;
  iat: number;
  exp: number | null;
}

export type LicenseStatus =
  | { valid: true; subject: string; expiresAt: number | null }
  | { valid: false; reason: string };

/**
 * Parses VAULT_LICENSE_PUBLIC_KEY: base64 (or base64url) of the 32 raw
 * Ed25519 bytes, or a PEM SPKI public key.
 * @returns the key, or undefined when the text is neither.
 */
export function parseLicensePublicKey(text: string): KeyObject | undefined {
  const s = text.trim();
  try {
    if (s.startsWith("-----BEGIN")) {
      const key = createPublicKey(s);
      return key.asymmetricKeyType === "ed25519" ? key : undefined;
    }
    const raw = Buffer.from(s.replace(/-/g, "+").replace(/_/g, "/"), "base64");
    if (raw.length !== 32 || !/^[A-Za-z0-9+/_-]{43}=?$/.test(s)) return undefined;
    return createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") }, format: "jwk" });
  } catch {
    return undefined;
  }
}

/**
 * Checks a license token `base64url(payload) "." base64url(signature)`:
 * the Ed25519 signature over the ASCII of the first part must verify with
 * `publicKey`, and `exp` must be null or after `nowMs` (docs/contract.md §12).
 * @param nowMs current time, Unix milliseconds.
 * @returns why it is invalid, or its subject and expiry (seconds).
 */
export function verifyLicense(token: string | undefined, publicKey: KeyObject | undefined, nowMs: number): LicenseStatus {
  if (token === undefined || token === "") return { valid: false, reason: "no VAULT_LICENSE_KEY is set" };
  if (publicKey === undefined) return { valid: false, reason: "VAULT_LICENSE_PUBLIC_KEY is not set, so the license cannot be checked" };
  const parts = token.trim().split(".");
  if (parts.length !== 2 || !parts[0] || !parts[1]) return { valid: false, reason: "the license key is not of the form payload.signature" };
  const [body, signature] = parts as [string, string];
  let ok = false;
  try {
    ok = verify(null, Buffer.from(body, "ascii"), publicKey, Buffer.from(signature, "base64url"));
  } catch {
    ok = false;
  }
  if (!ok) return { valid: false, reason: "the license signature does not verify with VAULT_LICENSE_PUBLIC_KEY" };
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  } catch {
    return { valid: false, reason: "the license payload is not JSON" };
  }
  if (!isPayload(payload)) return { valid: false, reason: "the license payload lacks sub, iat or exp" };
  if (payload.exp !== null && payload.exp * 1000 <= nowMs) return { valid: false, reason: "the license has expired" };
  return { valid: true, subject: payload.sub, expiresAt: payload.exp };
}

function isPayload(p: unknown): p is LicensePayload {
  if (p === null || typeof p !== "object") return false;
  const o = p as Record<string, unknown>;
  return (
    typeof o.sub === "string" &&
    Number.isInteger(o.iat) &&
    (o.exp === null || Number.isInteger(o.exp))
  );
}

/**
 * A new Ed25519 key pair for issuing licenses.
 * @returns the private key as PKCS#8 PEM (keep it secret) and the public key
 *   as base64 of its 32 raw bytes (the value of VAULT_LICENSE_PUBLIC_KEY).
 */
export function generateLicenseKeyPair(): { privateKeyPem: string; publicKeyBase64: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const jwk = publicKey.export({ format: "jwk" });
  return {
    privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    publicKeyBase64: Buffer.from(jwk.x as string, "base64url").toString("base64"),
  };
}

/**
 * Signs a license token.
 * @param privateKeyPem Ed25519 private key, PEM.
 * @param expires Unix seconds, or null for a license that never expires.
 * @param nowMs issue time, Unix milliseconds (becomes `iat` in seconds).
 * @throws Error when the key is not an Ed25519 private key.
 */
export function issueLicense(privateKeyPem: string, subject: string, expires: number | null, nowMs: number): string {
  const key = createPrivateKey(privateKeyPem);
  if (key.asymmetricKeyType !== "ed25519") throw new Error("the private key is not an Ed25519 key");
  const payload: LicensePayload = { sub: subject, iat: Math.floor(nowMs / 1000), exp: expires };
  const body = Buffer.from(JSON.stringify(payload), "utf8").toString("base64url");
  const signature = sign(null, Buffer.from(body, "ascii"), key).toString("base64url");
  return `${body}.${signature}`;
}
