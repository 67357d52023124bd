import type { ReceiptEnd, ReceiptRecord, ReceiptStore } from "../receipts.js";
import type { Awaitable } from "../work.js";
import { done, map } from "./executor.js";
import type { SqlExecutor } from "./executor.js";
import { sql } from "./template.js";

interface Row {
  public_id: Buffer;
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

/** The `receipts` store of both engines (docs/share.md, "Receipts"): one statement each. */
export class SqlReceiptStore implements ReceiptStore {
  constructor(private readonly x: SqlExecutor) {}

  insert(tokenHash: Buffer, r: Pick<ReceiptRecord, "publicId" | "createdAt" | "expiresAt" | "maxReads">): Awaitable<void> {
    return done(
      this.x.run(
        sql`INSERT INTO receipts (token_hash, public_id, created_at, expires_at, max_reads) VALUES (${tokenHash}, ${idBytes(r.publicId)}, ${r.createdAt}, ${r.expiresAt}, ${r.maxReads})`,
      ),
    );
  }

  byTokenHash(tokenHash: Buffer): Awaitable<ReceiptRecord | undefined> {
    return map(
      this.x.get<Row>(
        sql`SELECT public_id, created_at, expires_at, max_reads, read_count, last_read_at, state, ended_at, keep_until FROM receipts WHERE token_hash = ${tokenHash}`,
      ),
      (row) =>
        row === undefined
          ? undefined
          : {
              publicId: Buffer.from(row.public_id).toString("hex"),
              createdAt: Number(row.created_at),
              expiresAt: num(row.expires_at),
              maxReads: num(row.max_reads),
              readCount: Number(row.read_count),
              lastReadAt: num(row.last_read_at),
              state: row.state,
              endedAt: num(row.ended_at),
              keepUntil: num(row.keep_until),
            },
    );
  }

  read(publicId: string, readCount: number, at: number): Awaitable<void> {
    return done(this.x.run(sql`UPDATE receipts SET read_count = ${readCount}, last_read_at = ${at} WHERE public_id = ${idBytes(publicId)} AND state = 'live'`));
  }

  end(publicId: string, state: ReceiptEnd, at: number, keepWithoutTtlMs: number): Awaitable<void> {
    return done(
      this.x.run(
        sql`UPDATE receipts SET state = ${state}, ended_at = ${at}, keep_until = ${at} + COALESCE(expires_at - created_at, ${keepWithoutTtlMs})
              WHERE public_id = ${idBytes(publicId)} AND state = 'live'`,
      ),
    );
  }

  pruneKept(now: number, limit: number): Awaitable<number> {
    return this.x.run(
      sql`DELETE FROM receipts WHERE token_hash IN (SELECT token_hash FROM receipts WHERE keep_until IS NOT NULL AND keep_until <= ${now} LIMIT ${limit})`,
    );
  }
}
