import type { Org } from "../../model/records.js";
import type { OrgDependents, OrgStore, Positioned, RoleRecord, RoleStore } from "../orgs.js";
import { toOrgRecord, toRoleRecord } from "../rows.js";
import type { OrgRow, RoleRow } from "../rows.js";
import type { Awaitable } from "../work.js";
import { done, first, map, unique } from "./executor.js";
import type { SqlExecutor } from "./executor.js";
import { SEQ, SEQ_ALL, sql } from "./template.js";

/** What `dependents` selects: one flag per kind of row (0/1 on SQLite, booleans on PostgreSQL). */
type DependentsRow = Record<keyof OrgDependents, boolean | number>;

/** The `orgs` store of both engines (one statement text each, store/sql/template.ts); `seq` is the creation order. */
export class SqlOrgStore implements OrgStore {
  constructor(private readonly x: SqlExecutor) {}

  byId(id: string): Awaitable<Positioned<Org> | undefined> {
    return map(this.x.get<OrgRow>(sql`SELECT ${SEQ_ALL} FROM orgs WHERE id = ${id}`), (row) => (row === undefined ? undefined : toOrgRecord(row)));
  }

  nameTaken(name: string): Awaitable<boolean> {
    return map(this.x.get(sql`SELECT 1 AS one FROM orgs WHERE name = ${name}`), (row) => row !== undefined);
  }

  insert(org: Org): Awaitable<Positioned<Org>> {
    return unique(this.x, "an organization with this name exists", () =>
      map(
        this.x.get<OrgRow>(
          sql`INSERT INTO orgs (id, name, metadata, created_at)
              VALUES (${org.id}, ${org.name}, ${JSON.stringify(org.metadata)}, ${org.createdAt}) RETURNING ${SEQ_ALL}`,
        ),
        (row) => toOrgRecord(first(row)),
      ),
    );
  }

  page(afterSeq: number, limit: number): Awaitable<Positioned<Org>[]> {
    return map(this.x.all<OrgRow>(sql`SELECT ${SEQ_ALL} FROM orgs WHERE ${SEQ} > ${afterSeq} ORDER BY ${SEQ} LIMIT ${limit}`), (rows) =>
      rows.map(toOrgRecord),
    );
  }

  dependents(orgId: string, now: number): Awaitable<OrgDependents> {
    const flags = this.x.get<DependentsRow>(
      sql`SELECT EXISTS (SELECT 1 FROM principals WHERE org_id = ${orgId}) AS "principals",
                 EXISTS (SELECT 1 FROM roles WHERE org_id = ${orgId}) AS "customRoles",
                 EXISTS (SELECT 1 FROM secrets WHERE scope = ${orgId} AND state IN ('active', 'sealed')
                           AND (expires_at IS NULL OR expires_at > ${now})) AS "liveSecrets",
                 EXISTS (SELECT 1 FROM webhooks WHERE org_id = ${orgId}) AS "webhooks",
                 EXISTS (SELECT 1 FROM secrets WHERE scope = ${orgId}) AS "anySecretRow"`,
    );
    return map(flags, (row) => {
      const r = first(row);
      return {
        principals: Boolean(r.principals),
        customRoles: Boolean(r.customRoles),
        liveSecrets: Boolean(r.liveSecrets),
        webhooks: Boolean(r.webhooks),
        anySecretRow: Boolean(r.anySecretRow),
      };
    });
  }

  remove(orgId: string): Awaitable<void> {
    return done(this.x.run(sql`DELETE FROM orgs WHERE id = ${orgId}`));
  }
}

/** The `roles` store of both engines; `seq` is the role's id. */
export class SqlRoleStore implements RoleStore {
  constructor(private readonly x: SqlExecutor) {}

  get(orgId: string, name: string): Awaitable<RoleRecord | undefined> {
    return map(this.x.get<RoleRow>(sql`SELECT * FROM roles WHERE org_id = ${orgId} AND name = ${name}`), (row) =>
      row === undefined ? undefined : toRoleRecord(row),
    );
  }

  insert(orgId: string, name: string, permissions: string, now: number): Awaitable<RoleRecord> {
    return unique(this.x, "a role with this name exists", () =>
      map(
        this.x.get<RoleRow>(
          sql`INSERT INTO roles (org_id, name, permissions, created_at) VALUES (${orgId}, ${name}, ${permissions}, ${now}) RETURNING *`,
        ),
        (row) => toRoleRecord(first(row)),
      ),
    );
  }

  update(orgId: string, name: string, permissions: string): Awaitable<RoleRecord | undefined> {
    return map(
      this.x.get<RoleRow>(sql`UPDATE roles SET permissions = ${permissions} WHERE org_id = ${orgId} AND name = ${name} RETURNING *`),
      (row) => (row === undefined ? undefined : toRoleRecord(row)),
    );
  }

  remove(orgId: string, name: string): Awaitable<void> {
    return done(this.x.run(sql`DELETE FROM roles WHERE org_id = ${orgId} AND name = ${name}`));
  }

  page(orgId: string, afterSeq: number, limit: number): Awaitable<RoleRecord[]> {
    return map(this.x.all<RoleRow>(sql`SELECT * FROM roles WHERE org_id = ${orgId} AND id > ${afterSeq} ORDER BY id LIMIT ${limit}`), (rows) =>
      rows.map(toRoleRecord),
    );
  }

  assigned(orgId: string, name: string): Awaitable<boolean> {
    return map(this.x.get(sql`SELECT 1 AS one FROM principals WHERE org_id = ${orgId} AND role = ${name} LIMIT 1`), (row) => row !== undefined);
  }
}
