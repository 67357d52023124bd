import type pg from "pg";
import type { SqlExecutor } from "../sql/executor.js";
import { paramsOf, render } from "../sql/template.js";
import type { Query } from "../sql/template.js";
import type { DeclaredConfig, Queryable, WriteBehind } from "./batch/index.js";

/** PostgreSQL's unique_violation: the constraint decided a race between nodes. */
const UNIQUE_VIOLATION = "23505";

/** A statement that names its columns: a named prepared statement must (store/pg/batch/prepared.ts). */
const STAR = /(?:SELECT|RETURNING|,)\s*(?:\w+\.)?\*/i;

/** The named statements whose text was checked. */
const checked = new Set<string>();

/**
 * The PostgreSQL side of the executor port over one unit of work's client:
 * `$n` placeholders, and a statement declared with `named()` goes out as a
 * named prepared statement (parsed once per connection; the client of
 * withoutPreparedStatements() sends it unnamed), and one declared with
 * `ordered` carries its ordering flag (store/pg/batch/ordering.ts).
 */
export class PgExecutor implements SqlExecutor {
  readonly dialect = "pg" as const;

  /**
   * @param db the unit of work's client.
   * @param behind the unit's write-behind statements, for send(); absent: send() awaits.
   */
  constructor(
    private readonly db: Queryable,
    private readonly behind?: WriteBehind,
  ) {}

  async all<R>(query: Query): Promise<R[]> {
    return (await this.query(query)).rows as R[];
  }

  async get<R>(query: Query): Promise<R | undefined> {
    return (await this.query(query)).rows[0] as R | undefined;
  }

  async run(query: Query): Promise<number> {
    return (await this.query(query)).rowCount ?? 0;
  }

  send(query: Query): Promise<void> | undefined {
    const statement = this.query(query);
    if (this.behind === undefined) return statement.then(() => undefined);
    this.behind.track(statement);
    return undefined;
  }

  isUniqueViolation(err: unknown): boolean {
    return (err as { code?: unknown } | null)?.code === UNIQUE_VIOLATION;
  }

  private query(query: Query): Promise<pg.QueryResult> {
    const rendered = render(query, "pg");
    const values = paramsOf(query, rendered);
    if (query.name === undefined) {
      if (query.ordering !== true) return this.db.query(rendered.text, values);
      const config: DeclaredConfig = { text: rendered.text, values, ordering: true };
      return this.db.query(config);
    }
    if (!checked.has(query.name)) {
      if (STAR.test(rendered.text)) throw new Error(`prepared statement ${query.name} must name its columns, not *`);
      checked.add(query.name);
    }
    const config: DeclaredConfig = query.ordering === true ? { name: query.name, text: rendered.text, values, ordering: true } : { name: query.name, text: rendered.text, values };
    return this.db.query(config);
  }
}
