import type { Statement } from "better-sqlite3";
import type { Db } from "./db.js";
import type { SqlExecutor } from "../sql/executor.js";
import { paramsOf, render } from "../sql/template.js";
import type { Query } from "../sql/template.js";

/**
 * The SQLite side of the executor port: synchronous, each call site's
 * statement prepared once per database (cached by its template), so the
 * engine-neutral stores add a WeakMap lookup per call and nothing else.
 */
export class SqliteExecutor implements SqlExecutor {
  readonly dialect = "sqlite" as const;
  private readonly statements = new WeakMap<TemplateStringsArray, Statement<unknown[]>>();

  constructor(private readonly db: Db) {}

  all<R>(query: Query): R[] {
    return this.statement(query).all(...this.params(query)) as R[];
  }

  get<R>(query: Query): R | undefined {
    return this.statement(query).get(...this.params(query)) as R | undefined;
  }

  run(query: Query): number {
    return this.statement(query).run(...this.params(query)).changes;
  }

  send(query: Query): void {
    this.run(query);
  }

  isUniqueViolation(err: unknown): boolean {
    return (err as { code?: unknown } | null)?.code === "SQLITE_CONSTRAINT_UNIQUE";
  }

  private statement(query: Query): Statement<unknown[]> {
    let statement = this.statements.get(query.strings);
    if (statement === undefined) {
      statement = this.db.prepare<unknown[]>(render(query, "sqlite").text);
      this.statements.set(query.strings, statement);
    }
    return statement;
  }

  private params(query: Query): unknown[] {
    return paramsOf(query, render(query, "sqlite"));
  }
}
