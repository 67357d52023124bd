import type { Db } from "../db.js";
import { newId } from "../crypto.js";
import { VaultError } from "./errors.js";
import type { Page } from "./paging.js";
import { cutPage } from "./paging.js";
import type { Roles } from "./roles.js";

/** A principal (user or service account) of an org. Times in milliseconds. */
export interface Principal {
  id: string;
  orgId: string;
  name: string;
  role: string;
  metadata: Record<string, unknown>;
  createdAt: number;
}

interface PrincipalRow {
  rowid: number;
  id: string;
  org_id: string;
  name: string;
  role: string;
  metadata: string;
  created_at: number;
}

/** Fields a PATCH may change; undefined leaves a field as it is. */
export interface PrincipalPatch {
  name?: string | undefined;
  role?: string | undefined;
  /** Replaces the whole metadata object. */
  metadata?: Record<string, unknown> | undefined;
}

export interface PrincipalsDeps {
  db: Db;
  /** Current time, Unix milliseconds. */
  now: () => number;
  roles: Roles;
}

/**
 * Principals of an org (interface section 2 "Principal", decisions.md
 * sections 2 and 6). Synchronous; run changes inside GroupCommit.run(). The
 * caller checks that the org exists.
 */
export class Principals {
  private readonly q;

  constructor(private readonly deps: PrincipalsDeps) {
    const db = deps.db;
    this.q = {
      get: db.prepare<[string, string], PrincipalRow>("SELECT rowid, * FROM principals WHERE org_id = ? AND id = ?"),
      byName: db.prepare<[string, string], { id: string }>("SELECT id FROM principals WHERE org_id = ? AND name = ?"),
      insert: db.prepare<[string, string, string, string, number], PrincipalRow>(
        "INSERT INTO principals (id, org_id, name, role, created_at) VALUES (?, ?, ?, ?, ?) RETURNING rowid, *",
      ),
      update: db.prepare<{ id: string; name: string; role: string; metadata: string }, PrincipalRow>(
        "UPDATE principals SET name = @name, role = @role, metadata = @metadata WHERE id = @id RETURNING rowid, *",
      ),
      page: db.prepare<[string, number, number], PrincipalRow>(
        "SELECT rowid, * FROM principals WHERE org_id = ? AND rowid > ? ORDER BY rowid LIMIT ?",
      ),
      activeKey: db.prepare<[string, number], { one: number }>(
        "SELECT 1 AS one FROM principal_keys WHERE principal_id = ? AND (valid_before IS NULL OR valid_before >= ?) LIMIT 1",
      ),
      removeKeys: db.prepare<[string]>("DELETE FROM principal_keys WHERE principal_id = ?"),
      remove: db.prepare<[string]>("DELETE FROM principals WHERE id = ?"),
    };
  }

  /**
   * Creates a principal.
   * @param name 1-128 characters, already trimmed.
   * @throws VaultError "invalid" (400) when the org has no role `role`;
   *   "conflict" (409) when the org has a principal of this name.
   */
  create(orgId: string, name: string, role: string): Principal {
    this.checkRole(orgId, role);
    this.checkNameFree(orgId, name);
    return toPrincipal(this.q.insert.get(newId("prn_"), orgId, name, role, this.deps.now()) as PrincipalRow);
  }

  /** The principal of the org, or undefined. */
  get(orgId: string, principalId: string): Principal | undefined {
    const row = this.q.get.get(orgId, principalId);
    return row ? toPrincipal(row) : undefined;
  }

  /**
   * The principal of the org.
   * @throws VaultError "not_found" (404).
   */
  require(orgId: string, principalId: string): Principal {
    const principal = this.get(orgId, principalId);
    if (!principal) throw new VaultError("not_found", "principal not found");
    return principal;
  }

  /** One page of the org's principals in creation order; `limit` 1-1000. */
  list(orgId: string, limit: number, afterId = 0): Page<Principal> {
    const { rows, next } = cutPage(this.q.page.all(orgId, afterId, limit + 1), limit, (row) => row.rowid);
    return { items: rows.map(toPrincipal), nextAfterId: next };
  }

  /**
   * Changes a principal's name, role and/or metadata. A new role applies
   * to its keys' next request.
   * @throws VaultError "not_found" (404); "invalid" (400) for an unknown
   *   role; "conflict" (409) when the new name is taken in the org.
   */
  update(orgId: string, principalId: string, patch: PrincipalPatch): Principal {
    const current = this.require(orgId, principalId);
    if (patch.role !== undefined) this.checkRole(orgId, patch.role);
    if (patch.name !== undefined && patch.name !== current.name) this.checkNameFree(orgId, patch.name);
    const row = this.q.update.get({
      id: principalId,
      name: patch.name ?? current.name,
      role: patch.role ?? current.role,
      metadata: JSON.stringify(patch.metadata ?? current.metadata),
    }) as PrincipalRow;
    return toPrincipal(row);
  }

  /**
   * Deletes a principal that has no active key (decisions.md section 6): a
   * key is active while not revoked and its valid_before has not passed.
   * Its keys that have passed valid_before go with it.
   * @throws VaultError "not_found" (404); "conflict" (409) while it has an active key.
   */
  remove(orgId: string, principalId: string): void {
    this.require(orgId, principalId);
    if (this.q.activeKey.get(principalId, this.deps.now())) {
      throw new VaultError("conflict", "the principal has active keys", {
        message: "revoke its keys first; deletes do not cascade",
      });
    }
    this.q.removeKeys.run(principalId);
    this.q.remove.run(principalId);
  }

  private checkRole(orgId: string, role: string): void {
    if (this.deps.roles.lettersOf(orgId, role) === undefined) {
      throw new VaultError("invalid", "role must name a built-in role or a custom role of this organization");
    }
  }

  private checkNameFree(orgId: string, name: string): void {
    if (this.q.byName.get(orgId, name)) throw new VaultError("conflict", "a principal with this name exists in the organization");
  }
}

function toPrincipal(row: PrincipalRow): Principal {
  return {
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    role: row.role,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    createdAt: row.created_at,
  };
}
