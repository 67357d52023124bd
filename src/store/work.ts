/**
 * The storage seam. Domain code reaches the database only through the work
 * handle a unit of work hands it (`tx.run((w) => ...)`): `w` holds the
 * stores of that transaction, one per table group (src/store/sqlite/ for
 * the SQLite engine). Store methods are async at their boundary
 * (`Awaitable`): SQLite's answer synchronously, inside the group commit's
 * turn; a PostgreSQL engine answers with promises on one pooled connection.
 */

import type { AuditStore } from "./audit.js";
import type { MetaStore } from "./meta.js";
import type { OrgStore, PrincipalKeyStore, PrincipalStore, RoleStore } from "./orgs.js";
import type { ScopedKeyStore } from "./scoped-keys.js";
import type { OutboxStore } from "./outbox.js";
import type { RevealCheckStore } from "./reveal-checks.js";
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
   * @throws (rejects) whatever `fn` throws (its changes rolled back), the
   *   commit's error, ClosedError once the engine is shutting down, or
   *   DatabaseUnavailableError when the connection was lost (PostgreSQL).
   */
  run<T>(fn: (w: W) => Awaitable<T>): Promise<T>;
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
