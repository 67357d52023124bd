import type { Db } from "./db.js";
import { VaultError } from "../../domain/errors.js";
import type { Org } from "../../domain/orgs.js";
import type { Principal } from "../../domain/principals.js";
import type { PrincipalKey } from "../../domain/principal-keys.js";
import type {
  OrgDependents,
  OrgStore,
  Positioned,
  PrincipalKeyStore,
  PrincipalKeyWithRole,
  PrincipalStore,
  RoleRecord,
  RoleStore,
} from "../orgs.js";
import { toOrgRecord, toPrincipalKeyRecord, toPrincipalRecord, toRoleRecord } from "../rows.js";
import type { OrgRow, PrincipalKeyRow, PrincipalRow, RoleRow } from "../rows.js";

/** Runs an insert or update, turning a unique-constraint failure into a 409 with `message`. */
function unique<T>(message: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if ((err as { code?: unknown }).code === "SQLITE_CONSTRAINT_UNIQUE") throw new VaultError("conflict", message);
    throw err;
  }
}

/** The SQLite `orgs` store; `seq` is the rowid. */
export class SqliteOrgStore implements OrgStore {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      byId: db.prepare<[string], OrgRow>("SELECT rowid AS seq, * FROM orgs WHERE id = ?"),
      byName: db.prepare<[string], { id: string }>("SELECT id FROM orgs WHERE name = ?"),
      insert: db.prepare<[string, string, string, number], OrgRow>(
        "INSERT INTO orgs (id, name, metadata, created_at) VALUES (?, ?, ?, ?) RETURNING rowid AS seq, *",
      ),
      page: db.prepare<[number, number], OrgRow>("SELECT rowid AS seq, * FROM orgs WHERE rowid > ? ORDER BY rowid LIMIT ?"),
      principal: db.prepare<[string], { one: number }>("SELECT 1 AS one FROM principals WHERE org_id = ? LIMIT 1"),
      customRole: db.prepare<[string], { one: number }>("SELECT 1 AS one FROM roles WHERE org_id = ? LIMIT 1"),
      liveSecret: db.prepare<[string, number], { one: number }>(
        `SELECT 1 AS one FROM secrets WHERE scope = ? AND state IN ('active', 'sealed')
         AND (expires_at IS NULL OR expires_at > ?) LIMIT 1`,
      ),
      anySecretRow: db.prepare<[string], { one: number }>("SELECT 1 AS one FROM secrets WHERE scope = ? LIMIT 1"),
      webhook: db.prepare<[string], { one: number }>("SELECT 1 AS one FROM webhooks WHERE org_id = ? LIMIT 1"),
      remove: db.prepare<[string]>("DELETE FROM orgs WHERE id = ?"),
    };
  }

  byId(id: string): Positioned<Org> | undefined {
    const row = this.q.byId.get(id);
    return row === undefined ? undefined : toOrgRecord(row);
  }

  nameTaken(name: string): boolean {
    return this.q.byName.get(name) !== undefined;
  }

  insert(org: Org): Positioned<Org> {
    return unique("an organization with this name exists", () =>
      toOrgRecord(this.q.insert.get(org.id, org.name, JSON.stringify(org.metadata), org.createdAt) as OrgRow),
    );
  }

  page(afterSeq: number, limit: number): Positioned<Org>[] {
    return this.q.page.all(afterSeq, limit).map(toOrgRecord);
  }

  dependents(orgId: string, now: number): OrgDependents {
    return {
      principals: this.q.principal.get(orgId) !== undefined,
      customRoles: this.q.customRole.get(orgId) !== undefined,
      liveSecrets: this.q.liveSecret.get(orgId, now) !== undefined,
      webhooks: this.q.webhook.get(orgId) !== undefined,
      anySecretRow: this.q.anySecretRow.get(orgId) !== undefined,
    };
  }

  remove(orgId: string): void {
    this.q.remove.run(orgId);
  }
}

/** The SQLite `roles` store; `seq` is the role's id. */
export class SqliteRoleStore implements RoleStore {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      get: db.prepare<[string, string], RoleRow>("SELECT * FROM roles WHERE org_id = ? AND name = ?"),
      insert: db.prepare<[string, string, string, number], RoleRow>(
        "INSERT INTO roles (org_id, name, permissions, created_at) VALUES (?, ?, ?, ?) RETURNING *",
      ),
      update: db.prepare<[string, string, string], RoleRow>("UPDATE roles SET permissions = ? WHERE org_id = ? AND name = ? RETURNING *"),
      remove: db.prepare<[string, string]>("DELETE FROM roles WHERE org_id = ? AND name = ?"),
      page: db.prepare<[string, number, number], RoleRow>("SELECT * FROM roles WHERE org_id = ? AND id > ? ORDER BY id LIMIT ?"),
      assigned: db.prepare<[string, string], { one: number }>("SELECT 1 AS one FROM principals WHERE org_id = ? AND role = ? LIMIT 1"),
    };
  }

  get(orgId: string, name: string): RoleRecord | undefined {
    const row = this.q.get.get(orgId, name);
    return row === undefined ? undefined : toRoleRecord(row);
  }

  insert(orgId: string, name: string, permissions: string, now: number): RoleRecord {
    return unique("a role with this name exists", () => toRoleRecord(this.q.insert.get(orgId, name, permissions, now) as RoleRow));
  }

  update(orgId: string, name: string, permissions: string): RoleRecord | undefined {
    const row = this.q.update.get(permissions, orgId, name);
    return row === undefined ? undefined : toRoleRecord(row);
  }

  remove(orgId: string, name: string): void {
    this.q.remove.run(orgId, name);
  }

  page(orgId: string, afterSeq: number, limit: number): RoleRecord[] {
    return this.q.page.all(orgId, afterSeq, limit).map(toRoleRecord);
  }

  assigned(orgId: string, name: string): boolean {
    return this.q.assigned.get(orgId, name) !== undefined;
  }
}

const PRINCIPAL_NAME_TAKEN = "a principal with this name exists in the organization";

/** The SQLite `principals` store; `seq` is the rowid. */
export class SqlitePrincipalStore implements PrincipalStore {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      get: db.prepare<[string, string], PrincipalRow>("SELECT rowid AS seq, * FROM principals WHERE org_id = ? AND id = ?"),
      byName: db.prepare<[string, string], { id: string }>("SELECT id FROM principals WHERE org_id = ? AND name = ?"),
      insert: db.prepare<[string, string, string, string, string, number], PrincipalRow>(
        "INSERT INTO principals (id, org_id, name, role, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING rowid AS seq, *",
      ),
      update: db.prepare<[string, string, string, string], PrincipalRow>(
        "UPDATE principals SET name = ?, role = ?, metadata = ? WHERE id = ? RETURNING rowid AS seq, *",
      ),
      page: db.prepare<[string, number, number], PrincipalRow>(
        "SELECT rowid AS seq, * FROM principals WHERE org_id = ? AND rowid > ? ORDER BY rowid LIMIT ?",
      ),
      removeKeys: db.prepare<[string]>("DELETE FROM principal_keys WHERE principal_id = ?"),
      remove: db.prepare<[string]>("DELETE FROM principals WHERE id = ?"),
    };
  }

  get(orgId: string, id: string): Positioned<Principal> | undefined {
    const row = this.q.get.get(orgId, id);
    return row === undefined ? undefined : toPrincipalRecord(row);
  }

  nameTaken(orgId: string, name: string): boolean {
    return this.q.byName.get(orgId, name) !== undefined;
  }

  insert(p: Principal): Positioned<Principal> {
    return unique(PRINCIPAL_NAME_TAKEN, () =>
      toPrincipalRecord(this.q.insert.get(p.id, p.orgId, p.name, p.role, JSON.stringify(p.metadata), p.createdAt) as PrincipalRow),
    );
  }

  update(p: Principal): Positioned<Principal> {
    return unique(PRINCIPAL_NAME_TAKEN, () =>
      toPrincipalRecord(this.q.update.get(p.name, p.role, JSON.stringify(p.metadata), p.id) as PrincipalRow),
    );
  }

  page(orgId: string, afterSeq: number, limit: number): Positioned<Principal>[] {
    return this.q.page.all(orgId, afterSeq, limit).map(toPrincipalRecord);
  }

  remove(id: string): void {
    this.q.removeKeys.run(id);
    this.q.remove.run(id);
  }
}

/** The SQLite `principal_keys` store; `seq` is the rowid. */
export class SqlitePrincipalKeyStore implements PrincipalKeyStore {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      insert: db.prepare<[string, string, string, string, string, number | null, number | null, number, string | null], PrincipalKeyRow>(
        `INSERT INTO principal_keys (id, principal_id, org_id, name, token_hash, valid_after, valid_before, created_at, parent_key_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING rowid AS seq, *`,
      ),
      descendants: db.prepare<[string], { id: string }>(
        `WITH RECURSIVE d(id) AS (
           SELECT id FROM principal_keys WHERE parent_key_id = ?
           UNION SELECT k.id FROM principal_keys k JOIN d ON k.parent_key_id = d.id
         ) SELECT k.id FROM d JOIN principal_keys k ON k.id = d.id ORDER BY k.rowid`,
      ),
      page: db.prepare<[string, number, number], PrincipalKeyRow>(
        "SELECT rowid AS seq, * FROM principal_keys WHERE principal_id = ? AND rowid > ? ORDER BY rowid LIMIT ?",
      ),
      get: db.prepare<[string, string], PrincipalKeyRow>("SELECT rowid AS seq, * FROM principal_keys WHERE principal_id = ? AND id = ?"),
      inOrg: db.prepare<[string, string], { one: number }>("SELECT 1 AS one FROM principal_keys WHERE org_id = ? AND id = ?"),
      remove: db.prepare<[string]>("DELETE FROM principal_keys WHERE id = ?"),
      validBefore: db.prepare<[string], { valid_before: number | null }>("SELECT valid_before FROM principal_keys WHERE id = ?"),
      byHash: db.prepare<[string], PrincipalKeyRow & { role: string }>(
        `SELECT k.rowid AS seq, k.*, p.role FROM principal_keys k JOIN principals p ON p.id = k.principal_id
         WHERE k.token_hash = ?`,
      ),
      active: db.prepare<[string, number], { one: number }>(
        "SELECT 1 AS one FROM principal_keys WHERE principal_id = ? AND (valid_before IS NULL OR valid_before >= ?) LIMIT 1",
      ),
    };
  }

  insert(k: PrincipalKey, tokenHash: string): Positioned<PrincipalKey> {
    return toPrincipalKeyRecord(
      this.q.insert.get(k.id, k.principalId, k.orgId, k.name, tokenHash, k.validAfter, k.validBefore, k.createdAt, k.parentKeyId) as PrincipalKeyRow,
    );
  }

  page(principalId: string, afterSeq: number, limit: number | null): Positioned<PrincipalKey>[] {
    return this.q.page.all(principalId, afterSeq, limit ?? -1).map(toPrincipalKeyRecord);
  }

  get(principalId: string, id: string): PrincipalKey | undefined {
    const row = this.q.get.get(principalId, id);
    return row === undefined ? undefined : toPrincipalKeyRecord(row);
  }

  inOrg(orgId: string, id: string): boolean {
    return this.q.inOrg.get(orgId, id) !== undefined;
  }

  validBefore(id: string): number | null | undefined {
    return this.q.validBefore.get(id)?.valid_before;
  }

  byTokenHash(tokenHash: string): PrincipalKeyWithRole | undefined {
    const row = this.q.byHash.get(tokenHash);
    return row === undefined ? undefined : Object.assign(toPrincipalKeyRecord(row), { role: row.role });
  }

  hasActive(principalId: string, now: number): boolean {
    return this.q.active.get(principalId, now) !== undefined;
  }

  descendants(id: string): string[] {
    return this.q.descendants.all(id).map((row) => row.id);
  }

  /** No-op: the group commit runs units of work one at a time. */
  lockKeys(_principalId: string): void {}

  remove(id: string): void {
    this.q.remove.run(id);
  }
}
