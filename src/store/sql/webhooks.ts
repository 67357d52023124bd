import type { Webhook } from "../../model/records.js";
import { toWebhookRecord } from "../rows.js";
import type { WebhookRow } from "../rows.js";
import type { Subscriber, WebhookRecord, WebhookScopeQuery, WebhookStore } from "../webhooks.js";
import type { Awaitable } from "../work.js";
import { done, first, map } from "./executor.js";
import type { SqlExecutor } from "./executor.js";
import { named, SEQ, SEQ_ALL, sql } from "./template.js";

// Every change that emits an event looks its subscribers up (a named prepared statement on PostgreSQL).
const SUBSCRIBERS = named("webhooks.subscribers");

/** A subscriber as selected: events as JSON text. */
interface SubscriberRow {
  id: string;
  events: string;
  key_prefix: string | null;
}

/**
 * The `webhooks` store of both engines. A viewer with a key prefix sees only
 * webhooks made under a prefix within its own. Times are Unix milliseconds.
 */
export class SqlWebhookStore implements WebhookStore {
  constructor(private readonly x: SqlExecutor) {}

  countInScope(orgId: string | null): Awaitable<number> {
    return map(this.x.get<{ n: number }>(sql`SELECT count(*) AS n FROM webhooks WHERE org_id IS NOT DISTINCT FROM ${orgId}`), (row) =>
      Number(row?.n ?? 0),
    );
  }

  insert(w: Webhook): Awaitable<WebhookRecord> {
    return map(
      this.x.get<WebhookRow>(
        sql`INSERT INTO webhooks (id, org_id, url, events, description, key_prefix, created_at)
            VALUES (${w.id}, ${w.orgId}, ${w.url}, ${JSON.stringify(w.events)}, ${w.description}, ${w.keyPrefix}, ${w.createdAt})
            RETURNING ${SEQ_ALL}`,
      ),
      (row) => toWebhookRecord(first(row)),
    );
  }

  list(query: WebhookScopeQuery, afterSeq: number, limit: number): Awaitable<WebhookRecord[]> {
    const viewer = query.viewerPrefix;
    return map(
      this.x.all<WebhookRow>(
        sql`SELECT ${SEQ_ALL} FROM webhooks WHERE org_id IS NOT DISTINCT FROM ${query.orgId} AND ${SEQ} > ${afterSeq}
              AND (CAST(${viewer} AS TEXT) IS NULL
                   OR (key_prefix IS NOT NULL AND substr(key_prefix, 1, length(CAST(${viewer} AS TEXT))) = ${viewer}))
            ORDER BY ${SEQ} LIMIT ${limit}`,
      ),
      (rows) => rows.map(toWebhookRecord),
    );
  }

  get(query: WebhookScopeQuery, id: string): Awaitable<WebhookRecord | undefined> {
    const viewer = query.viewerPrefix;
    return map(
      this.x.get<WebhookRow>(
        sql`SELECT ${SEQ_ALL} FROM webhooks WHERE id = ${id} AND org_id IS NOT DISTINCT FROM ${query.orgId}
              AND (CAST(${viewer} AS TEXT) IS NULL
                   OR (key_prefix IS NOT NULL AND substr(key_prefix, 1, length(CAST(${viewer} AS TEXT))) = ${viewer}))`,
      ),
      (row) => (row === undefined ? undefined : toWebhookRecord(row)),
    );
  }

  remove(id: string): Awaitable<void> {
    return done(this.x.run(sql`DELETE FROM webhooks WHERE id = ${id}`));
  }

  subscribers(orgId: string | null): Awaitable<Subscriber[]> {
    return map(
      this.x.all<SubscriberRow>(SUBSCRIBERS`SELECT id, events, key_prefix FROM webhooks WHERE org_id IS NOT DISTINCT FROM ${orgId}`),
      (rows) => rows.map((r) => ({ id: r.id, events: JSON.parse(r.events) as string[], keyPrefix: r.key_prefix })),
    );
  }

  rotateSigning(id: string, previousUntil: number): Awaitable<number | undefined> {
    return map(
      this.x.get<{ signing_generation: number }>(
        sql`UPDATE webhooks SET signing_generation = signing_generation + 1, previous_signing_until = ${previousUntil}
            WHERE id = ${id} RETURNING signing_generation`,
      ),
      (row) => row?.signing_generation,
    );
  }

  markDelivered(id: string): Awaitable<void> {
    return done(this.x.run(sql`UPDATE webhooks SET failed_deliveries = 0, failing_since = NULL WHERE id = ${id}`));
  }

  countFailedDelivery(id: string, now: number, failingAfter: number): Awaitable<number | undefined> {
    return map(
      this.x.get<{ failed_deliveries: number }>(
        sql`UPDATE webhooks SET failed_deliveries = failed_deliveries + 1,
              failing_since = CASE WHEN failing_since IS NULL AND failed_deliveries + 1 >= ${failingAfter} THEN ${now} ELSE failing_since END
            WHERE id = ${id} RETURNING failed_deliveries`,
      ),
      (row) => row?.failed_deliveries,
    );
  }
}
