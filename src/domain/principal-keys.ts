import type { Db } from "../db.js";
import { hashToken, newId, newToken } from "../crypto.js";
import { VaultError } from "./errors.js";
import type { Origin } from "./events.js";
import type { Page } from "./paging.js";
import { cutPage } from "./paging.js";
import type { Roles } from "./roles.js";

/** A principal key's summary, never its token. Times in milliseconds. */
export interface PrincipalKey {
  id: string;
  principalId: string;
  orgId: string;
  name: string;
  validAfter: number | null;
  validBefore: number | null;
  createdAt: number;
}

interface KeyRow {
  rowid: number;
  id: string;
  principal_id: string;
  org_id: string;
  name: string;
  token_hash: string;
  valid_after: number | null;
  valid_before: number | null;
  created_at: number;
}

/** What a new key is made from. Times in milliseconds. */
export interface NewKeyInput {
  name: string;
  validAfter?: number | undefined;
  validBefore?: number | undefined;
}

/** The result of looking a `vpk_` token up. */
export type PrincipalKeyLookup =
  | { kind: "unknown" }
  | { kind: "not_yet_valid" }
  | { kind: "expired" }
  | {
      kind: "ok";
      keyId: string;
      principalId: string;
      orgId: string;
      role: string;
      /** The role's permission letters now ("" if the role vanished). */
      letters: string;
    };

/** Where key changes are recorded: the audit log (domain/audit.ts AuditLog.recordFor). */
export interface KeyAudit {
  recordFor(origin: Origin, scope: string, action: string, key: string | null): void;
}

export interface PrincipalKeysDeps {
  db: Db;
  /** Current time, Unix milliseconds. */
  now: () => number;
  roles: Roles;
  /** Records `key.created` / `key.deleted` in the org's audit log, in the change's transaction. */
  audit?: KeyAudit | undefined;
}

/**
 * Principal keys (interface section 2 "Principal key", sections 3 and 5.9,
 * decisions.md sections 2, 5 and 6): `vpk_` tokens shown once and stored as
 * their SHA-256; usable within [valid_after, valid_before]; revoking deletes
 * the row, effective on the next request. Synchronous; run changes inside
 * GroupCommit.run(). The caller checks that the principal exists.
 */
export class PrincipalKeys {
  private readonly q;

  constructor(private readonly deps: PrincipalKeysDeps) {
    const db = deps.db;
    this.q = {
      insert: db.prepare<
        { id: string; principal_id: string; org_id: string; name: string; token_hash: string; valid_after: number | null; valid_before: number | null; now: number },
        KeyRow
      >(
        `INSERT INTO principal_keys (id, principal_id, org_id, name, token_hash, valid_after, valid_before, created_at)
         VALUES (@id, @principal_id, @org_id, @name, @token_hash, @valid_after, @valid_before, @now) RETURNING rowid, *`,
      ),
      page: db.prepare<[string, number, number], KeyRow>(
        "SELECT rowid, * FROM principal_keys WHERE principal_id = ? AND rowid > ? ORDER BY rowid LIMIT ?",
      ),
      get: db.prepare<[string, string], KeyRow>("SELECT rowid, * FROM principal_keys WHERE principal_id = ? AND id = ?"),
      inOrg: db.prepare<[string, string], { one: number }>(
        "SELECT 1 AS one FROM principal_keys WHERE org_id = ? AND id = ?",
      ),
      remove: db.prepare<[string]>("DELETE FROM principal_keys WHERE id = ?"),
      validBefore: db.prepare<[string], { valid_before: number | null }>("SELECT valid_before FROM principal_keys WHERE id = ?"),
      byHash: db.prepare<[string], KeyRow & { role: string }>(
        `SELECT k.rowid, k.*, p.role FROM principal_keys k JOIN principals p ON p.id = k.principal_id
         WHERE k.token_hash = ?`,
      ),
    };
  }

  /**
   * Makes a key for a principal of an org. A principal may have any number
   * of keys (interface section 8). Audit: `key.created` with the key id, in
   * the org's log (decisions.md section 8).
   *
   * A key made by a principal key (POST /me/keys) never outlives the key
   * that makes it, as scoped keys already do (decisions.md section 5): its
   * valid_before is min(the requested one or none, the creator's), so a key
   * valid for one hour cannot make a key that never expires.
   *
   * @param creatorKeyId the principal key making it (POST /me/keys); undefined
   *   when an org admin or the master key makes it (no cap).
   * @returns the summary and the `vpk_` token: the only time it exists in clear.
   * @throws VaultError "invalid" (400) when valid_before (requested, or the
   *   creator's) is not after both now and valid_after (decisions.md section 6).
   */
  create(
    orgId: string,
    principalId: string,
    input: NewKeyInput,
    origin: Origin,
    creatorKeyId?: string,
  ): { key: PrincipalKey; token: string } {
    const now = this.deps.now();
    let validBefore = input.validBefore;
    if (creatorKeyId !== undefined) {
      const cap = this.q.validBefore.get(creatorKeyId)?.valid_before ?? null;
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
    const row = this.q.insert.get({
      id: newId("pk_"),
      principal_id: principalId,
      org_id: orgId,
      name: input.name,
      token_hash: hashToken(token),
      valid_after: input.validAfter ?? null,
      valid_before: validBefore ?? null,
      now,
    }) as KeyRow;
    this.deps.audit?.recordFor(origin, orgId, "key.created", row.id);
    return { key: toPrincipalKey(row), token };
  }

  /** One page of a principal's keys in creation order; `limit` 1-1000. Revoked keys are gone. */
  list(principalId: string, limit: number, afterId = 0): Page<PrincipalKey> {
    const { rows, next } = cutPage(this.q.page.all(principalId, afterId, limit + 1), limit, (row) => row.rowid);
    return { items: rows.map(toPrincipalKey), nextAfterId: next };
  }

  /** All of a principal's keys (for `/me`), in creation order. */
  all(principalId: string): PrincipalKey[] {
    return this.q.page.all(principalId, 0, -1).map(toPrincipalKey);
  }

  /**
   * Revokes (deletes) one of a principal's keys; the token gets 401 from
   * the next request on. Audit: `key.deleted` with the key id, in the org's log.
   * @throws VaultError "not_found" (404) when the principal has no such key.
   */
  revoke(principalId: string, keyId: string, origin: Origin): void {
    const row = this.q.get.get(principalId, keyId);
    if (!row) throw new VaultError("not_found", "key not found");
    this.q.remove.run(keyId);
    this.deps.audit?.recordFor(origin, row.org_id, "key.deleted", keyId);
  }

  /**
   * Checks an `allowed_keys` list (decisions.md section 5): every id must
   * name an existing principal key of the org.
   * @throws VaultError "invalid" (400) naming no id (never echoes input).
   */
  checkAllowedKeys(orgId: string, keyIds: readonly string[]): void {
    for (const id of keyIds) {
      if (!this.q.inOrg.get(orgId, id)) {
        throw new VaultError("invalid", "allowed_keys must list principal key ids of this organization");
      }
    }
  }

  /**
   * Looks a token up by its SHA-256 and checks its validity window against
   * now: before valid_after is not_yet_valid, after valid_before expired.
   * The role's letters are read now, so role changes apply at once.
   */
  lookup(token: string): PrincipalKeyLookup {
    const row = this.q.byHash.get(hashToken(token));
    if (!row) return { kind: "unknown" };
    const now = this.deps.now();
    if (row.valid_after !== null && now < row.valid_after) return { kind: "not_yet_valid" };
    if (row.valid_before !== null && now > row.valid_before) return { kind: "expired" };
    return {
      kind: "ok",
      keyId: row.id,
      principalId: row.principal_id,
      orgId: row.org_id,
      role: row.role,
      letters: this.deps.roles.lettersOf(row.org_id, row.role) ?? "",
    };
  }
}

function toPrincipalKey(row: KeyRow): PrincipalKey {
  return {
    id: row.id,
    principalId: row.principal_id,
    orgId: row.org_id,
    name: row.name,
    validAfter: row.valid_after,
    validBefore: row.valid_before,
    createdAt: row.created_at,
  };
}
