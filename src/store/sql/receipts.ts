import type { ReceiptEnd, ReceiptKey, ReceiptRecord, ReceiptStore } from "../receipts.js";
import type { Awaitable } from "../work.js";
import { map } from "./executor.js";
import type { SqlExecutor } from "./executor.js";
import { sql } from "./template.js";

interface Row {
  secret_id: number;
  public_id: Buffer;
  token_hash: Buffer;
  created_at: number;
  expires_at: number | null;
  max_reads: number | null;
  read_count: number;
  last_read_at: number | null;
  state: ReceiptRecord["state"];
  ended_at: number | null;
  keep_until: number | null;
}

const num = (n: number | null): number | null => (n === null ? null : Number(n));

/** A public id (64 hex characters) as the 32 bytes the table keeps. */
const idBytes = (publicId: string): Buffer => Buffer.from(publicId, "hex");

function toRecord(row: Row): ReceiptRecord {
  return {
    secretId: Number(row.secret_id),
    publicId: Buffer.from(row.public_id).toString("hex"),
    tokenHash: Buffer.from(row.token_hash),
    createdAt: Number(row.created_at),
    expiresAt: num(row.expires_at),
    maxReads: num(row.max_reads),
    readCount: Number(row.read_count),
    lastReadAt: num(row.last_read_at),
    state: row.state,
    endedAt: num(row.ended_at),
    keepUntil: num(row.keep_until),
  };
}

/**
 * The `receipts` store of both engines (docs/share.md, "Receipts"): one
 * statement each, every one by the primary key (secret row id, public id)
 * but the sweeper's.
 */
export class SqlReceiptStore implements ReceiptStore {
  constructor(private readonly x: SqlExecutor) {}

  insert(r: Pick<ReceiptRecord, "secretId" | "publicId" | "tokenHash" | "createdAt" | "expiresAt" | "maxReads">): Awaitable<void> {
    // Nothing in the unit reads its answer: on PostgreSQL it rides the COMMIT's round trip.
    return this.x.send(
      sql`INSERT INTO receipts (secret_id, public_id, token_hash, created_at, expires_at, max_reads)
          VALUES (${r.secretId}, ${idBytes(r.publicId)}, ${r.tokenHash}, ${r.createdAt}, ${r.expiresAt}, ${r.maxReads})`,
    );
  }

  bySecretId(secretId: number): Awaitable<ReceiptRecord[]> {
    return map(
      this.x.all<Row>(
        sql`SELECT secret_id, public_id, token_hash, created_at, expires_at, max_reads, read_count, last_read_at, state, ended_at, keep_until
              FROM receipts WHERE secret_id = ${secretId}`,
      ),
      (rows) => rows.map(toRecord),
    );
  }

  read(key: ReceiptKey, readCount: number, at: number): Awaitable<void> {
    return this.x.send(
        sql`UPDATE receipts SET read_count = ${readCount}, last_read_at = ${at}
              WHERE secret_id = ${key.secretId} AND public_id = ${idBytes(key.publicId)} AND state = 'live'`,
    );
  }

  end(key: ReceiptKey, state: ReceiptEnd, at: number, keepWithoutTtlMs: number): Awaitable<void> {
    return this.x.send(
        sql`UPDATE receipts SET state = ${state}, ended_at = ${at}, keep_until = ${at} + COALESCE(expires_at - created_at, ${keepWithoutTtlMs})
              WHERE secret_id = ${key.secretId} AND public_id = ${idBytes(key.publicId)} AND state = 'live'`,
    );
  }

  pruneKept(now: number, limit: number): Awaitable<number> {
    return this.x.run(
      sql`DELETE FROM receipts WHERE (secret_id, public_id) IN (
            SELECT secret_id, public_id FROM receipts WHERE keep_until IS NOT NULL AND keep_until <= ${now} LIMIT ${limit})`,
    );
  }
}
