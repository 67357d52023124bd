import type { Db } from "./db.js";
import type { Webhook } from "../../domain/webhooks.js";
import type { Subscriber, WebhookRecord, WebhookScopeQuery, WebhookStore } from "../webhooks.js";
import { toWebhookRecord } from "../rows.js";
import type { WebhookRow as Row } from "../rows.js";

/** A subscriber as SQLite returns it: `events` as JSON text. */
interface SubscriberRow {
  id: string;
  events: string;
  key_prefix: string | null;
}

/** SQL: the webhook is visible to a viewer with prefix @viewer (or any when null). */
const VISIBLE = "(@viewer IS NULL OR (key_prefix IS NOT NULL AND substr(key_prefix, 1, length(@viewer)) = @viewer))";

/**
 * The SQLite `webhooks` store: statements prepared once per database, every
 * method synchronous (it runs inside the group commit's unit of work).
 * Times are Unix milliseconds.
 */
export class SqliteWebhookStore implements WebhookStore {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      insert: db.prepare<[string, string | null, string, string, string | null, string | null, number], Row>(
        `INSERT INTO webhooks (id, org_id, url, events, description, key_prefix, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         RETURNING rowid AS seq, *`,
      ),
      listGlobal: db.prepare<{ viewer: string | null; after: number; limit: number }, Row>(
        `SELECT rowid AS seq, * FROM webhooks WHERE org_id IS NULL AND rowid > @after AND ${VISIBLE}
         ORDER BY rowid LIMIT @limit`,
      ),
      listOrg: db.prepare<{ org: string; viewer: string | null; after: number; limit: number }, Row>(
        `SELECT rowid AS seq, * FROM webhooks WHERE org_id = @org AND rowid > @after AND ${VISIBLE}
         ORDER BY rowid LIMIT @limit`,
      ),
      getGlobal: db.prepare<{ id: string; viewer: string | null }, Row>(
        `SELECT rowid AS seq, * FROM webhooks WHERE id = @id AND org_id IS NULL AND ${VISIBLE}`,
      ),
      getOrg: db.prepare<{ id: string; org: string; viewer: string | null }, Row>(
        `SELECT rowid AS seq, * FROM webhooks WHERE id = @id AND org_id = @org AND ${VISIBLE}`,
      ),
      remove: db.prepare<[string]>("DELETE FROM webhooks WHERE id = ?"),
      countInScope: db.prepare<[string | null], { n: number }>("SELECT count(*) AS n FROM webhooks WHERE org_id IS ?"),
      globalSubscribers: db.prepare<[], SubscriberRow>("SELECT id, events, key_prefix FROM webhooks WHERE org_id IS NULL"),
      orgSubscribers: db.prepare<[string], SubscriberRow>("SELECT id, events, key_prefix FROM webhooks WHERE org_id = ?"),
      rotate: db.prepare<[number, string], { signing_generation: number }>(
        "UPDATE webhooks SET signing_generation = signing_generation + 1, previous_signing_until = ? WHERE id = ? RETURNING signing_generation",
      ),
      delivered: db.prepare<[string]>("UPDATE webhooks SET failed_deliveries = 0, failing_since = NULL WHERE id = ?"),
      failed: db.prepare<{ id: string; now: number; threshold: number }, { failed_deliveries: number }>(
        `UPDATE webhooks SET failed_deliveries = failed_deliveries + 1,
           failing_since = CASE WHEN failing_since IS NULL AND failed_deliveries + 1 >= @threshold THEN @now ELSE failing_since END
         WHERE id = @id RETURNING failed_deliveries`,
      ),
    };
  }

  countInScope(orgId: string | null): number {
    return this.q.countInScope.get(orgId)?.n ?? 0;
  }

  insert(w: Webhook): WebhookRecord {
    const row = this.q.insert.get(w.id, w.orgId, w.url, JSON.stringify(w.events), w.description, w.keyPrefix, w.createdAt) as Row;
    return toWebhookRecord(row);
  }

  list(query: WebhookScopeQuery, afterSeq: number, limit: number): WebhookRecord[] {
    const params = { viewer: query.viewerPrefix, after: afterSeq, limit };
    const rows = query.orgId === null ? this.q.listGlobal.all(params) : this.q.listOrg.all(Object.assign(params, { org: query.orgId }));
    return rows.map(toWebhookRecord);
  }

  get(query: WebhookScopeQuery, id: string): WebhookRecord | undefined {
    const row =
      query.orgId === null
        ? this.q.getGlobal.get({ id, viewer: query.viewerPrefix })
        : this.q.getOrg.get({ id, org: query.orgId, viewer: query.viewerPrefix });
    return row === undefined ? undefined : toWebhookRecord(row);
  }

  remove(id: string): void {
    this.q.remove.run(id);
  }

  subscribers(orgId: string | null): Subscriber[] {
    const rows = orgId === null ? this.q.globalSubscribers.all() : this.q.orgSubscribers.all(orgId);
    return rows.map((r) => ({ id: r.id, events: JSON.parse(r.events) as string[], keyPrefix: r.key_prefix }));
  }

  rotateSigning(id: string, previousUntil: number): number | undefined {
    return this.q.rotate.get(previousUntil, id)?.signing_generation;
  }

  markDelivered(id: string): void {
    this.q.delivered.run(id);
  }

  countFailedDelivery(id: string, now: number, failingAfter: number): number | undefined {
    return this.q.failed.get({ id, now, threshold: failingAfter })?.failed_deliveries;
  }
}
