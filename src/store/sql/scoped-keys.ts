import type { ScopedKey } from "../../model/records.js";
import { toScopedKeyRecord } from "../rows.js";
import type { ScopedKeyRow } from "../rows.js";
import type { ScopedKeyRecord, ScopedKeyStore } from "../scoped-keys.js";
import type { Awaitable } from "../work.js";
import { done, map } from "./executor.js";
import type { SqlExecutor } from "./executor.js";
import { named, SEQ, SEQ_ALL, sql } from "./template.js";

// The token lookup and the debounced last-use write of every request made with a scoped key
// (named prepared statements on PostgreSQL, store/pg/batch/prepared.ts).
const BY_TOKEN_HASH = named("scoped_keys.by_token_hash");
const TOUCH = named("scoped_keys.touch");

/** The `scoped_keys` store of both engines; `seq` is the creation order. */
export class SqlScopedKeyStore implements ScopedKeyStore {
  constructor(private readonly x: SqlExecutor) {}

  insert(key: ScopedKey, tokenHash: string): Awaitable<void> {
    return done(
      this.x.run(
        sql`INSERT INTO scoped_keys (id, name, token_hash, permissions, prefix, expires_at, created_at, last_used_at)
            VALUES (${key.id}, ${key.name}, ${tokenHash}, ${JSON.stringify(key.permissions)}, ${key.prefix}, ${key.expiresAt},
                    ${key.createdAt}, NULL)`,
      ),
    );
  }

  byTokenHash(tokenHash: string): Awaitable<ScopedKeyRecord | undefined> {
    const found = this.x.get<ScopedKeyRow>(
      BY_TOKEN_HASH`SELECT ${SEQ} AS seq, id, name, permissions, prefix, expires_at, created_at, last_used_at
                      FROM scoped_keys WHERE token_hash = ${tokenHash}`,
    );
    return map(found, (row) => (row === undefined ? undefined : toScopedKeyRecord(row)));
  }

  byId(id: string): Awaitable<ScopedKeyRecord | undefined> {
    return map(this.x.get<ScopedKeyRow>(sql`SELECT ${SEQ_ALL} FROM scoped_keys WHERE id = ${id}`), (row) =>
      row === undefined ? undefined : toScopedKeyRecord(row),
    );
  }

  page(query: { afterSeq: number; keyPrefix: string | null; limit: number }): Awaitable<ScopedKeyRecord[]> {
    const prefix = query.keyPrefix;
    return map(
      this.x.all<ScopedKeyRow>(
        sql`SELECT ${SEQ_ALL} FROM scoped_keys
             WHERE ${SEQ} > ${query.afterSeq}
               AND (CAST(${prefix} AS TEXT) IS NULL OR substr(prefix, 1, length(CAST(${prefix} AS TEXT))) = ${prefix})
             ORDER BY ${SEQ} LIMIT ${query.limit}`,
      ),
      (rows) => rows.map(toScopedKeyRecord),
    );
  }

  remove(id: string): Awaitable<void> {
    return done(this.x.run(sql`DELETE FROM scoped_keys WHERE id = ${id}`));
  }

  touch(id: string, now: number, before: number): Awaitable<void> {
    return done(
      this.x.run(TOUCH`UPDATE scoped_keys SET last_used_at = ${now} WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at <= ${before})`),
    );
  }
}
