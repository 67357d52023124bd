import type { Db } from "../db.js";
import { newId } from "../crypto.js";
import { VaultError } from "./errors.js";
import type { Origin } from "./events.js";
import { cutPage } from "./paging.js";
import type { Page } from "./paging.js";
import type { SecretLifecycle } from "./secrets.js";

/** An organization. Times in milliseconds. */
export interface Org {
  id: string;
  name: string;
  metadata: Record<string, unknown>;
  createdAt: number;
}

interface OrgRow {
  rowid: number;
  id: string;
  name: string;
  metadata: string;
  created_at: number;
}

export interface OrgsDeps {
  db: Db;
  /** Current time, Unix milliseconds. */
  now: () => number;
  /** The one secret lifecycle, to prune an org's remains when it is deleted. */
  secrets: SecretLifecycle;
}

/**
 * Organizations (interface section 2 "Organization", decisions.md section 6).
 * Synchronous; run changes inside GroupCommit.run().
 */
export class Organizations {
  private readonly q;
  /** Null until the webhooks table of schema section 3 exists. */
  private readonly webhookOfOrg;

  constructor(private readonly deps: OrgsDeps) {
    const db = deps.db;
    this.q = {
      byId: db.prepare<[string], OrgRow>("SELECT rowid, * FROM orgs WHERE id = ?"),
      byName: db.prepare<[string], { id: string }>("SELECT id FROM orgs WHERE name = ?"),
      insert: db.prepare<[string, string, string, number], OrgRow>(
        "INSERT INTO orgs (id, name, metadata, created_at) VALUES (?, ?, ?, ?) RETURNING rowid, *",
      ),
      page: db.prepare<[number, number], OrgRow>("SELECT rowid, * FROM orgs WHERE rowid > ? ORDER BY rowid LIMIT ?"),
      principal: db.prepare<[string], { one: number }>("SELECT 1 AS one FROM principals WHERE org_id = ? LIMIT 1"),
      customRole: db.prepare<[string], { one: number }>("SELECT 1 AS one FROM roles WHERE org_id = ? LIMIT 1"),
      liveSecret: db.prepare<[string, number], { one: number }>(
        `SELECT 1 AS one FROM secrets WHERE scope = ? AND state IN ('active', 'sealed')
         AND (expires_at IS NULL OR expires_at > ?) LIMIT 1`,
      ),
      anySecretRow: db.prepare<[string], { one: number }>("SELECT 1 AS one FROM secrets WHERE scope = ? LIMIT 1"),
      remove: db.prepare<[string]>("DELETE FROM orgs WHERE id = ?"),
    };
    this.webhookOfOrg = db.prepare<[string], { one: number }>("SELECT 1 AS one FROM webhooks WHERE org_id = ? LIMIT 1");
  }

  /**
   * Creates an org.
   * @param name 1-128 characters, already trimmed.
   * @param metadata a JSON object (at most 16 KiB serialized, checked at the edge).
   * @throws VaultError "conflict" (409) when an org has this name (decisions.md section 2).
   */
  create(name: string, metadata: Record<string, unknown> = {}): Org {
    if (this.q.byName.get(name)) throw new VaultError("conflict", "an organization with this name exists");
    return toOrg(this.q.insert.get(newId("org_"), name, JSON.stringify(metadata), this.deps.now()) as OrgRow);
  }

  /** The org, or undefined. */
  get(orgId: string): Org | undefined {
    const row = this.q.byId.get(orgId);
    return row ? toOrg(row) : undefined;
  }

  /** True when the org exists (org-auth.ts's OrgLookup). */
  exists(orgId: string): boolean {
    return this.q.byId.get(orgId) !== undefined;
  }

  /** One page of orgs in creation order; `limit` 1-1000. */
  list(limit: number, afterId = 0): Page<Org> {
    const { rows, next } = cutPage(this.q.page.all(afterId, limit + 1), limit, (row) => row.rowid);
    return { items: rows.map(toOrg), nextAfterId: next };
  }

  /**
   * Deletes an org that holds nothing any more (decisions.md section 6, no
   * cascading deletes). Expired tombstones of its secrets are pruned through
   * the secret lifecycle first (a secret past its TTL is expired there, with
   * its `secret.expired` event).
   * @throws VaultError "not_found" (404) for an unknown org; "conflict" (409)
   *   when principals, live secrets, custom roles or webhooks remain: the
   *   message names them.
   */
  remove(orgId: string, origin: Origin): void {
    if (!this.exists(orgId)) throw new VaultError("not_found", "organization not found");
    const remaining: string[] = [];
    if (this.q.principal.get(orgId)) remaining.push("principals");
    if (this.q.liveSecret.get(orgId, this.deps.now())) remaining.push("secrets");
    if (this.q.customRole.get(orgId)) remaining.push("custom roles");
    if (this.webhookOfOrg.get(orgId)) remaining.push("webhooks");
    if (remaining.length > 0) {
      throw new VaultError("conflict", "the organization is not empty", {
        message: `delete its ${remaining.join(", ")} first; deletes do not cascade`,
      });
    }
    if (this.q.anySecretRow.get(orgId)) this.deps.secrets.prune(orgId, origin);
    this.q.remove.run(orgId);
  }
}

function toOrg(row: OrgRow): Org {
  return {
    id: row.id,
    name: row.name,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    createdAt: row.created_at,
  };
}
