import { VaultError } from "../../domain/errors.js";
import type { ScopedKey } from "../../domain/keys.js";
import type { Org } from "../../domain/orgs.js";
import type { Principal } from "../../domain/principals.js";
import type { PrincipalKey } from "../../domain/principal-keys.js";
import type { MetaStore } from "../meta.js";
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
import type { ScopedKeyRecord, ScopedKeyStore } from "../scoped-keys.js";
import { toOrgRecord, toPrincipalKeyRecord, toPrincipalRecord, toRoleRecord, toScopedKeyRecord } from "../rows.js";
import type { OrgRow, PrincipalKeyRow, PrincipalRow, RoleRow, ScopedKeyRow } from "../rows.js";
import { prepared, runPrepared } from "./prepared.js";
import type { Queryable } from "./unit-of-work.js";

// The token lookups of every request made with a scoped or a principal key (prepared.ts).
const SCOPED_KEY_BY_HASH = prepared(
  "scoped_keys.by_token_hash",
  "SELECT seq, id, name, permissions, prefix, expires_at, created_at, last_used_at FROM scoped_keys WHERE token_hash = $1",
);
const SCOPED_KEY_TOUCH = prepared(
  "scoped_keys.touch",
  "UPDATE scoped_keys SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at <= $3)",
);
const PRINCIPAL_KEY_BY_HASH = prepared(
  "principal_keys.by_token_hash",
  `SELECT k.seq, k.id, k.principal_id, k.org_id, k.name, k.valid_after, k.valid_before, k.created_at, k.parent_key_id, p.role
     FROM principal_keys k JOIN principals p ON p.id = k.principal_id WHERE k.token_hash = $1`,
);

/** PostgreSQL's unique_violation: the constraint decided a race between nodes. */
const UNIQUE_VIOLATION = "23505";

/** Runs a write, turning a unique violation into a 409 with `message`. */
async function unique<T>(message: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if ((err as { code?: unknown }).code === UNIQUE_VIOLATION) throw new VaultError("conflict", message);
    throw err;
  }
}

/** The first row, which the statement is known to return. */
function first<R>(result: { rows: R[] }): R {
  const row = result.rows[0];
  if (row === undefined) throw new Error("the statement returned no row");
  return row;
}

/** The PostgreSQL `scoped_keys` store over one unit of work's client. */
export class PgScopedKeyStore implements ScopedKeyStore {
  constructor(private readonly db: Queryable) {}

  async insert(key: ScopedKey, tokenHash: string): Promise<void> {
    await this.db.query(
      `INSERT INTO scoped_keys (id, name, token_hash, permissions, prefix, expires_at, created_at, last_used_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)`,
      [key.id, key.name, tokenHash, JSON.stringify(key.permissions), key.prefix, key.expiresAt, key.createdAt],
    );
  }

  async byTokenHash(tokenHash: string): Promise<ScopedKeyRecord | undefined> {
    const r = await runPrepared<ScopedKeyRow>(this.db, SCOPED_KEY_BY_HASH, [tokenHash]);
    return r.rows[0] === undefined ? undefined : toScopedKeyRecord(r.rows[0]);
  }

  async byId(id: string): Promise<ScopedKeyRecord | undefined> {
    const r = await this.db.query<ScopedKeyRow>("SELECT * FROM scoped_keys WHERE id = $1", [id]);
    return r.rows[0] === undefined ? undefined : toScopedKeyRecord(r.rows[0]);
  }

  async page(query: { afterSeq: number; keyPrefix: string | null; limit: number }): Promise<ScopedKeyRecord[]> {
    const r = await this.db.query<ScopedKeyRow>(
      `SELECT * FROM scoped_keys WHERE seq > $1 AND ($2::text IS NULL OR starts_with(prefix, $2))
       ORDER BY seq LIMIT $3`,
      [query.afterSeq, query.keyPrefix, query.limit],
    );
    return r.rows.map(toScopedKeyRecord);
  }

  async remove(id: string): Promise<void> {
    await this.db.query("DELETE FROM scoped_keys WHERE id = $1", [id]);
  }

  async touch(id: string, now: number, before: number): Promise<void> {
    await runPrepared(this.db, SCOPED_KEY_TOUCH, [now, id, before]);
  }
}

/** The PostgreSQL `orgs` store. */
export class PgOrgStore implements OrgStore {
  constructor(private readonly db: Queryable) {}

  async byId(id: string): Promise<Positioned<Org> | undefined> {
    const r = await this.db.query<OrgRow>("SELECT * FROM orgs WHERE id = $1", [id]);
    return r.rows[0] === undefined ? undefined : toOrgRecord(r.rows[0]);
  }

  async nameTaken(name: string): Promise<boolean> {
    return ((await this.db.query("SELECT 1 FROM orgs WHERE name = $1", [name])).rowCount ?? 0) > 0;
  }

  insert(org: Org): Promise<Positioned<Org>> {
    return unique("an organization with this name exists", async () =>
      toOrgRecord(
        first(
          await this.db.query<OrgRow>("INSERT INTO orgs (id, name, metadata, created_at) VALUES ($1, $2, $3, $4) RETURNING *", [
            org.id,
            org.name,
            JSON.stringify(org.metadata),
            org.createdAt,
          ]),
        ),
      ),
    );
  }

  async page(afterSeq: number, limit: number): Promise<Positioned<Org>[]> {
    return (await this.db.query<OrgRow>("SELECT * FROM orgs WHERE seq > $1 ORDER BY seq LIMIT $2", [afterSeq, limit])).rows.map(toOrgRecord);
  }

  async dependents(orgId: string, now: number): Promise<OrgDependents> {
    const r = await this.db.query<Record<keyof OrgDependents, boolean>>(
      `SELECT EXISTS (SELECT 1 FROM principals WHERE org_id = $1) AS "principals",
              EXISTS (SELECT 1 FROM roles WHERE org_id = $1) AS "customRoles",
              EXISTS (SELECT 1 FROM secrets WHERE scope = $1 AND state IN ('active', 'sealed')
                        AND (expires_at IS NULL OR expires_at > $2)) AS "liveSecrets",
              EXISTS (SELECT 1 FROM webhooks WHERE org_id = $1) AS "webhooks",
              EXISTS (SELECT 1 FROM secrets WHERE scope = $1) AS "anySecretRow"`,
      [orgId, now],
    );
    return first(r);
  }

  async remove(orgId: string): Promise<void> {
    await this.db.query("DELETE FROM orgs WHERE id = $1", [orgId]);
  }
}

/** The PostgreSQL `roles` store. */
export class PgRoleStore implements RoleStore {
  constructor(private readonly db: Queryable) {}

  async get(orgId: string, name: string): Promise<RoleRecord | undefined> {
    const r = await this.db.query<RoleRow>("SELECT * FROM roles WHERE org_id = $1 AND name = $2", [orgId, name]);
    return r.rows[0] === undefined ? undefined : toRoleRecord(r.rows[0]);
  }

  insert(orgId: string, name: string, permissions: string, now: number): Promise<RoleRecord> {
    return unique("a role with this name exists", async () =>
      toRoleRecord(
        first(
          await this.db.query<RoleRow>("INSERT INTO roles (org_id, name, permissions, created_at) VALUES ($1, $2, $3, $4) RETURNING *", [
            orgId,
            name,
            permissions,
            now,
          ]),
        ),
      ),
    );
  }

  async update(orgId: string, name: string, permissions: string): Promise<RoleRecord | undefined> {
    const r = await this.db.query<RoleRow>("UPDATE roles SET permissions = $1 WHERE org_id = $2 AND name = $3 RETURNING *", [
      permissions,
      orgId,
      name,
    ]);
    return r.rows[0] === undefined ? undefined : toRoleRecord(r.rows[0]);
  }

  async remove(orgId: string, name: string): Promise<void> {
    await this.db.query("DELETE FROM roles WHERE org_id = $1 AND name = $2", [orgId, name]);
  }

  async page(orgId: string, afterSeq: number, limit: number): Promise<RoleRecord[]> {
    return (await this.db.query<RoleRow>("SELECT * FROM roles WHERE org_id = $1 AND id > $2 ORDER BY id LIMIT $3", [orgId, afterSeq, limit])).rows.map(
      toRoleRecord,
    );
  }

  async assigned(orgId: string, name: string): Promise<boolean> {
    return ((await this.db.query("SELECT 1 FROM principals WHERE org_id = $1 AND role = $2 LIMIT 1", [orgId, name])).rowCount ?? 0) > 0;
  }
}

const PRINCIPAL_NAME_TAKEN = "a principal with this name exists in the organization";

/** The PostgreSQL `principals` store. */
export class PgPrincipalStore implements PrincipalStore {
  constructor(private readonly db: Queryable) {}

  async get(orgId: string, id: string): Promise<Positioned<Principal> | undefined> {
    const r = await this.db.query<PrincipalRow>("SELECT * FROM principals WHERE org_id = $1 AND id = $2", [orgId, id]);
    return r.rows[0] === undefined ? undefined : toPrincipalRecord(r.rows[0]);
  }

  async nameTaken(orgId: string, name: string): Promise<boolean> {
    return ((await this.db.query("SELECT 1 FROM principals WHERE org_id = $1 AND name = $2", [orgId, name])).rowCount ?? 0) > 0;
  }

  insert(p: Principal): Promise<Positioned<Principal>> {
    return unique(PRINCIPAL_NAME_TAKEN, async () =>
      toPrincipalRecord(
        first(
          await this.db.query<PrincipalRow>(
            "INSERT INTO principals (id, org_id, name, role, metadata, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *",
            [p.id, p.orgId, p.name, p.role, JSON.stringify(p.metadata), p.createdAt],
          ),
        ),
      ),
    );
  }

  update(p: Principal): Promise<Positioned<Principal>> {
    return unique(PRINCIPAL_NAME_TAKEN, async () =>
      toPrincipalRecord(
        first(
          await this.db.query<PrincipalRow>("UPDATE principals SET name = $1, role = $2, metadata = $3 WHERE id = $4 RETURNING *", [
            p.name,
            p.role,
            JSON.stringify(p.metadata),
            p.id,
          ]),
        ),
      ),
    );
  }

  async page(orgId: string, afterSeq: number, limit: number): Promise<Positioned<Principal>[]> {
    return (
      await this.db.query<PrincipalRow>("SELECT * FROM principals WHERE org_id = $1 AND seq > $2 ORDER BY seq LIMIT $3", [orgId, afterSeq, limit])
    ).rows.map(toPrincipalRecord);
  }

  async remove(id: string): Promise<void> {
    await this.db.query("DELETE FROM principal_keys WHERE principal_id = $1", [id]);
    await this.db.query("DELETE FROM principals WHERE id = $1", [id]);
  }
}

/** The PostgreSQL `principal_keys` store. */
export class PgPrincipalKeyStore implements PrincipalKeyStore {
  constructor(private readonly db: Queryable) {}

  async insert(k: PrincipalKey, tokenHash: string): Promise<Positioned<PrincipalKey>> {
    return toPrincipalKeyRecord(
      first(
        await this.db.query<PrincipalKeyRow>(
          `INSERT INTO principal_keys (id, principal_id, org_id, name, token_hash, valid_after, valid_before, created_at, parent_key_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
          [k.id, k.principalId, k.orgId, k.name, tokenHash, k.validAfter, k.validBefore, k.createdAt, k.parentKeyId],
        ),
      ),
    );
  }

  async page(principalId: string, afterSeq: number, limit: number | null): Promise<Positioned<PrincipalKey>[]> {
    return (
      await this.db.query<PrincipalKeyRow>("SELECT * FROM principal_keys WHERE principal_id = $1 AND seq > $2 ORDER BY seq LIMIT $3", [
        principalId,
        afterSeq,
        limit,
      ])
    ).rows.map(toPrincipalKeyRecord);
  }

  async get(principalId: string, id: string): Promise<PrincipalKey | undefined> {
    const r = await this.db.query<PrincipalKeyRow>("SELECT * FROM principal_keys WHERE principal_id = $1 AND id = $2", [principalId, id]);
    return r.rows[0] === undefined ? undefined : toPrincipalKeyRecord(r.rows[0]);
  }

  async inOrg(orgId: string, id: string): Promise<boolean> {
    return ((await this.db.query("SELECT 1 FROM principal_keys WHERE org_id = $1 AND id = $2", [orgId, id])).rowCount ?? 0) > 0;
  }

  async validBefore(id: string): Promise<number | null | undefined> {
    const r = await this.db.query<{ valid_before: number | null }>("SELECT valid_before FROM principal_keys WHERE id = $1", [id]);
    return r.rows[0]?.valid_before;
  }

  async byTokenHash(tokenHash: string): Promise<PrincipalKeyWithRole | undefined> {
    const r = await runPrepared<PrincipalKeyRow & { role: string }>(this.db, PRINCIPAL_KEY_BY_HASH, [tokenHash]);
    const row = r.rows[0];
    return row === undefined ? undefined : Object.assign(toPrincipalKeyRecord(row), { role: row.role });
  }

  async hasActive(principalId: string, now: number): Promise<boolean> {
    const r = await this.db.query("SELECT 1 FROM principal_keys WHERE principal_id = $1 AND (valid_before IS NULL OR valid_before >= $2) LIMIT 1", [
      principalId,
      now,
    ]);
    return (r.rowCount ?? 0) > 0;
  }

  async descendants(id: string): Promise<string[]> {
    const r = await this.db.query<{ id: string }>(
      `WITH RECURSIVE d(id) AS (
         SELECT id FROM principal_keys WHERE parent_key_id = $1
         UNION SELECT k.id FROM principal_keys k JOIN d ON k.parent_key_id = d.id
       ) SELECT k.id FROM d JOIN principal_keys k ON k.id = d.id ORDER BY k.seq`,
      [id],
    );
    return r.rows.map((row) => row.id);
  }

  async lockKeys(principalId: string): Promise<void> {
    await this.db.query("SELECT 1 FROM principals WHERE id = $1 FOR NO KEY UPDATE", [principalId]);
  }

  async remove(id: string): Promise<void> {
    await this.db.query("DELETE FROM principal_keys WHERE id = $1", [id]);
  }
}

/** The PostgreSQL `meta` store. */
export class PgMetaStore implements MetaStore {
  constructor(private readonly db: Queryable) {}

  async get(name: string): Promise<string | undefined> {
    return (await this.db.query<{ value: string }>("SELECT value FROM meta WHERE name = $1", [name])).rows[0]?.value;
  }

  async set(name: string, value: string): Promise<void> {
    await this.db.query("INSERT INTO meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value", [name, value]);
  }
}
