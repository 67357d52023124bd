/**
 * Whether `text` is an answer envelope as docs/requests.md ("The envelope")
 * fixes it, checked before the vault stores an answer, so that a client's
 * mistake (a plaintext posted as the answer) is refused (400) instead of
 * stored: a JSON object of exactly `v` (1), `alg` ("ECDH-P256+A256GCM"),
 * `epk` (a 65-byte uncompressed point in base64url, 87 characters), `iv`
 * (12 bytes, 16 characters) and `ct` (the ciphertext then its 16-byte tag,
 * at least 22 characters), all base64url without padding. The shape only:
 * what it encrypts is the asker's to open.
 */
export function isAnswerEnvelope(text: string): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return false;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return false;
  const e = parsed as Record<string, unknown>;
  if (Object.keys(e).sort().join(",") !== "alg,ct,epk,iv,v") return false;
  return (
    e.v === 1 &&
    e.alg === "ECDH-P256+A256GCM" &&
    typeof e.epk === "string" &&
    /^B[A-Za-z0-9_-]{86}$/.test(e.epk) &&
    typeof e.iv === "string" &&
    /^[A-Za-z0-9_-]{16}$/.test(e.iv) &&
    typeof e.ct === "string" &&
    /^[A-Za-z0-9_-]{22,}$/.test(e.ct)
  );
}
