/**
 * What can go wrong in the domain, without HTTP: http/errors.ts maps each
 * kind to its status in the one error handler (docs/contract.md §13).
 *
 * invalid 400 · unauthorized 401 · forbidden 403 · not_found 404 ·
 * conflict 409 · gone 410 · too_large 413 · limit 402 · full 429 (the
 * anonymous links' caps: docs/share.md, "Anonymous links")
 *
 * How the domain fails (docs/architecture.md "How the domain fails"), one
 * rule for every method of src/domain:
 * - a refusal is a thrown VaultError(kind, error, {message}); a method's
 *   return type is only its success value (no `{kind}` unions, status
 *   strings, booleans or undefined for "refused");
 * - a refused unit of work changes nothing: the unit of work rolls back
 *   whatever ran before the throw. The one refusal that must leave a change
 *   behind, a secret found past its TTL, is thrown as PastTtl
 *   (domain/secrets/model.ts, kind not_found) and its caller expires the secret in
 *   a unit of its own (SecretLifecycle.expireKey) before answering;
 * - a query answers absence with undefined only where its callers branch
 *   on it: `get`/`peek`-style lookups by id, `Roles.lettersOf`, and the
 *   token lookups, where an unknown token belongs to no resolver (auth.ts
 *   then answers 401 `invalid token`) while an expired or not-yet-valid one
 *   is a refusal ("unauthorized", with its own text). A verb that needs the
 *   thing uses the throwing twin (`require`) instead.
 */
export type VaultErrorKind = "invalid" | "unauthorized" | "forbidden" | "not_found" | "conflict" | "gone" | "too_large" | "limit" | "full";

/** A domain rule refused the operation; nothing was changed. */
export class VaultError extends Error {
  constructor(
    readonly kind: VaultErrorKind,
    readonly error: string,
    readonly options: { message?: string } = {},
  ) {
    super(error);
    this.name = "VaultError";
  }
}
