import type { Statement } from "better-sqlite3";
import type { Db } from "./db.js";
import { VaultError } from "../../model/errors.js";
import { DUPLICATE_KEY } from "../../model/records.js";
import { SECRET_COLUMNS, secretRecordFromColumns, toSecretRecord } from "../rows.js";
import type { SecretRow as Row } from "../rows.js";
import type { AnonymousUsage, NewSecret, SecretListQuery, SecretPatch, SecretRecord, SecretReplacement, SecretStore } from "../secrets.js";
import { FIRST_VALUE_VERSION, newSecretValues } from "../secrets.js";
import { globPrefix } from "./glob.js";
import { chainedKey } from "./chained-key.js";
import {
  anonymousNetUpdate,
  expiredInScopeDelete,
  liveCountSelect,
  secretDelete,
  secretExpire,
  secretPatch,
  secretReplace,
  secretSeal,
} from "../sql/secrets.js";
import { paramsOf, render } from "../sql/template.js";
import type { Query } from "../sql/template.js";
import { ReadTally, STORED_READ_COUNT, secretsWithReads } from "./tally/index.js";

/** SECRET_COLUMNS over secretsWithReads(): the read count of the stored pair (tally/secret-reads.ts). */
const COLUMNS = SECRET_COLUMNS.map((c) => (c === "read_count" ? `${STORED_READ_COUNT} AS read_count` : `s.${c}`)).join(", ");

/**
 * The read rule of the SQLite engine, stated once here
 * (SecretStore.countReadByKey; docs/contract.md §6): a read of `row` is
 * counted only when it is active, not past its TTL at `now` (Unix ms),
 * readable by `principalKeyId` (its `allowed_keys`; null: every reader)
 * and below max_reads. Both ways the tally applies a count check it here.
 */
function countable(
  row: Pick<SecretRecord, "state" | "expiresAt" | "allowedKeys" | "readCount" | "maxReads">,
  now: number,
  principalKeyId: string | null,
): boolean {
  return (
    row.state === "active" &&
    (row.expiresAt === null || row.expiresAt > now) &&
    (row.allowedKeys === null || principalKeyId === null || row.allowedKeys.includes(principalKeyId)) &&
    (row.maxReads === null || row.readCount < row.maxReads)
  );
}

/**
 * A statement of store/sql/secrets.ts prepared once for SQLite from its
 * text (`sample`'s values are not used: every call binds its own).
 */
function prepareShared<R = unknown>(db: Db, sample: Query): Statement<unknown[], R> {
  return db.prepare<unknown[], R>(render(sample, "sqlite").text);
}

/** The bound values of a statement of store/sql/secrets.ts, in its SQLite order. */
function bound(query: Query): unknown[] {
  return paramsOf(query, render(query, "sqlite"));
}

interface ListParams {
  scope: string;
  now: number;
  after: number;
  glob: string | null;
  limit: number;
}


/**
 * The SQLite `secrets` store: statements prepared once per database, every
 * method synchronous (it runs inside the group commit's unit of work).
 * Read counts are written behind (tally/read-tally.ts): every record it returns
 * carries the tally's count, and every change of a row first writes the
 * tally's pair into it. Times are Unix milliseconds.
 */
export class SqliteSecretStore implements SecretStore {
  private readonly q;
  private readonly lists = new Map<string, Statement<ListParams, Row>>();

  /**
   * @param db the vault's database.
   * @param tally the write-behind read counts (shared with the audit
   *   store's key chain); by default one of its own, which defers nothing
   *   until attached to a group commit.
   */
  constructor(
    private readonly db: Db,
    private readonly tally: ReadTally = new ReadTally(db),
  ) {
    this.q = {
      // Raw rows (arrays, in SECRET_COLUMNS order): better-sqlite3 makes no
      // property name per column for them, the hot read's cheapest form.
      live: db
        .prepare<[string, string], unknown[]>(
          `SELECT ${COLUMNS} FROM ${secretsWithReads()} WHERE s.scope = ? AND s.key = ? AND s.state IN ('active', 'sealed')`,
        )
        .raw(true),
      // The id from lastInsertRowid, not RETURNING (a temporary table per statement in SQLite).
      insert: db.prepare<[string, string, number, Buffer, number, number, number | null, number | null, number, string | null, string | null]>(
        `INSERT INTO secrets (scope, key, is_public, state, ciphertext, value_version, created_at, updated_at, expires_at,
             max_reads, read_count, burn_on_limit, owner_id, allowed_keys)
           VALUES (?, ?, ?, 'active', ?, ${FIRST_VALUE_VERSION}, ?, ?, ?, ?, 0, ?, ?, ?)`,
      ),
      // The compare-and-set of a counted read (countRead): the row's count, state and limit still as read.
      // No RETURNING: SQLite collects returned rows in a temporary table first.
      countRead: db.prepare<[number, number, string, number | null]>(
        "UPDATE secrets SET read_count = read_count + 1 WHERE id = ? AND read_count = ? AND state = ? AND max_reads IS ?",
      ),
      // The statements written once for both engines (store/sql/secrets.ts).
      remove: prepareShared(db, secretDelete(0)),
      // The audit head of a live secret about to stop being live (schema.sql version 13).
      auditHead: db.prepare<[number], { scope: string; key: string; head: number }>(
        "SELECT scope, key, audit_head AS head FROM secrets WHERE id = ? AND audit_head IS NOT NULL AND state IN ('active', 'sealed')",
      ),
      // A span of one row; the head may already have one (a checkpoint row).
      keepHead: db.prepare<[string, string, number, number]>(
        "INSERT OR IGNORE INTO audit_span (kind, scope, value, lo, hi) VALUES ('k', ?, ?, ?, ?)",
      ),
      seal: prepareShared(db, secretSeal(0, 0)),
      expire: prepareShared(db, secretExpire(0, 0)),
      patch: prepareShared<Row>(db, secretPatch(0, { expiresAt: null, maxReads: null, readCount: 0, state: "active" }, 0)),
      replace: prepareShared<Row>(
        db,
        secretReplace(0, { ciphertext: Buffer.alloc(0), valueVersion: 1, expiresAt: null, maxReads: null, burnOnLimit: false, allowedKeys: null }, 0),
      ),
      due: db.prepare<[number, number], Row>(
        `SELECT ${COLUMNS} FROM ${secretsWithReads()}
           WHERE s.state IN ('active', 'sealed') AND s.expires_at IS NOT NULL AND s.expires_at <= ?
           ORDER BY s.expires_at LIMIT ?`,
      ),
      dueInScope: db.prepare<[number, string], Row>(
        `SELECT ${COLUMNS} FROM ${secretsWithReads("secrets_due")}
           WHERE s.state IN ('active', 'sealed') AND s.expires_at IS NOT NULL AND s.expires_at <= ? AND s.scope = ?`,
      ),
      pruneScope: prepareShared(db, expiredInScopeDelete("")),
      // Per engine: the key prefix matched with GLOB (glob.ts), with starts_with() on PostgreSQL (a different function and value).
      pruneScopePrefix: db.prepare<[string, string]>(
        "DELETE FROM secrets WHERE scope = ? AND state = 'expired' AND is_public = 0 AND key GLOB ?",
      ),
      countActive: prepareShared<{ n: number }>(db, liveCountSelect(0)),
      markAnonymous: prepareShared(db, anonymousNetUpdate(0, "")),
      anonymousUsage: db.prepare<[string, string, number], AnonymousUsage>(
        `SELECT count(*) AS count, coalesce(sum(length(ciphertext)), 0) AS bytes,
             coalesce(sum(anonymous_net = ?), 0) AS netCount,
             coalesce(sum(CASE WHEN anonymous_net = ? THEN length(ciphertext) ELSE 0 END), 0) AS netBytes
           FROM secrets WHERE anonymous_net IS NOT NULL AND state IN ('active', 'sealed')
             AND (expires_at IS NULL OR expires_at > ?)`,
      ),
    };
  }

  live(scope: string, key: string): SecretRecord | undefined {
    const r = this.q.live.get(scope, key);
    return r === undefined ? undefined : this.withTally(secretRecordFromColumns(r));
  }

  /** A record with the read tally's count (tally/read-tally.ts), in place. */
  private withTally(record: SecretRecord): SecretRecord {
    record.readCount = this.tally.readCount(record.id, record.readCount);
    return record;
  }

  /** Records of rows, with the tally's read counts. */
  private toRecords(rows: Row[]): SecretRecord[] {
    return rows.map((row) => this.withTally(toSecretRecord(row)));
  }

  liveForChange(scope: string, key: string): SecretRecord | undefined {
    return this.live(scope, key);
  }

  /** The new row as stored: the input, its id, state active, no reads, value version 1 (no RETURNING * to map). */
  insert(s: NewSecret): SecretRecord {
    let id: number;
    try {
      id = this.insertRow(s);
      this.tally.touch(id);
    } catch (err) {
      if ((err as { code?: unknown }).code === "SQLITE_CONSTRAINT_UNIQUE") throw new VaultError("conflict", DUPLICATE_KEY);
      throw err;
    }
    return {
      id,
      scope: s.scope,
      key: s.key,
      isPublic: s.isPublic,
      state: "active",
      ciphertext: s.ciphertext,
      createdAt: s.now,
      expiresAt: s.expiresAt,
      maxReads: s.maxReads,
      readCount: 0,
      burnOnLimit: s.burnOnLimit,
      ownerId: s.ownerId,
      allowedKeys: s.allowedKeys,
      valueVersion: FIRST_VALUE_VERSION,
    };
  }

  private insertRow(s: NewSecret): number {
    // created_at and updated_at are both `now`.
    const [scope, key, isPublic, ciphertext, now, ...rest] = newSecretValues(s);
    const result = this.q.insert.run(scope, key, isPublic, ciphertext, now, now, ...rest);
    return Number(result.lastInsertRowid);
  }

  /**
   * SecretStore.countReadByKey: the live row (live()), the read rule
   * (countable) and its count (countRead), synchronously.
   * @returns the record as counted (its readCount after this read), or
   *   undefined when no live row matched or the rule refused.
   */
  countReadByKey(scope: string, key: string, now: number, principalKeyId: string | null): SecretRecord | undefined {
    const row = this.live(scope, key);
    if (row === undefined) return undefined;
    const counted = this.countRead(row, now, principalKeyId);
    if (counted === undefined) return undefined;
    row.readCount = counted.readCount;
    return row;
  }

  /**
   * Counts one read of `secret` as the caller read it (a live() record),
   * when the read rule (countable) admits it at `now` (Unix ms) for
   * `principalKeyId`. How the count is applied:
   * - Inside a batch, for a secret whose key has an audit chain, written
   *   behind (tally/read-tally.ts): no page written; the unit read the row
   *   and the tally's count in this transaction, and the secret.read audit
   *   row is the count's redo log.
   * - Otherwise a compare-and-set on the row as read (its read_count, state
   *   and max_reads). Inside the batch's write transaction no other writer
   *   runs between the read and this, so it refuses only what the rule
   *   refuses; a reader on another connection that saw an older row is
   *   refused, never counted twice.
   * @returns the counts after the read, or undefined when the rule or the
   *   compare-and-set refused.
   */
  countRead(
    secret: Pick<SecretRecord, "id" | "key" | "state" | "readCount" | "maxReads" | "expiresAt" | "allowedKeys">,
    now: number,
    principalKeyId: string | null,
  ): { readCount: number; maxReads: number | null } | undefined {
    if (!countable(secret, now, principalKeyId)) return undefined;
    const counted = { readCount: secret.readCount + 1, maxReads: secret.maxReads };
    if (this.tally.active && chainedKey(secret.key)) {
      if (this.tally.readCount(secret.id, secret.readCount) !== secret.readCount) return undefined;
      this.tally.setReadCount(secret.id, counted.readCount);
      return counted;
    }
    this.tally.settle(secret.id);
    if (this.q.countRead.run(secret.id, secret.readCount, secret.state, secret.maxReads).changes !== 1) return undefined;
    return counted;
  }

  remove(id: number): void {
    this.tally.settle(id);
    this.keepAuditHead(id);
    this.q.remove.run(...bound(secretDelete(id)));
  }

  /**
   * Keeps the audit head of a live secret that stops being live (removed or
   * expired) as a key span, where the audit store's key chain finds it once
   * no live secret holds it (schema.sql version 13, store/sqlite/audit/key-chain.ts).
   */
  private keepAuditHead(id: number): void {
    const h = this.q.auditHead.get(id);
    if (h !== undefined) this.q.keepHead.run(h.scope, h.key, h.head, h.head);
  }

  seal(id: number, now: number): void {
    this.tally.settle(id);
    this.q.seal.run(...bound(secretSeal(id, now)));
  }

  expire(id: number, now: number): void {
    this.tally.settle(id);
    this.keepAuditHead(id);
    this.q.expire.run(...bound(secretExpire(id, now)));
  }

  patch(id: number, p: SecretPatch, now: number): SecretRecord {
    this.tally.settle(id);
    return toSecretRecord(this.q.patch.get(...bound(secretPatch(id, p, now))) as Row);
  }

  replace(id: number, r: SecretReplacement, now: number): SecretRecord | undefined {
    this.tally.settle(id);
    const row = this.q.replace.get(...bound(secretReplace(id, r, now)));
    return row === undefined ? undefined : toSecretRecord(row);
  }

  due(now: number, limit: number): SecretRecord[] {
    return this.toRecords(this.q.due.all(now, limit));
  }

  dueInScope(now: number, scope: string): SecretRecord[] {
    return this.toRecords(this.q.dueInScope.all(now, scope));
  }

  pruneExpired(scope: string, keyPrefix: string | undefined): number {
    const result =
      keyPrefix === undefined ? this.q.pruneScope.run(...bound(expiredInScopeDelete(scope))) : this.q.pruneScopePrefix.run(scope, globPrefix(keyPrefix));
    return result.changes;
  }

  markAnonymous(id: number, net: string): void {
    this.q.markAnonymous.run(...bound(anonymousNetUpdate(id, net)));
  }

  anonymousUsage(now: number, net: string): AnonymousUsage {
    return this.q.anonymousUsage.get(net, net, now) ?? { count: 0, bytes: 0, netCount: 0, netBytes: 0 };
  }

  countActive(now: number): number {
    return this.q.countActive.get(...bound(liveCountSelect(now)))?.n ?? 0;
  }

  list(query: SecretListQuery): SecretRecord[] {
    return this.toRecords(
      this.listStatement(query.includeSealed, query.keyPrefix !== undefined).all({
        scope: query.scope,
        now: query.now,
        after: query.afterId,
        glob: query.keyPrefix !== undefined ? globPrefix(query.keyPrefix) : null,
        limit: query.limit,
      }),
    );
  }

  /**
   * The list statement for one combination of (sealed included, by key
   * prefix), prepared on first use and kept.
   */
  private listStatement(includeSealed: boolean, byPrefix: boolean): Statement<ListParams, Row> {
    const name = `${includeSealed}:${byPrefix}`;
    let statement = this.lists.get(name);
    if (!statement) {
      const states = includeSealed ? "('active', 'sealed')" : "('active')";
      const prefixClause = byPrefix ? "AND s.is_public = 0 AND s.key GLOB @glob" : "";
      statement = this.db.prepare<ListParams, Row>(
        `SELECT ${COLUMNS} FROM ${secretsWithReads("secrets_live_list")}
         WHERE s.scope = @scope AND s.state IN ('active', 'sealed') AND s.state IN ${states}
           AND (s.expires_at IS NULL OR s.expires_at > @now) AND s.id > @after ${prefixClause}
         ORDER BY s.id LIMIT @limit`,
      );
      this.lists.set(name, statement);
    }
    return statement;
  }
}
