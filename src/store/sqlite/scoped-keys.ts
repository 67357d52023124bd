import type { Db } from "./db.js";
import type { ScopedKey } from "../../domain/keys.js";
import type { ScopedKeyRecord, ScopedKeyStore } from "../scoped-keys.js";
import { toScopedKeyRecord } from "../rows.js";
import type { ScopedKeyRow as Row } from "../rows.js";
import { globPrefix } from "./glob.js";

/** The SQLite `scoped_keys` store: statements prepared once; `seq` is the rowid. */
export class SqliteScopedKeyStore implements ScopedKeyStore {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      insert: db.prepare<[string, string, string, string, string | null, number | null, number]>(
        `INSERT INTO scoped_keys (id, name, token_hash, permissions, prefix, expires_at, created_at, last_used_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, NULL)`,
      ),
      byHash: db.prepare<[string], Row>("SELECT rowid AS seq, * FROM scoped_keys WHERE token_hash = ?"),
      byId: db.prepare<[string], Row>("SELECT rowid AS seq, * FROM scoped_keys WHERE id = ?"),
      page: db.prepare<{ after: number; glob: string | null; limit: number }, Row>(
        `SELECT rowid AS seq, * FROM scoped_keys
         WHERE rowid > @after AND (@glob IS NULL OR prefix GLOB @glob)
         ORDER BY rowid LIMIT @limit`,
      ),
      remove: db.prepare<[string]>("DELETE FROM scoped_keys WHERE id = ?"),
      touch: db.prepare<[number, string, number]>(
        "UPDATE scoped_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)",
      ),
    };
  }

  insert(key: ScopedKey, tokenHash: string): void {
    this.q.insert.run(key.id, key.name, tokenHash, JSON.stringify(key.permissions), key.prefix, key.expiresAt, key.createdAt);
  }

  byTokenHash(tokenHash: string): ScopedKeyRecord | undefined {
    const row = this.q.byHash.get(tokenHash);
    return row === undefined ? undefined : toScopedKeyRecord(row);
  }

  byId(id: string): ScopedKeyRecord | undefined {
    const row = this.q.byId.get(id);
    return row === undefined ? undefined : toScopedKeyRecord(row);
  }

  page(query: { afterSeq: number; keyPrefix: string | null; limit: number }): ScopedKeyRecord[] {
    return this.q.page
      .all({ after: query.afterSeq, glob: query.keyPrefix === null ? null : globPrefix(query.keyPrefix), limit: query.limit })
      .map(toScopedKeyRecord);
  }

  remove(id: string): void {
    this.q.remove.run(id);
  }

  touch(id: string, now: number, before: number): void {
    this.q.touch.run(now, id, before);
  }
}
