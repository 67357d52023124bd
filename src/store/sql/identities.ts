import type { IdentityLink, IdentityStore } from "../identities.js";
import type { Awaitable } from "../work.js";
import { done, map } from "./executor.js";
import type { SqlExecutor } from "./executor.js";
import { sql } from "./template.js";

interface Row {
  org_id: string;
  principal_id: string;
  created_at: number;
}

/** The `oidc_identities` store of both engines (docs/sso.md): one statement each. */
export class SqlIdentityStore implements IdentityStore {
  constructor(private readonly x: SqlExecutor) {}

  get(issuer: string, subject: string): Awaitable<IdentityLink | undefined> {
    return map(
      this.x.get<Row>(sql`SELECT org_id, principal_id, created_at FROM oidc_identities WHERE issuer = ${issuer} AND subject = ${subject}`),
      (row) => (row === undefined ? undefined : { issuer, subject, orgId: row.org_id, principalId: row.principal_id, createdAt: Number(row.created_at) }),
    );
  }

  put(link: IdentityLink): Awaitable<void> {
    return done(
      this.x.run(
        sql`INSERT INTO oidc_identities (issuer, subject, org_id, principal_id, created_at)
              VALUES (${link.issuer}, ${link.subject}, ${link.orgId}, ${link.principalId}, ${link.createdAt})
              ON CONFLICT (issuer, subject) DO UPDATE SET org_id = excluded.org_id, principal_id = excluded.principal_id, created_at = excluded.created_at`,
      ),
    );
  }
}
