import type { NewRequest, RequestRecord, RequestState, RequestStore } from "../requests.js";
import type { Awaitable } from "../work.js";
import { first, map } from "./executor.js";
import type { SqlExecutor } from "./executor.js";
import { Fragment, SEQ, SEQ_ALL, sql } from "./template.js";

interface Row {
  seq: number;
  id: string;
  scope: string;
  owner_id: string | null;
  asker: string;
  description: string;
  public_key: string;
  reveal_check: Buffer | null;
  ttl_seconds: number;
  max_reads: number;
  state: RequestState;
  created_at: number;
  expires_at: number;
  answered_at: number | null;
  answer_id: string | null;
}

function toRecord(row: Row): RequestRecord {
  return {
    seq: Number(row.seq),
    id: row.id,
    scope: row.scope,
    ownerId: row.owner_id,
    asker: row.asker,
    description: row.description,
    publicKey: row.public_key,
    revealCheck: row.reveal_check === null ? null : Buffer.from(row.reveal_check),
    ttlSeconds: Number(row.ttl_seconds),
    maxReads: Number(row.max_reads),
    state: row.state,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    answeredAt: row.answered_at === null ? null : Number(row.answered_at),
    answerId: row.answer_id,
  };
}

/** `RETURNING` every column with the creation order as `seq` (SQLite's rowid, PostgreSQL's column). */
const RETURNING_ALL = new Fragment("RETURNING rowid AS seq, *", "RETURNING *");

/**
 * The `requests` store of both engines (docs/requests.md). The answer is one
 * guarded UPDATE: the row's state moves from open once, whichever node and
 * transaction comes first.
 */
export class SqlRequestStore implements RequestStore {
  constructor(private readonly x: SqlExecutor) {}

  insert(r: NewRequest): Awaitable<RequestRecord> {
    return map(
      this.x.get<Row>(
        sql`INSERT INTO requests (id, scope, owner_id, asker, description, public_key, reveal_check, ttl_seconds, max_reads, state, created_at, expires_at)
            VALUES (${r.id}, ${r.scope}, ${r.ownerId}, ${r.asker}, ${r.description}, ${r.publicKey}, ${r.revealCheck}, ${r.ttlSeconds}, ${r.maxReads}, 'open', ${r.createdAt}, ${r.expiresAt})
            ${RETURNING_ALL}`,
      ),
      (row) => toRecord(first(row)),
    );
  }

  get(id: string): Awaitable<RequestRecord | undefined> {
    return map(this.x.get<Row>(sql`SELECT ${SEQ_ALL} FROM requests WHERE id = ${id}`), (row) => (row === undefined ? undefined : toRecord(row)));
  }

  page(q: { scope: string; ownerId: string | null | undefined; afterSeq: number; limit: number }): Awaitable<RequestRecord[]> {
    const rows =
      q.ownerId === undefined
        ? this.x.all<Row>(sql`SELECT ${SEQ_ALL} FROM requests WHERE scope = ${q.scope} AND ${SEQ} > ${q.afterSeq} ORDER BY ${SEQ} LIMIT ${q.limit}`)
        : q.ownerId === null
          ? this.x.all<Row>(
              sql`SELECT ${SEQ_ALL} FROM requests WHERE scope = ${q.scope} AND owner_id IS NULL AND ${SEQ} > ${q.afterSeq} ORDER BY ${SEQ} LIMIT ${q.limit}`,
            )
          : this.x.all<Row>(
              sql`SELECT ${SEQ_ALL} FROM requests WHERE scope = ${q.scope} AND owner_id = ${q.ownerId} AND ${SEQ} > ${q.afterSeq} ORDER BY ${SEQ} LIMIT ${q.limit}`,
            );
    return map(rows, (list) => list.map(toRecord));
  }

  answer(id: string, answerId: string, now: number, expiresAt: number): Awaitable<RequestRecord | undefined> {
    return map(
      this.x.get<Row>(
        sql`UPDATE requests SET state = 'answered', answered_at = ${now}, answer_id = ${answerId}, expires_at = ${expiresAt}
              WHERE id = ${id} AND state = 'open' AND expires_at > ${now}
              ${RETURNING_ALL}`,
      ),
      (row) => (row === undefined ? undefined : toRecord(row)),
    );
  }

  remove(id: string): Awaitable<boolean> {
    return map(this.x.run(sql`DELETE FROM requests WHERE id = ${id}`), (n) => n > 0);
  }

  due(now: number, limit: number): Awaitable<RequestRecord[]> {
    return map(this.x.all<Row>(sql`SELECT ${SEQ_ALL} FROM requests WHERE expires_at <= ${now} ORDER BY expires_at LIMIT ${limit}`), (list) =>
      list.map(toRecord),
    );
  }
}
