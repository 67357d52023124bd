import type pg from "pg";
import { declaresOrdering } from "./ordering.js";
import type { Queryable } from "./queryable.js";

/**
 * A statement declared as one that orders transactions against each other
 * (an advisory lock, a row lock, a `SKIP LOCKED` claim: ordering.ts), refused to a unit while the units of a batch
 * run at once in one transaction: there it would order nothing (the lock is
 * the batch's own; a claim does not skip rows its own transaction locked).
 * The unit runs again after the batch's COMMIT, in a transaction of its
 * own (store/pg/batch/group-commit.ts).
 */
export class NeedsOrder extends Error {
  constructor(readonly statement: string) {
    super("this unit of work needs the order between transactions: it runs again alone, after the batch");
    this.name = "NeedsOrder";
  }
}

/** The text of a statement as client.query receives it (a string or a query config), for NeedsOrder's message. */
function textOf(config: unknown): string {
  if (typeof config === "string") return config;
  const text = (config as { text?: unknown } | null)?.text;
  return typeof text === "string" ? text : "";
}

/** What one unit of a batch did through its view of the shared connection. */
export interface UnitTrace {
  /** The unit's view of the batch's connection: what its stores run their statements on. */
  readonly view: (db: Queryable) => Queryable;
  /** It changed a row (a statement other than SELECT that reported rows). */
  readonly wrote: boolean;
  /** It asked for an ordering statement while the batch ran at once (NeedsOrder). */
  readonly needsOrder: boolean;
}

/**
 * The units of one batch on one connection, in one transaction
 * (PgUnitOfWork.runShared): each unit gets a view of the connection that
 * records whether it changed a row and whether it asked for an ordering
 * statement, and every statement's failure is the batch's (a failed
 * statement aborts the whole transaction, whichever unit sent it).
 */
export class SharedBatch {
  private failure: { error: unknown } | undefined;

  /** The first statement failure (or failure that forces the batch to run again), if any. */
  get failed(): { error: unknown } | undefined {
    return this.failure;
  }

  /** Marks the batch failed: it rolls back and each unit runs again alone. */
  fail(error: unknown): void {
    this.failure ??= { error };
  }

  /**
   * A unit's view of the connection.
   * @param concurrent true while the batch's units run at once: a statement
   *   declared ordering (ordering.ts) is then refused (NeedsOrder, never sent).
   */
  unit(concurrent: boolean): UnitTrace {
    const trace = { view: (db: Queryable) => db, wrote: false, needsOrder: false };
    trace.view = (db) => ({ query: this.through(db, trace, concurrent) });
    return trace;
  }

  /** client.query of `db` for one unit, as unit() describes. */
  private through(db: Queryable, trace: { wrote: boolean; needsOrder: boolean }, concurrent: boolean): Queryable["query"] {
    const query = (config: unknown, values?: unknown): Promise<pg.QueryResult> => {
      if (concurrent && declaresOrdering(config)) {
        trace.needsOrder = true;
        return Promise.reject(new NeedsOrder(textOf(config)));
      }
      const sent = (db.query as (config: unknown, values?: unknown) => Promise<pg.QueryResult>)(config, values);
      sent.then(
        (result) => {
          if (result.command !== "SELECT" && (result.rowCount ?? 0) > 0) trace.wrote = true;
        },
        (error: unknown) => this.fail(error),
      );
      return sent;
    };
    return query as Queryable["query"];
  }
}
