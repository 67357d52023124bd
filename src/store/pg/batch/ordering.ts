import type pg from "pg";

/**
 * The declaration that a statement orders transactions against each other:
 * it takes a row lock (`FOR UPDATE`, `FOR NO KEY UPDATE`, `FOR SHARE`), an
 * advisory lock, or claims rows with `SKIP LOCKED`. Inside a batch of the
 * group commit, where the units share one transaction, such a statement
 * orders nothing (the lock is the batch's own; a claim does not skip rows
 * its own transaction locked), so a unit that sends one before changing a
 * row is left out of the batch and runs again alone after its COMMIT
 * (store/pg/batch/group-commit.ts; docs/performance.md, "PostgreSQL").
 *
 * The statement carries the flag itself: a query config with
 * `ordering: true`, from orderingStatement()'s with() for a raw statement, from
 * prepared()'s `ordering` option for a prepared one, and from the
 * `ordered` tag (store/sql/template.ts) for one written once for both
 * engines. node-postgres reads `text`, `name` and `values` of a config and
 * leaves the flag alone.
 */
export interface OrderingStatement {
  readonly text: string;
  readonly ordering: true;
  /**
   * The query config to send, `query(statement.with(values))`: a new object
   * per call (node-postgres writes the values onto the config it is given).
   * @param values the `$n` parameters, in order.
   */
  with(values: unknown[]): DeclaredConfig;
}

/**
 * Declares a raw statement that orders transactions (see OrderingStatement).
 * @param text the SQL, `$n` placeholders.
 * @returns a frozen declaration; its with() gives the config to send.
 */
export function orderingStatement(text: string): OrderingStatement {
  return Object.freeze({ text, ordering: true as const, with: (values: unknown[]): DeclaredConfig => ({ text, values, ordering: true }) });
}

/** A transaction-scoped advisory lock on `$1` (a bigint key): the free tier's and the audit chain set's. */
export const ADVISORY_XACT_LOCK: OrderingStatement = orderingStatement("SELECT pg_advisory_xact_lock($1)");

/**
 * Whether what was handed to `query()` (a text or a query config) is
 * declared ordering. Reads the flag only; the text is never inspected.
 */
export function declaresOrdering(config: unknown): boolean {
  return typeof config === "object" && config !== null && (config as { ordering?: unknown }).ordering === true;
}

/** A query config with the declaration, as the stores send it (pg.QueryConfig plus the flag). */
export type DeclaredConfig = pg.QueryConfig & { readonly ordering?: true };
