/*
 * The outbox statements both engines run as they are (webhook_events,
 * webhook_deliveries, webhook_attempts; docs/webhooks.md): written once,
 * rendered per dialect by the `sql` tag (store/sql/template.ts). What the
 * engines do differently (claiming, the due queries) stays in
 * store/sqlite/outbox.ts and store/pg/outbox.ts.
 */
import type { AttemptRecord } from "../../model/records.js";
import type { OutboxEvent } from "../outbox.js";
import { sql } from "./template.js";
import type { Query } from "./template.js";

/**
 * The insert of an event (its body: the exact JSON every attempt sends).
 * @param now its creation time, Unix milliseconds.
 */
export function eventInsert(event: OutboxEvent, now: number): Query {
  return sql`INSERT INTO webhook_events (id, type, body, created_at) VALUES (${event.id}, ${event.type}, ${event.body}, ${now})`;
}

/** One attempt of a delivery, as its row of `webhook_attempts`. */
export interface AttemptInsert {
  deliveryId: number;
  webhookId: string;
  eventId: string;
  /** The event's type. */
  type: string;
  /** The delivery's attempt count after this attempt. */
  attempt: number;
  outcome: AttemptRecord;
  /** When it was made, Unix milliseconds. */
  at: number;
}

/** The insert of an attempt's row. */
export function attemptInsert(a: AttemptInsert): Query {
  return sql`INSERT INTO webhook_attempts (delivery_id, webhook_id, event_id, type, attempt, status, http_status, error, at)
       VALUES (${a.deliveryId}, ${a.webhookId}, ${a.eventId}, ${a.type}, ${a.attempt}, ${a.outcome.status}, ${a.outcome.httpStatus}, ${a.outcome.error}, ${a.at})`;
}

/** The number of pending deliveries, as a row `{n}` (a number on SQLite, a bigint's text on PostgreSQL: read it with Number()). */
export function pendingCountSelect(): Query {
  return sql`SELECT count(*) AS n FROM webhook_deliveries WHERE state = 'pending'`;
}

/**
 * The delete of the deliveries that are done (delivered or given up) and
 * were last changed before `cutoff` (Unix milliseconds).
 */
export function doneDeliveriesDelete(cutoff: number): Query {
  return sql`DELETE FROM webhook_deliveries WHERE state <> 'pending' AND updated_at < ${cutoff}`;
}
