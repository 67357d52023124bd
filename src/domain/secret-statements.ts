import type { Statement } from "better-sqlite3";
import type { Db } from "../db.js";
import type { ListParams, Row } from "./secret-model.js";

/**
 * The prepared statements of SecretLifecycle over the `secrets` table,
 * created once per database. Times in the parameters are Unix milliseconds.
 */
export function secretStatements(db: Db) {
  return {
    live: db.prepare<[string, string], Row>(
      "SELECT * FROM secrets WHERE scope = ? AND key = ? AND state IN ('active', 'sealed')",
    ),
    insert: db.prepare(
      `INSERT INTO secrets (scope, key, is_public, state, ciphertext, created_at, updated_at, expires_at,
           max_reads, read_count, burn_on_limit, owner_id, allowed_keys)
         VALUES (@scope, @key, @is_public, 'active', @ciphertext, @now, @now, @expires_at,
           @max_reads, 0, @burn_on_limit, @owner_id, @allowed_keys)
         RETURNING *`,
    ),
    countRead: db.prepare<[number], Pick<Row, "read_count" | "max_reads">>(
      `UPDATE secrets SET read_count = read_count + 1
         WHERE id = ? AND state = 'active' AND (max_reads IS NULL OR read_count < max_reads)
         RETURNING read_count, max_reads`,
    ),
    remove: db.prepare<[number]>("DELETE FROM secrets WHERE id = ?"),
    seal: db.prepare<[number, number]>("UPDATE secrets SET state = 'sealed', updated_at = ? WHERE id = ?"),
    expire: db.prepare<[number, number]>(
      "UPDATE secrets SET state = 'expired', ciphertext = NULL, updated_at = ? WHERE id = ?",
    ),
    patch: db.prepare(
      `UPDATE secrets SET expires_at = @expires_at, max_reads = @max_reads, read_count = @read_count,
           state = @state, updated_at = @now WHERE id = @id RETURNING *`,
    ),
    due: db.prepare<[number, number], Row>(
      `SELECT * FROM secrets WHERE state IN ('active', 'sealed') AND expires_at IS NOT NULL AND expires_at <= ?
         ORDER BY expires_at LIMIT ?`,
    ),
    dueInScope: db.prepare<[number, string], Row>(
      `SELECT * FROM secrets INDEXED BY secrets_due
         WHERE state IN ('active', 'sealed') AND expires_at IS NOT NULL AND expires_at <= ? AND scope = ?`,
    ),
    pruneScope: db.prepare<[string]>("DELETE FROM secrets WHERE scope = ? AND state = 'expired'"),
    pruneScopePrefix: db.prepare<[string, string]>(
      "DELETE FROM secrets WHERE scope = ? AND state = 'expired' AND is_public = 0 AND key GLOB ?",
    ),
    countActive: db.prepare<[number], { n: number }>(
      `SELECT count(*) AS n FROM secrets WHERE state IN ('active', 'sealed')
         AND (expires_at IS NULL OR expires_at > ?)`,
    ),
  };
}

/**
 * The list statements of SecretLifecycle.list(), one per combination of
 * (sealed included, by key prefix), each prepared on first use and kept.
 */
export class ListStatements {
  private readonly statements = new Map<string, Statement<ListParams, Row>>();

  constructor(private readonly db: Db) {}

  /**
   * The statement listing a scope's live secrets after a row id, oldest
   * first, leaving out those past expires_at.
   * @param includeSealed sealed secrets too (org lists), else active only.
   * @param byPrefix only keyed secrets whose key matches `@glob`.
   */
  get(includeSealed: boolean, byPrefix: boolean): Statement<ListParams, Row> {
    const name = `${includeSealed}:${byPrefix}`;
    let statement = this.statements.get(name);
    if (!statement) {
      const states = includeSealed ? "('active', 'sealed')" : "('active')";
      const prefixClause = byPrefix ? "AND is_public = 0 AND key GLOB @glob" : "";
      statement = this.db.prepare<ListParams, Row>(
        `SELECT * FROM secrets INDEXED BY secrets_live_list
         WHERE scope = @scope AND state IN ('active', 'sealed') AND state IN ${states}
           AND (expires_at IS NULL OR expires_at > @now) AND id > @after ${prefixClause}
         ORDER BY id LIMIT @limit`,
      );
      this.statements.set(name, statement);
    }
    return statement;
  }
}
