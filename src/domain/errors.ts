/**
 * What can go wrong in the domain, without HTTP: errors.ts maps each kind to
 * its status in the one error handler (docs/contract.md §13).
 *
 * invalid 400 · unauthorized 401 · forbidden 403 · not_found 404 ·
 * conflict 409 · gone 410 · too_large 413 · limit 402
 */
export type VaultErrorKind = "invalid" | "unauthorized" | "forbidden" | "not_found" | "conflict" | "gone" | "too_large" | "limit";

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
