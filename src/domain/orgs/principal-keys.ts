import { hashToken, newId, newToken } from "../../crypto/tokens.js";
import { VaultError } from "../../model/errors.js";
import type { Origin } from "../events.js";
import type { Page } from "../paging.js";
import { cutPage } from "../paging.js";
import type { PrincipalsDeps } from "./principals.js";
import type { Positioned } from "../../store/orgs.js";
import type { Work } from "../../store/work.js";
import type { PrincipalKey } from "../../model/records.js";
export type { PrincipalKey } from "../../model/records.js";

/** What a new key is made from. Times in milliseconds. */
export interface NewKeyInput {
  name: string;
  validAfter?: number | undefined;
  validBefore?: number | undefined;
}

/** A `vpk_` token that is valid now: its key, principal, org and role. */
export interface ValidPrincipalKey {
  keyId: string;
  principalId: string;
  orgId: string;
  role: string;
  /** The role's permission letters now ("" if the role vanished). */
  letters: string;
}

/** The same as a principal's: the clock, the roles and the audit log (principals.ts). */
export type PrincipalKeysDeps = PrincipalsDeps;

/**
 * Principal keys (docs/contract.md
 * §4, §6, §8 and §9): `vpk_` tokens shown once and stored as
 * their SHA-256; usable within [valid_after, valid_before]; revoking deletes
 * the row, effective on the next request. Every method takes the unit of work's
 * handle (store/orgs.ts has the SQL). The caller checks that the principal exists.
 */
export class PrincipalKeys {
  constructor(private readonly deps: PrincipalKeysDeps) {}

  /**
   * Makes a key for a principal of an org. A principal may have any number
   * of keys (docs/contract.md §5). Audit: `key.created` with the key id, in
   * the org's log (docs/contract.md §11).
   *
   * A key made by a principal key (POST /me/keys) never outlives the key
   * that makes it, as scoped keys already do (docs/contract.md §8): its
   * valid_before is min(the requested one or none, the creator's), so a key
   * valid for one hour cannot make a key that never expires. The creator is
   * recorded as the new key's parent: revoking it revokes the new key too
   * (revoke()). The principal's keys are locked first (lockKeys), so a
   * creator revoked meanwhile mints nothing.
   *
   * @param creatorKeyId the principal key making it (POST /me/keys); undefined
   *   when the master key makes it (no cap, no parent).
   * @returns the summary and the `vpk_` token: the only time it exists in clear.
   * @throws VaultError "invalid" (400) when valid_before (requested, or the
   *   creator's) is not after both now and valid_after (docs/orgs.md);
   *   "unauthorized" (401) when the creator was revoked since its request
   *   was authenticated.
   */
  async create(
    w: Work,
    orgId: string,
    principalId: string,
    input: NewKeyInput,
    origin: Origin,
    creatorKeyId?: string,
  ): Promise<{ key: PrincipalKey; token: string }> {
    const now = this.deps.now();
    let validBefore = input.validBefore;
    if (creatorKeyId !== undefined) {
      await w.principalKeys.lockKeys(principalId);
      const cap = await w.principalKeys.validBefore(creatorKeyId);
      if (cap === undefined) throw new VaultError("unauthorized", "invalid token");
      if (cap !== null && (validBefore === undefined || validBefore > cap)) validBefore = cap;
    }
    if (validBefore !== undefined) {
      if (validBefore <= now) throw new VaultError("invalid", "valid_before must be in the future");
      if (input.validAfter !== undefined && validBefore <= input.validAfter) {
        throw new VaultError(
          "invalid",
          validBefore === input.validBefore
            ? "valid_before must be after valid_after"
            : "valid_after must be before the creating key's valid_before",
        );
      }
    }
    const token = newToken("vpk_");
    const row = await w.principalKeys.insert(
      {
        id: newId("pk_"),
        principalId,
        orgId,
        name: input.name,
        validAfter: input.validAfter ?? null,
        validBefore: validBefore ?? null,
        createdAt: now,
        parentKeyId: creatorKeyId ?? null,
      },
      hashToken(token),
    );
    await this.deps.audit.recordFor(w, origin, orgId, "key.created", row.id);
    return { key: withoutSeq(row), token };
  }

  /** One page of a principal's keys in creation order; `limit` 1-1000. Revoked keys are gone. */
  async list(w: Work, principalId: string, limit: number, afterId = 0): Promise<Page<PrincipalKey>> {
    const { rows, next } = cutPage(await w.principalKeys.page(principalId, afterId, limit + 1), limit, (row) => row.seq);
    return { items: rows.map(withoutSeq), nextAfterId: next };
  }

  /** All of a principal's keys (for `/me`), in creation order. */
  async all(w: Work, principalId: string): Promise<PrincipalKey[]> {
    return (await w.principalKeys.page(principalId, 0, null)).map(withoutSeq);
  }

  /**
   * Revokes (deletes) one of a principal's keys and every key minted from
   * it, transitively (children, grandchildren, ...: docs/orgs.md "Principal
   * keys"), in this one transaction: each token gets 401 from the next
   * request on. Audit: `key.deleted` with the key id, in the org's log, for
   * the key and then for each descendant (oldest first), all with `origin`.
   * @throws VaultError "not_found" (404) when the principal has no such key.
   */
  async revoke(w: Work, principalId: string, keyId: string, origin: Origin): Promise<void> {
    await w.principalKeys.lockKeys(principalId);
    const row = await w.principalKeys.get(principalId, keyId);
    if (!row) throw new VaultError("not_found", "key not found");
    const revoked = [keyId, ...(await w.principalKeys.descendants(keyId))];
    for (const id of revoked) {
      await w.principalKeys.remove(id);
      await this.deps.audit.recordFor(w, origin, row.orgId, "key.deleted", id);
    }
  }

  /**
   * Checks an `allowed_keys` list (docs/contract.md §8): every id must
   * name an existing principal key of the org.
   * @throws VaultError "invalid" (400) naming no id (never echoes input).
   */
  async checkAllowedKeys(w: Work, orgId: string, keyIds: readonly string[]): Promise<void> {
    for (const id of keyIds) {
      if (!(await w.principalKeys.inOrg(orgId, id))) {
        throw new VaultError("invalid", "allowed_keys must list principal key ids of this organization");
      }
    }
  }

  /**
   * Looks a token up by its SHA-256 and checks its validity window against
   * now (docs/orgs.md "Principal keys"). The role's letters are read now,
   * so role changes apply at once. A token no key has is not a refusal
   * here: auth.ts answers 401 `invalid token` when no resolver knows it.
   * @returns the key's principal and role, or undefined for an unknown token.
   * @throws VaultError "unauthorized" (401): `this key is not valid yet`
   *   before valid_after, `this key has expired` after valid_before.
   */
  async lookup(w: Work, token: string): Promise<ValidPrincipalKey | undefined> {
    const row = await w.principalKeys.byTokenHash(hashToken(token));
    if (!row) return undefined;
    const now = this.deps.now();
    if (row.validAfter !== null && now < row.validAfter) throw new VaultError("unauthorized", "this key is not valid yet");
    if (row.validBefore !== null && now > row.validBefore) throw new VaultError("unauthorized", "this key has expired");
    return {
      keyId: row.id,
      principalId: row.principalId,
      orgId: row.orgId,
      role: row.role,
      letters: (await this.deps.roles.lettersOf(w, row.orgId, row.role)) ?? "",
    };
  }
}

/** A stored key without its list position. */
function withoutSeq(row: Positioned<PrincipalKey>): PrincipalKey {
  const { seq: _seq, ...key } = row;
  return key;
}
