import { KeptAnswerRace } from "../idempotency.js";
import type { IdempotencyStore, KeptAnswer } from "../idempotency.js";
import type { Awaitable } from "../work.js";
import { done, map } from "./executor.js";
import type { SqlExecutor } from "./executor.js";
import { sql } from "./template.js";

interface Row {
  id_hash: Buffer;
  fingerprint: Buffer;
  status: number;
  body: Buffer;
  created_at: number;
  expires_at: number;
}

/** The `idempotency` store of both engines (docs/api.md, "Retries"). */
export class SqlIdempotencyStore implements IdempotencyStore {
  constructor(private readonly x: SqlExecutor) {}

  get(idHash: Buffer, now: number): Awaitable<KeptAnswer | undefined> {
    return map(
      this.x.get<Row>(sql`SELECT id_hash, fingerprint, status, body, created_at, expires_at FROM idempotency WHERE id_hash = ${idHash} AND expires_at > ${now}`),
      (row) =>
        row === undefined
          ? undefined
          : {
              idHash: Buffer.from(row.id_hash),
              fingerprint: Buffer.from(row.fingerprint),
              status: Number(row.status),
              body: Buffer.from(row.body),
              createdAt: Number(row.created_at),
              expiresAt: Number(row.expires_at),
            },
    );
  }

  insert(a: KeptAnswer): Awaitable<void> {
    const race = (err: unknown): never => {
      throw this.x.isUniqueViolation(err) ? new KeptAnswerRace() : err;
    };
    try {
      const ran = this.x.run(
        sql`INSERT INTO idempotency (id_hash, fingerprint, status, body, created_at, expires_at)
            VALUES (${a.idHash}, ${a.fingerprint}, ${a.status}, ${a.body}, ${a.createdAt}, ${a.expiresAt})`,
      );
      return ran instanceof Promise ? done(ran.catch(race)) : undefined;
    } catch (err) {
      return race(err);
    }
  }

  pruneDue(now: number, limit: number): Awaitable<number> {
    return this.x.run(sql`DELETE FROM idempotency WHERE id_hash IN (SELECT id_hash FROM idempotency WHERE expires_at <= ${now} LIMIT ${limit})`);
  }
}
