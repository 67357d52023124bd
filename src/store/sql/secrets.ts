/*
 * The `secrets` statements both engines run as they are: written once,
 * rendered per dialect by the `sql` tag (store/sql/template.ts;
 * docs/architecture.md, "SQL written once"). SQLite prepares each once
 * from `render(query, "sqlite").text`; PostgreSQL declares the by-id
 * writes of a burn, seal and expiry as named prepared statements from
 * `render(query, "pg").text` (store/pg/batch/prepared.ts). Both run them
 * with `paramsOf`. What the engines do differently (the live lookups, the
 * insert, the counted read, the sweeper's due queries, the prune by key
 * prefix, the anonymous usage, the list) stays in store/sqlite/secrets.ts
 * and store/pg/secrets.ts. Times are Unix milliseconds.
 */
import type { SecretPatch, SecretReplacement } from "../secrets.js";
import { sql } from "./template.js";
import type { Query } from "./template.js";

/**
 * The delete of secret `id`'s row (a burn or a delete; docs/contract.md
 * §6, "Secret lifecycle").
 */
export function secretDelete(id: number): Query {
  return sql`DELETE FROM secrets WHERE id = ${id}`;
}

/**
 * The seal of secret `id` (state sealed: an org secret created with
 * `delete: false`, read to its limit; docs/contract.md §6).
 * @param now the change's time, Unix milliseconds.
 */
export function secretSeal(id: number, now: number): Query {
  return sql`UPDATE secrets SET state = 'sealed', updated_at = ${now} WHERE id = ${id}`;
}

/**
 * The expiry of secret `id`: a tombstone, its ciphertext dropped
 * (docs/contract.md §6).
 * @param now the change's time, Unix milliseconds.
 */
export function secretExpire(id: number, now: number): Query {
  return sql`UPDATE secrets SET state = 'expired', ciphertext = NULL, updated_at = ${now} WHERE id = ${id}`;
}

/**
 * The patch of secret `id`'s limits and state (SecretStore.patch), returning
 * the whole row as changed (a SecretRow, store/rows.ts).
 * @param now the change's time, Unix milliseconds.
 */
export function secretPatch(id: number, p: SecretPatch, now: number): Query {
  return sql`UPDATE secrets SET expires_at = ${p.expiresAt}, max_reads = ${p.maxReads}, read_count = ${p.readCount}, state = ${p.state}, updated_at = ${now}
       WHERE id = ${id} RETURNING *`;
}

/**
 * The replace of live secret `id`'s value and limits (SecretStore.replace;
 * docs/api.md, "Replace a secret"): read_count back to 0, state active,
 * the value version one more in the same statement as the new ciphertext
 * (its AAD binds it: docs/operations.md, "Encryption at rest"), from the
 * version below `r.valueVersion` only; returns the row as changed (a
 * SecretRow, store/rows.ts), or none when the row is no longer live or at
 * that version. `burn_on_limit` is stored as 0/1, `allowed_keys` as JSON
 * text (null: every reader).
 * @param now the change's time, Unix milliseconds.
 */
export function secretReplace(id: number, r: SecretReplacement, now: number): Query {
  return sql`UPDATE secrets SET ciphertext = ${r.ciphertext}, value_version = value_version + 1, expires_at = ${r.expiresAt}, max_reads = ${r.maxReads},
       read_count = 0, state = 'active', burn_on_limit = ${r.burnOnLimit ? 1 : 0},
       allowed_keys = ${r.allowedKeys === null ? null : JSON.stringify(r.allowedKeys)}, updated_at = ${now}
     WHERE id = ${id} AND state IN ('active', 'sealed') AND value_version = ${r.valueVersion - 1} RETURNING *`;
}

/**
 * The delete of a scope's expired secrets (tombstones), every key
 * (SecretStore.pruneExpired without a key prefix). With a prefix the
 * engines match keys differently (GLOB against starts_with), so that
 * statement stays per engine.
 */
export function expiredInScopeDelete(scope: string): Query {
  return sql`DELETE FROM secrets WHERE scope = ${scope} AND state = 'expired'`;
}

/**
 * The count of live secrets that count against the free tier (not past
 * their TTL at `now`, Unix milliseconds, and not made anonymously;
 * docs/contract.md §12, "License and free tier"), as a row `{n}` (a number
 * on SQLite, a bigint's text on PostgreSQL: read it with Number()).
 */
export function liveCountSelect(now: number): Query {
  return sql`SELECT count(*) AS n FROM secrets WHERE state IN ('active', 'sealed')
       AND (expires_at IS NULL OR expires_at > ${now}) AND anonymous_net IS NULL`;
}

/**
 * The mark of secret `id` as made anonymously from network `net`
 * (`anonymous_net`; docs/share.md), which takes it out of the free-tier
 * count.
 */
export function anonymousNetUpdate(id: number, net: string): Query {
  return sql`UPDATE secrets SET anonymous_net = ${net} WHERE id = ${id}`;
}
