/**
 * The storage seam. Domain code reaches the database only through the work
 * handle a unit of work hands it (`tx.run((w) => ...)`): `w` holds the
 * stores of that transaction, one per table group. Store methods are
 * async at their boundary (`Awaitable`): an engine may answer at once or
 * with a promise, and code above the store chains both alike (andThen).
 */

import type { AuditStore } from "./audit.js";
import type { MetaStore } from "./meta.js";
import type { OrgStore, PrincipalKeyStore, PrincipalStore, RoleStore } from "./orgs.js";
import type { ScopedKeyStore } from "./scoped-keys.js";
import type { OutboxStore } from "./outbox.js";
import type { RevealCheckStore } from "./reveal-checks.js";
import type { FileMetaStore } from "./file-metas.js";
import type { RequestStore } from "./requests.js";
import type { ReceiptStore } from "./receipts.js";
import type { IdentityStore } from "./identities.js";
import type { IdempotencyStore } from "./idempotency.js";
import type { SecretStore } from "./secrets.js";
import type { WebhookStore } from "./webhooks.js";
import type { Awaitable } from "../model/awaitable.js";
export type { Awaitable } from "../model/awaitable.js";

export { DatabaseUnavailableError } from "../model/engine-errors.js";

/**
 * Runs units of work: each `fn` gets the work handle of its transaction, and
 * the returned promise settles once that transaction has committed (never
 * earlier: an answer is built only from durable rows).
 */
export interface UnitOfWork<W> {
  /**
   * Runs `fn` in a transaction and resolves with its result once that
   * transaction committed.
   *
   * `fn` may run more than once: the PostgreSQL group commit re-runs the
   * units of a failed batch alone, each in a transaction of its own
   * (store/pg/batch/group-commit.ts; docs/performance.md, "PostgreSQL"), and
   * a rolled-back attempt changed nothing. So `fn` does nothing outside the
   * transaction itself; a side effect outside it (a metric) is registered
   * with Work.afterCommit, which runs it once, after the attempt that
   * committed.
   * @throws (rejects) whatever `fn` throws (its changes rolled back), the
   *   commit's error, ClosedError once the engine is shutting down, or
   *   DatabaseUnavailableError when the connection was lost (PostgreSQL).
   * @param options `alone`: see RunOptions.
   */
  run<T>(fn: (w: W) => Awaitable<T>, options?: RunOptions): Promise<T>;
}

/** How a unit of work is batched (UnitOfWork.run). */
export interface RunOptions {
  /**
   * A large write (a file's create, megabytes): on SQLite it commits in a
   * transaction of its own, after the small units queued with it have
   * committed and been answered, so that they never wait for its COMMIT
   * (store/sqlite/group-commit.ts; docs/performance.md, "Files").
   * PostgreSQL's commits do not hold the event loop: it batches it as any.
   */
  alone?: boolean | undefined;
}

/**
 * The after-commit callbacks of the attempt of a unit of work that runs now
 * (Work.afterCommit): begin() opens an attempt's list, take() closes it and
 * hands its callbacks over (to run once the transaction committed, or to
 * drop when the attempt rolled back). SQLite keeps one for its units, which
 * run one at a time (store/sqlite/group-commit.ts); PostgreSQL one per
 * attempt (store/pg/batch/unit-of-work.ts).
 */
export class AfterCommitQueue {
  private current: (() => void)[] | undefined;

  /** Opens the list of a new attempt (what an earlier one left is dropped). */
  begin(): void {
    this.current = [];
  }

  /**
   * Adds `fn` to the attempt's list.
   * @throws Error outside an attempt (no unit of work runs).
   */
  add(fn: () => void): void {
    if (this.current === undefined) throw new Error("afterCommit is called outside a unit of work");
    this.current.push(fn);
  }

  /** Closes the attempt's list. @returns its callbacks, in the order they were added. */
  take(): (() => void)[] {
    const taken = this.current ?? [];
    this.current = undefined;
    return taken;
  }
}

/**
 * Runs the callbacks of an attempt that committed, in order. Each is
 * expected not to throw; what one throws is dropped, so the others still
 * run and the unit answers what it committed.
 */
export function runAfterCommit(callbacks: readonly (() => void)[]): void {
  for (const callback of callbacks) {
    try {
      callback();
    } catch {
      // The transaction committed: its answer stands (see the docstring).
    }
  }
}

/**
 * The work handle: the stores of one transaction, one per table group. Domain
 * methods take it as their first argument; only a unit of work hands it out.
 */
export interface Work {
  readonly secrets: SecretStore;
  readonly audit: AuditStore;
  readonly meta: MetaStore;
  readonly scopedKeys: ScopedKeyStore;
  readonly orgs: OrgStore;
  readonly roles: RoleStore;
  readonly principals: PrincipalStore;
  readonly principalKeys: PrincipalKeyStore;
  readonly webhooks: WebhookStore;
  readonly outbox: OutboxStore;
  readonly revealChecks: RevealCheckStore;
  /** A file link's encrypted name, type and size shown before the reveal (docs/share.md, "Files"). */
  readonly fileMetas: FileMetaStore;
  readonly requests: RequestStore;
  readonly receipts: ReceiptStore;
  /** Single sign-on: the people an identity provider vouches for and their principals (docs/sso.md). */
  readonly identities: IdentityStore;
  readonly idempotency: IdempotencyStore;
  /**
   * Runs `fn` once the transaction of this attempt of the unit committed,
   * before the unit's run() settles; dropped when the attempt rolls back
   * (the unit failed, or its PostgreSQL batch failed and the unit runs again
   * alone, registering afresh). For side effects outside the transaction
   * (the metrics sink, src/runtime/metrics.ts), so they count once however many
   * times the unit ran (UnitOfWork.run).
   * @throws Error when called outside a unit of work.
   */
  afterCommit(fn: () => void): void;
}

/**
 * Runs `next` on `value` once it is there: at once when a store answered
 * synchronously (SQLite, inside the group commit's turn: no microtask),
 * after the promise settles otherwise (PostgreSQL). The one place outside
 * the engines that tells an answer from a promise of one, so that code
 * above the store can chain Awaitable steps without awaiting each.
 * @returns `next`'s result, or a promise of it when `value` was a promise.
 * @throws (or rejects with) whatever `next` throws, or `value`'s rejection.
 */
export function andThen<T, U>(value: Awaitable<T>, next: (value: T) => Awaitable<U>): Awaitable<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}
