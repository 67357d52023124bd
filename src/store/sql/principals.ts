import type { Principal } from "../../model/records.js";
import type { PrincipalKey } from "../../model/records.js";
import type { Positioned, PrincipalKeyStore, PrincipalKeyWithRole, PrincipalStore } from "../orgs.js";
import { toPrincipalKeyRecord, toPrincipalRecord } from "../rows.js";
import type { PrincipalKeyRow, PrincipalRow } from "../rows.js";
import type { Awaitable } from "../work.js";
import { after, done, first, map, NO_LIMIT, unique } from "./executor.js";
import type { SqlExecutor } from "./executor.js";
import { Fragment, named, ordered, SEQ, SEQ_ALL, sql } from "./template.js";

const PRINCIPAL_NAME_TAKEN = "a principal with this name exists in the organization";

/** The token lookup of every request made with a principal key (a named prepared statement on PostgreSQL). */
const BY_TOKEN_HASH = named("principal_keys.by_token_hash");
/** `k.rowid` / `k.seq`: a principal key's creation order in a join. */
const KEY_SEQ = new Fragment("k.rowid", "k.seq");

/** The `principals` store of both engines; `seq` is the creation order. */
export class SqlPrincipalStore implements PrincipalStore {
  constructor(private readonly x: SqlExecutor) {}

  get(orgId: string, id: string): Awaitable<Positioned<Principal> | undefined> {
    return map(this.x.get<PrincipalRow>(sql`SELECT ${SEQ_ALL} FROM principals WHERE org_id = ${orgId} AND id = ${id}`), (row) =>
      row === undefined ? undefined : toPrincipalRecord(row),
    );
  }

  nameTaken(orgId: string, name: string): Awaitable<boolean> {
    return map(this.x.get(sql`SELECT 1 AS one FROM principals WHERE org_id = ${orgId} AND name = ${name}`), (row) => row !== undefined);
  }

  insert(p: Principal): Awaitable<Positioned<Principal>> {
    return unique(this.x, PRINCIPAL_NAME_TAKEN, () =>
      map(
        this.x.get<PrincipalRow>(
          sql`INSERT INTO principals (id, org_id, name, role, metadata, created_at)
              VALUES (${p.id}, ${p.orgId}, ${p.name}, ${p.role}, ${JSON.stringify(p.metadata)}, ${p.createdAt}) RETURNING ${SEQ_ALL}`,
        ),
        (row) => toPrincipalRecord(first(row)),
      ),
    );
  }

  update(p: Principal): Awaitable<Positioned<Principal>> {
    return unique(this.x, PRINCIPAL_NAME_TAKEN, () =>
      map(
        this.x.get<PrincipalRow>(
          sql`UPDATE principals SET name = ${p.name}, role = ${p.role}, metadata = ${JSON.stringify(p.metadata)}
              WHERE id = ${p.id} RETURNING ${SEQ_ALL}`,
        ),
        (row) => toPrincipalRecord(first(row)),
      ),
    );
  }

  page(orgId: string, afterSeq: number, limit: number): Awaitable<Positioned<Principal>[]> {
    return map(
      this.x.all<PrincipalRow>(
        sql`SELECT ${SEQ_ALL} FROM principals WHERE org_id = ${orgId} AND ${SEQ} > ${afterSeq} ORDER BY ${SEQ} LIMIT ${limit}`,
      ),
      (rows) => rows.map(toPrincipalRecord),
    );
  }

  remove(id: string): Awaitable<void> {
    return after(this.x.run(sql`DELETE FROM principal_keys WHERE principal_id = ${id}`), () =>
      done(this.x.run(sql`DELETE FROM principals WHERE id = ${id}`)),
    );
  }
}

/** The `principal_keys` store of both engines; `seq` is the creation order. */
export class SqlPrincipalKeyStore implements PrincipalKeyStore {
  constructor(private readonly x: SqlExecutor) {}

  insert(k: PrincipalKey, tokenHash: string): Awaitable<Positioned<PrincipalKey>> {
    return map(
      this.x.get<PrincipalKeyRow>(
        sql`INSERT INTO principal_keys (id, principal_id, org_id, name, token_hash, valid_after, valid_before, created_at, parent_key_id)
            VALUES (${k.id}, ${k.principalId}, ${k.orgId}, ${k.name}, ${tokenHash}, ${k.validAfter}, ${k.validBefore}, ${k.createdAt},
                    ${k.parentKeyId})
            RETURNING ${SEQ_ALL}`,
      ),
      (row) => toPrincipalKeyRecord(first(row)),
    );
  }

  page(principalId: string, afterSeq: number, limit: number | null): Awaitable<Positioned<PrincipalKey>[]> {
    return map(
      this.x.all<PrincipalKeyRow>(
        sql`SELECT ${SEQ_ALL} FROM principal_keys WHERE principal_id = ${principalId} AND ${SEQ} > ${afterSeq}
            ORDER BY ${SEQ} LIMIT ${limit ?? NO_LIMIT}`,
      ),
      (rows) => rows.map(toPrincipalKeyRecord),
    );
  }

  get(principalId: string, id: string): Awaitable<PrincipalKey | undefined> {
    return map(this.x.get<PrincipalKeyRow>(sql`SELECT ${SEQ_ALL} FROM principal_keys WHERE principal_id = ${principalId} AND id = ${id}`), (row) =>
      row === undefined ? undefined : toPrincipalKeyRecord(row),
    );
  }

  inOrg(orgId: string, id: string): Awaitable<boolean> {
    return map(this.x.get(sql`SELECT 1 AS one FROM principal_keys WHERE org_id = ${orgId} AND id = ${id}`), (row) => row !== undefined);
  }

  validBefore(id: string): Awaitable<number | null | undefined> {
    return map(
      this.x.get<{ valid_before: number | null }>(sql`SELECT valid_before FROM principal_keys WHERE id = ${id}`),
      (row) => row?.valid_before,
    );
  }

  byTokenHash(tokenHash: string): Awaitable<PrincipalKeyWithRole | undefined> {
    const found = this.x.get<PrincipalKeyRow & { role: string }>(
      BY_TOKEN_HASH`SELECT ${KEY_SEQ} AS seq, k.id, k.principal_id, k.org_id, k.name, k.valid_after, k.valid_before, k.created_at,
                           k.parent_key_id, p.role
                      FROM principal_keys k JOIN principals p ON p.id = k.principal_id WHERE k.token_hash = ${tokenHash}`,
    );
    return map(found, (row) => (row === undefined ? undefined : Object.assign(toPrincipalKeyRecord(row), { role: row.role })));
  }

  hasActive(principalId: string, now: number): Awaitable<boolean> {
    return map(
      this.x.get(
        sql`SELECT 1 AS one FROM principal_keys WHERE principal_id = ${principalId} AND (valid_before IS NULL OR valid_before >= ${now}) LIMIT 1`,
      ),
      (row) => row !== undefined,
    );
  }

  descendants(id: string): Awaitable<string[]> {
    return map(
      this.x.all<{ id: string }>(
        sql`WITH RECURSIVE d(id) AS (
              SELECT id FROM principal_keys WHERE parent_key_id = ${id}
              UNION SELECT k.id FROM principal_keys k JOIN d ON k.parent_key_id = d.id
            ) SELECT k.id FROM d JOIN principal_keys k ON k.id = d.id ORDER BY ${KEY_SEQ}`,
      ),
      (rows) => rows.map((row) => row.id),
    );
  }

  /**
   * PostgreSQL locks the principal's row (FOR NO KEY UPDATE); SQLite's units
   * of work already run one at a time, so it has nothing to lock.
   */
  lockKeys(principalId: string): Awaitable<void> {
    if (this.x.dialect === "sqlite") return;
    return done(this.x.run(ordered`SELECT 1 FROM principals WHERE id = ${principalId} FOR NO KEY UPDATE`));
  }

  remove(id: string): Awaitable<void> {
    return done(this.x.run(sql`DELETE FROM principal_keys WHERE id = ${id}`));
  }
}
