import { VaultError } from "../../model/errors.js";
import { DUPLICATE_KEY } from "../../model/records.js";
import { SECRET_COLUMNS, toSecretRecord } from "../rows.js";
import type { SecretRow as Row } from "../rows.js";
import type { AnonymousUsage, NewSecret, SecretListQuery, SecretPatch, SecretRecord, SecretReplacement, SecretStore } from "../secrets.js";
import { FIRST_VALUE_VERSION, newSecretValues } from "../secrets.js";
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
import { ADVISORY_XACT_LOCK, orderingStatement, prepared, runPrepared } from "./batch/index.js";
import type { Queryable, WriteBehind } from "./batch/index.js";
import { PgExecutor } from "./executor.js";

const COLUMNS = SECRET_COLUMNS.join(", ");

// The statements of every read, create and burn (prepared.ts).
/** The key lookup of every read, create and check: served by secrets_live_key whatever the statistics say (schema-pg.sql version 5). */
export const LIVE_LOOKUP_SQL = `SELECT ${COLUMNS} FROM secrets WHERE scope = $1 AND key = $2 AND state IN ('active', 'sealed')`;
const LIVE = prepared("secrets.live", LIVE_LOOKUP_SQL);
const LIVE_FOR_CHANGE = prepared(
  "secrets.live_for_change",
  `SELECT ${COLUMNS} FROM secrets WHERE scope = $1 AND key = $2 AND state IN ('active', 'sealed') FOR UPDATE`,
  { ordering: true },
);
const INSERT = prepared(
  "secrets.insert",
  `INSERT INTO secrets (scope, key, is_public, state, ciphertext, value_version, created_at, updated_at, expires_at,
       max_reads, read_count, burn_on_limit, owner_id, allowed_keys)
     VALUES ($1, $2, $3, 'active', $4, ${FIRST_VALUE_VERSION}, $5, $5, $6, $7, 0, $8, $9, $10)
     RETURNING ${COLUMNS}`,
);
/**
 * The read rule of the PostgreSQL engine, its one statement
 * (SecretStore.countReadByKey; docs/contract.md §6): a read's lookup and
 * guarded count, by secrets_live_key: active, not past its TTL at $3,
 * readable by $4 (allowed_keys; null: every reader), below max_reads;
 * RETURNING the row version it counted.
 */
export const COUNTED_READ_SQL = `UPDATE secrets SET read_count = read_count + 1
     WHERE scope = $1 AND key = $2 AND state = 'active' AND (max_reads IS NULL OR read_count < max_reads)
       AND (expires_at IS NULL OR expires_at > $3) AND (allowed_keys IS NULL OR $4::text IS NULL OR allowed_keys::jsonb ? $4)
     RETURNING ${COLUMNS}`;
const COUNTED_READ = prepared("secrets.counted_read", COUNTED_READ_SQL);
// The by-id writes written once for both engines (store/sql/secrets.ts), named prepared statements here.
const REMOVE = prepared("secrets.remove", render(secretDelete(0), "pg").text);
const SEAL = prepared("secrets.seal", render(secretSeal(0, 0), "pg").text);
const EXPIRE = prepared("secrets.expire", render(secretExpire(0, 0), "pg").text);

/** The `$n` values of a statement of store/sql/secrets.ts, in order. */
function bound(query: Query): unknown[] {
  return paramsOf(query, render(query, "pg"));
}

/**
 * A transaction-level advisory lock key taken before the free-tier count, so
 * that two nodes creating at once cannot both pass a count of limit - 1
 * (released at COMMIT or ROLLBACK).
 */
export const ACTIVE_LIMIT_LOCK = 0x65765f6c696d6974n; // "ev_limit"

/**
 * The PostgreSQL `secrets` store, over one unit of work's client. The
 * statements both engines agree on are written once (store/sql/secrets.ts);
 * the others are the SQLite store's in PostgreSQL's dialect: `starts_with`
 * for a key prefix, row locks, RETURNING the inserted row, no index hints.
 * Times are Unix milliseconds.
 */
export class PgSecretStore implements SecretStore {
  /** The unnamed statements written once for both engines (store/sql/secrets.ts). */
  private readonly x: PgExecutor;

  /**
   * @param db the unit of work's client.
   * @param beforeChange called with the scope right before a counted read's
   *   UPDATE or a create's INSERT is sent, for what the change's event will
   *   need whatever its outcome (the webhook subscribers, store/pg/batch/prefetch.ts):
   *   sent first on the pipelined connection, so the change's statement is
   *   the last of its round trip.
   * @param behind the unit of work's write-behind statements: an expiry is
   *   sent without waiting for its answer (store/pg/batch/write-behind.ts); absent,
   *   expire() waits for it.
   */
  constructor(
    private readonly db: Queryable,
    private readonly beforeChange?: (scope: string) => void,
    private readonly behind?: WriteBehind,
  ) {
    this.x = new PgExecutor(db);
  }

  async live(scope: string, key: string): Promise<SecretRecord | undefined> {
    const r = await runPrepared<Row>(this.db, LIVE, [scope, key]);
    const row = r.rows[0];
    return row === undefined ? undefined : toSecretRecord(row);
  }

  async liveForChange(scope: string, key: string): Promise<SecretRecord | undefined> {
    // The row lock a counted read or a replace takes anyway, taken at the read (SecretStore.liveForChange).
    const r = await runPrepared<Row>(this.db, LIVE_FOR_CHANGE, [scope, key]);
    const row = r.rows[0];
    return row === undefined ? undefined : toSecretRecord(row);
  }

  async insert(s: NewSecret): Promise<SecretRecord> {
    try {
      return await this.insertRow(s);
    } catch (err) {
      // unique_violation on secrets_live_key: another unit created the key first.
      if ((err as { code?: unknown }).code === "23505") throw new VaultError("conflict", DUPLICATE_KEY);
      throw err;
    }
  }

  private async insertRow(s: NewSecret): Promise<SecretRecord> {
    this.beforeChange?.(s.scope);
    const r = await runPrepared<Row>(this.db, INSERT, newSecretValues(s));
    return toSecretRecord(r.rows[0] as Row);
  }

  async countReadByKey(scope: string, key: string, now: number, principalKeyId: string | null): Promise<SecretRecord | undefined> {
    this.beforeChange?.(scope);
    const r = await runPrepared<Row>(this.db, COUNTED_READ, [scope, key, now, principalKeyId]);
    const row = r.rows[0];
    return row === undefined ? undefined : toSecretRecord(row);
  }

  async remove(id: number): Promise<void> {
    await runPrepared(this.db, REMOVE, bound(secretDelete(id)));
  }

  async seal(id: number, now: number): Promise<void> {
    await runPrepared(this.db, SEAL, bound(secretSeal(id, now)));
  }

  /**
   * Makes secret `id` a tombstone (SecretStore.expire). With the unit's
   * write-behind set, returns once the UPDATE is sent: nothing in the unit
   * reads its answer, and the sweeper expires a unit's secrets one after
   * the other, so awaiting each UPDATE put a round trip per secret on the
   * sweeper, about a millisecond each while reads kept the event loop busy
   * (docs/performance.md, "Reads at scale"). A failure fails the unit at
   * COMMIT; later statements of the unit see the row expired (the
   * connection runs them in order).
   */
  expire(id: number, now: number): Promise<void> | undefined {
    const statement = runPrepared(this.db, EXPIRE, bound(secretExpire(id, now)));
    if (this.behind === undefined) return statement.then(() => undefined);
    this.behind.track(statement);
    return undefined;
  }

  async patch(id: number, p: SecretPatch, now: number): Promise<SecretRecord> {
    return toSecretRecord((await this.x.get<Row>(secretPatch(id, p, now))) as Row);
  }

  async replace(id: number, s: SecretReplacement, now: number): Promise<SecretRecord | undefined> {
    const row = await this.x.get<Row>(secretReplace(id, s, now));
    return row === undefined ? undefined : toSecretRecord(row);
  }

  async due(now: number, limit: number): Promise<SecretRecord[]> {
    // SKIP LOCKED: sweepers on several nodes take disjoint rows.
    const r = await this.db.query<Row>(
      orderingStatement(`SELECT * FROM secrets WHERE state IN ('active', 'sealed') AND expires_at IS NOT NULL AND expires_at <= $1
         ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED`).with([now, limit]),
    );
    return r.rows.map(toSecretRecord);
  }

  async dueInScope(now: number, scope: string): Promise<SecretRecord[]> {
    const r = await this.db.query<Row>(
      orderingStatement(`SELECT * FROM secrets WHERE state IN ('active', 'sealed') AND expires_at IS NOT NULL AND expires_at <= $1 AND scope = $2
         FOR UPDATE SKIP LOCKED`).with([now, scope]),
    );
    return r.rows.map(toSecretRecord);
  }

  async pruneExpired(scope: string, keyPrefix: string | undefined): Promise<number> {
    if (keyPrefix === undefined) return this.x.run(expiredInScopeDelete(scope));
    // Per engine: the key prefix matched with starts_with(), with GLOB on SQLite (a different function and value).
    const r = await this.db.query(
      "DELETE FROM secrets WHERE scope = $1 AND state = 'expired' AND is_public = 0 AND starts_with(key, $2)",
      [scope, keyPrefix],
    );
    return r.rowCount ?? 0;
  }

  async countActive(now: number): Promise<number> {
    // The lock is this engine's own (SQLite's one writer orders creates); the count is shared.
    await this.db.query(ADVISORY_XACT_LOCK.with([ACTIVE_LIMIT_LOCK.toString()]));
    const row = await this.x.get<{ n: string }>(liveCountSelect(now));
    return Number(row?.n ?? 0);
  }

  async markAnonymous(id: number, net: string): Promise<void> {
    await this.x.run(anonymousNetUpdate(id, net));
  }

  async anonymousUsage(now: number, net: string): Promise<AnonymousUsage> {
    await this.db.query(ADVISORY_XACT_LOCK.with([ACTIVE_LIMIT_LOCK.toString()]));
    const r = await this.db.query<AnonymousUsage>(
      `SELECT count(*)::integer AS count, coalesce(sum(octet_length(ciphertext)), 0)::bigint::float8 AS bytes,
           (count(*) FILTER (WHERE anonymous_net = $1))::integer AS "netCount",
           coalesce(sum(octet_length(ciphertext)) FILTER (WHERE anonymous_net = $1), 0)::float8 AS "netBytes"
         FROM secrets WHERE anonymous_net IS NOT NULL AND state IN ('active', 'sealed')
           AND (expires_at IS NULL OR expires_at > $2)`,
      [net, now],
    );
    return r.rows[0] ?? { count: 0, bytes: 0, netCount: 0, netBytes: 0 };
  }

  /** A page of a scope's live secrets; `id > 0` (always true) lets it use secrets_live_list (schema-pg.sql version 5). */
  async list(q: SecretListQuery): Promise<SecretRecord[]> {
    const states = q.includeSealed ? ["active", "sealed"] : ["active"];
    const r = await this.db.query<Row>(
      `SELECT * FROM secrets
         WHERE scope = $1 AND state = ANY($2::text[]) AND (expires_at IS NULL OR expires_at > $3) AND id > 0 AND id > $4
           AND ($5::text IS NULL OR (is_public = 0 AND starts_with(key, $5)))
         ORDER BY id LIMIT $6`,
      [q.scope, states, q.now, q.afterId, q.keyPrefix ?? null, q.limit],
    );
    return r.rows.map(toSecretRecord);
  }
}
