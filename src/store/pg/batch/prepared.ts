import type pg from "pg";
import type { DeclaredConfig } from "./ordering.js";
import type { Queryable } from "./queryable.js";

/**
 * A hot-path statement sent as a named prepared statement: node-postgres
 * sends its Parse once per pooled connection and then only Bind and Execute,
 * so PostgreSQL parses and analyses it once per connection instead of once
 * per call (PostgreSQL docs, "PREPARE"; the extended query protocol).
 * (the figures: docs/performance.md, "PostgreSQL").
 *
 * Only statements whose plan does not depend on their values are prepared
 * (equality lookups, inserts, updates by id): after five executions
 * PostgreSQL may switch a prepared statement to a generic plan, which would
 * not simplify the `$n IS NULL OR ...` filters of the list and audit
 * queries, so those stay unnamed and are planned per call.
 *
 * Every prepared statement names its result columns (no `*`): a column a
 * later schema version adds then changes nothing for a node still running
 * an older build, where `SELECT *` in a prepared statement would fail with
 * "cached plan must not change result type".
 */
export interface Prepared {
  /** Unique within the process: the server-side statement's name on every connection. */
  readonly name: string;
  readonly text: string;
  /** Declared as a statement that orders transactions (a row lock: ordering.ts). */
  readonly ordering?: true;
}

const taken = new Set<string>();

/**
 * Declares a prepared statement (at module load: one per call site).
 * @param name a short unique name, `table.action` (PostgreSQL identifiers: at most 63 bytes).
 * @param text the SQL, `$n` placeholders, an explicit column list where it returns rows.
 * @param options.ordering true for a statement that takes a row lock (ordering.ts OrderingStatement).
 * @throws Error when the name is taken or the text selects `*` (see Prepared).
 */
export function prepared(name: string, text: string, options: { ordering?: true } = {}): Prepared {
  if (taken.has(name)) throw new Error(`prepared statement ${name} is declared twice`);
  if (/(?:SELECT|RETURNING|,)\s*(?:\w+\.)?\*/i.test(text)) throw new Error(`prepared statement ${name} must name its columns, not *`);
  taken.add(name);
  return Object.freeze(options.ordering === true ? { name, text, ordering: true as const } : { name, text });
}

/**
 * Runs a prepared statement on the unit of work's client.
 * @param values the `$n` parameters, in order.
 * @throws (rejects) the query's error, as client.query does.
 */
export function runPrepared<R extends pg.QueryResultRow = pg.QueryResultRow>(
  db: Queryable,
  statement: Prepared,
  values: unknown[],
): Promise<pg.QueryResult<R>> {
  const config: DeclaredConfig = statement.ordering === true ? { name: statement.name, text: statement.text, values, ordering: true } : { name: statement.name, text: statement.text, values };
  return db.query<R>(config);
}

/**
 * `client` with prepared statements turned off: runPrepared's statements go
 * out unnamed (parsed per call, as every other statement), for a pooler in
 * transaction mode that hands each transaction another server connection
 * and does not track named statements (PgBouncer before 1.21, or with
 * `max_prepared_statements = 0`; VAULT_DATABASE_PREPARED_STATEMENTS=false).
 */
export function withoutPreparedStatements(client: Queryable): Queryable {
  const query = (config: unknown, values?: unknown) => {
    if (config !== null && typeof config === "object" && "name" in config) {
      const named = config as pg.QueryConfig;
      return client.query(named.text, named.values);
    }
    return client.query(config as string, values as unknown[]);
  };
  return { query: query as Queryable["query"] };
}
