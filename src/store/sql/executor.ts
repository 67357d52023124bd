import { VaultError } from "../../model/errors.js";
import type { Awaitable } from "../work.js";
import type { Dialect, Query } from "./template.js";

/**
 * The minimal port the engine-neutral stores (store/sql/*.ts) run their
 * statements through: SQLite's answers synchronously (each statement
 * prepared once), PostgreSQL's with promises on the unit of work's client.
 */
export interface SqlExecutor {
  readonly dialect: Dialect;
  /** Every row. */
  all<R>(query: Query): Awaitable<R[]>;
  /** The first row, or undefined. */
  get<R>(query: Query): Awaitable<R | undefined>;
  /** Runs a statement; resolves with the rows it changed. */
  run(query: Query): Awaitable<number>;
  /**
   * Runs a statement whose answer nothing in the unit reads: on PostgreSQL
   * sent without waiting when the unit has write-behind statements
   * (store/pg/batch/write-behind.ts: it rides the next round trip, its
   * failure fails the unit at COMMIT), awaited otherwise; on SQLite run at once.
   */
  send(query: Query): Awaitable<void>;
  /** Whether `err` is the engine's unique-constraint violation. */
  isUniqueViolation(err: unknown): boolean;
}

/**
 * `f` of an Awaitable: applied at once to a plain value (SQLite stays
 * synchronous), after the promise otherwise.
 */
export function map<T, U>(value: Awaitable<T>, f: (value: T) => U): Awaitable<U> {
  return value instanceof Promise ? value.then(f) : f(value);
}

/** `next()` once `value` is there (at once on SQLite): two statements in order. */
export function after<T>(value: Awaitable<unknown>, next: () => Awaitable<T>): Awaitable<T> {
  return value instanceof Promise ? value.then(next) : next();
}

/** Nothing, once `value` is there: a write whose answer the store does not return. */
export function done(value: Awaitable<unknown>): Awaitable<void> {
  return value instanceof Promise ? value.then(() => undefined) : undefined;
}

/**
 * Runs a write, turning a unique-constraint violation (the constraint
 * decided a race) into VaultError "conflict" with `message` (a 409).
 * @throws VaultError "conflict", or the statement's other error.
 */
export function unique<T>(exec: SqlExecutor, message: string, fn: () => Awaitable<T>): Awaitable<T> {
  const fail = (err: unknown): never => {
    if (exec.isUniqueViolation(err)) throw new VaultError("conflict", message);
    throw err;
  };
  try {
    const value = fn();
    return value instanceof Promise ? value.catch(fail) : value;
  } catch (err) {
    return fail(err);
  }
}

/** The row a statement is known to return (an INSERT ... RETURNING). */
export function first<R>(row: R | undefined): R {
  if (row === undefined) throw new Error("the statement returned no row");
  return row;
}

/** A LIMIT for "no limit" both engines take (SQLite refuses NULL, PostgreSQL a negative one). */
export const NO_LIMIT = Number.MAX_SAFE_INTEGER;

/**
 * Runs a rule written once as a generator that yields each statement's
 * Awaitable answer and gets the answer back: synchronously while every
 * answer is a plain value (SQLite), through promises otherwise (PostgreSQL).
 * @throws (or rejects with) what a statement or the rule throws.
 */
export function drive<T>(rule: Generator<Awaitable<unknown>, T, unknown>): Awaitable<T> {
  const step = (input: unknown): Awaitable<T> => {
    let answer = input;
    for (;;) {
      const next = rule.next(answer);
      if (next.done === true) return next.value;
      if (next.value instanceof Promise) return next.value.then(step);
      answer = next.value;
    }
  };
  return step(undefined);
}
