import type { RevealCheck, RevealCheckStore } from "../reveal-checks.js";
import type { Awaitable } from "../work.js";
import { done, map } from "./executor.js";
import type { SqlExecutor } from "./executor.js";
import { Fragment, ordered, sql } from "./template.js";

interface Row {
  check_hash: Buffer;
  max_failures: number | null;
  failures: number;
}

/** Row lock on PostgreSQL; SQLite runs units one at a time and has no FOR UPDATE. */
const FOR_UPDATE = new Fragment("", " FOR UPDATE");

/**
 * A JSON array of text bound as one parameter and read as rows of `value`:
 * `json_each(?)` on SQLite, `json_array_elements_text($n::json)` on
 * PostgreSQL (the bound value sits between the two fragments).
 */
const JSON_LIST_OPEN = new Fragment("json_each(", "json_array_elements_text(");
const JSON_LIST_CLOSE = new Fragment(")", "::json)");

/**
 * The `reveal_checks` store of both engines (docs/share.md, "The reveal
 * proof"). The refusal count is one guarded UPDATE, so concurrent wrong
 * proofs on PostgreSQL count one after the other under the row's lock and
 * never past max_failures.
 */
export class SqlRevealCheckStore implements RevealCheckStore {
  constructor(private readonly x: SqlExecutor) {}

  insert(key: string, check: RevealCheck): Awaitable<void> {
    return done(
      this.x.run(
        sql`INSERT INTO reveal_checks (key, check_hash, max_failures, failures) VALUES (${key}, ${check.checkHash}, ${check.maxFailures}, ${check.failures})`,
      ),
    );
  }

  has(key: string): Awaitable<boolean> {
    return map(this.x.get<{ one: number }>(sql`SELECT 1 AS one FROM reveal_checks WHERE key = ${key}`), (row) => row !== undefined);
  }

  withCheck(keys: readonly string[]): Awaitable<Set<string>> {
    if (keys.length === 0) return new Set();
    return map(
      this.x.all<{ key: string }>(
        sql`SELECT key FROM reveal_checks WHERE key IN (SELECT value FROM ${JSON_LIST_OPEN}${JSON.stringify(keys)}${JSON_LIST_CLOSE})`,
      ),
      (rows) => new Set(rows.map((row) => row.key)),
    );
  }

  forReveal(key: string): Awaitable<RevealCheck | undefined> {
    return map(
      this.x.get<Row>(ordered`SELECT check_hash, max_failures, failures FROM reveal_checks WHERE key = ${key}${FOR_UPDATE}`),
      (row) => (row === undefined ? undefined : { checkHash: Buffer.from(row.check_hash), maxFailures: row.max_failures, failures: row.failures }),
    );
  }

  countFailure(key: string): Awaitable<{ failures: number; maxFailures: number | null } | undefined> {
    return map(
      this.x.get<{ failures: number; max_failures: number | null }>(
        sql`UPDATE reveal_checks SET failures = failures + 1
              WHERE key = ${key} AND (max_failures IS NULL OR failures < max_failures)
              RETURNING failures, max_failures`,
      ),
      (row) => (row === undefined ? undefined : { failures: row.failures, maxFailures: row.max_failures }),
    );
  }

  remove(key: string): Awaitable<void> {
    return done(this.x.run(sql`DELETE FROM reveal_checks WHERE key = ${key}`));
  }

  pruneOrphans(): Awaitable<number> {
    return this.x.run(
      sql`DELETE FROM reveal_checks WHERE NOT EXISTS (
            SELECT 1 FROM secrets s WHERE s.scope = 'global' AND s.key = reveal_checks.key AND s.state IN ('active', 'sealed'))`,
    );
  }
}
