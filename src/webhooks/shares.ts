/**
 * How the delivery worker's slots are shared between scopes (the global
 * scope and each org), docs/webhooks.md "Delivery and retries": the same
 * decision for both engines, taken here and handed to the outbox claim as
 * per-scope limits (ScopeLimits).
 */

import { GLOBAL_SCOPE } from "../model/records.js";
import type { DueScope, ScopeClaim } from "../store/outbox.js";

/** What a claim may take of each scope this round. */
export interface ScopeLimits {
  /** Deliveries at most of a scope absent from `limits`: the whole share. */
  scopeLimit: number;
  /** Scopes whose room is below `scopeLimit`; 0 leaves the scope out of the claim. */
  limits: ReadonlyMap<string, number>;
}

export interface ScopeSharesOptions {
  /** The worker's slots: attempts in flight at once (8). */
  concurrency: number;
  /** VAULT_WEBHOOK_SCOPE_CONCURRENCY: slots one scope may hold at most. */
  perScope: number;
}

/**
 * The per-scope share of the delivery worker's slots:
 * - a scope holds at most `perScope` slots (its deliveries in flight, or
 *   claimed and waiting their turn behind another of the same webhook), so
 *   one tenant's slow receivers leave the others room;
 * - each attempt of a scope that ends in a timeout counts against that
 *   scope: its share halves (4, 2, 1: never below one) and each attempt that
 *   gets an answer (any status or a connection error, not a timeout) gives
 *   one step back;
 * - the scopes whose share is reduced (slow scopes) hold at most half the
 *   worker's slots together, so many slow tenants cannot fill them either.
 * State is in memory, per worker (one per node).
 */
export class ScopeShares {
  private readonly inFlight = new Map<string, number>();
  /** Halvings of each slow scope's share, 1..maxSlowness; absent: 0. */
  private readonly slowness = new Map<string, number>();
  private readonly maxSlowness: number;
  private readonly slowPool: number;
  private readonly perScope: number;

  /** @throws RangeError when `perScope` or `concurrency` is below 1. */
  constructor(options: ScopeSharesOptions) {
    if (!Number.isInteger(options.perScope) || options.perScope < 1) throw new RangeError("the per-scope share must be at least 1");
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) throw new RangeError("the concurrency must be at least 1");
    this.perScope = options.perScope;
    this.maxSlowness = Math.max(1, Math.ceil(Math.log2(options.perScope)));
    this.slowPool = Math.max(1, Math.floor(options.concurrency / 2));
  }

  /** Slots the scope may take now (0 or more). */
  room(scope: string): number {
    const slowness = this.slowness.get(scope) ?? 0;
    const share = Math.max(1, Math.floor(this.perScope / 2 ** slowness));
    const own = share - (this.inFlight.get(scope) ?? 0);
    if (slowness === 0) return Math.max(0, own);
    return Math.max(0, Math.min(own, this.slowPool - this.slowHeld()));
  }

  /** The limits of the next claim: every scope that has slots or a reduced share, with its room. */
  limits(): ScopeLimits {
    const limits = new Map<string, number>();
    for (const scope of new Set([...this.inFlight.keys(), ...this.slowness.keys()])) {
      const room = this.room(scope);
      if (room < this.perScope) limits.set(scope, room);
    }
    return { scopeLimit: this.perScope, limits };
  }

  /** A delivery of the scope was claimed: it holds a slot until finished(). */
  started(scope: string): void {
    this.inFlight.set(scope, (this.inFlight.get(scope) ?? 0) + 1);
  }

  /**
   * A delivery of the scope let its slot go.
   * @param timedOut true: its attempt ran into the timeout (the share
   *   shrinks); false: it got an answer (the share grows back one step);
   *   null: no attempt was made (stop, deleted webhook): no change.
   */
  finished(scope: string, timedOut: boolean | null): void {
    const held = (this.inFlight.get(scope) ?? 0) - 1;
    if (held > 0) this.inFlight.set(scope, held);
    else this.inFlight.delete(scope);
    if (timedOut === null) return;
    const slowness = (this.slowness.get(scope) ?? 0) + (timedOut ? 1 : -1);
    if (slowness <= 0) this.slowness.delete(scope);
    else this.slowness.set(scope, Math.min(this.maxSlowness, slowness));
  }

  /** Slots held by the slow scopes together. */
  private slowHeld(): number {
    let held = 0;
    for (const scope of this.slowness.keys()) held += this.inFlight.get(scope) ?? 0;
    return held;
  }
}

/** A scope's place in the round-robin order: the global scope first, then the orgs by id. */
const orderKey = (scope: string): string => (scope === GLOBAL_SCOPE ? "" : scope);

/**
 * Which due deliveries to claim, scope by scope (docs/webhooks.md,
 * "Delivery and retries"): the `limit` slots are handed out round-robin,
 * one per scope in turn, to the scopes with due deliveries in a fixed
 * order (global, then the orgs by id) starting with the first scope after
 * `afterScope` (wrapping), so one busy scope delays another by at most one
 * turn. A scope gets no more than it has due, nor than its limit in
 * `shares` (ScopeShares.limits(); none below `limit` when absent): a limit
 * of 0 leaves it out. At most `limit` scopes take part.
 * @param due the scopes with due deliveries and how many (any order).
 * @param afterScope the scope served first last time; undefined: start with the first.
 * @returns the claims in round-robin order (the first is served first), counts adding up to at most `limit`.
 */
export function planClaims(due: readonly DueScope[], limit: number, afterScope: string | undefined, shares?: ScopeLimits): ScopeClaim[] {
  const share = Math.min(limit, shares?.scopeLimit ?? limit);
  const open = due
    .map((d) => ({ scope: d.scope, cap: Math.min(d.due, share, shares?.limits.get(d.scope) ?? share) }))
    .filter((c) => c.cap > 0)
    .sort((a, b) => (orderKey(a.scope) < orderKey(b.scope) ? -1 : 1));
  const after = afterScope === undefined ? undefined : orderKey(afterScope);
  const start = after === undefined ? 0 : open.findIndex((c) => orderKey(c.scope) > after);
  const turns = (start <= 0 ? open : [...open.slice(start), ...open.slice(0, start)]).slice(0, Math.max(0, limit));
  const claims = turns.map((c) => ({ scope: c.scope, count: 0 }));
  let left = limit;
  for (let turn = 0; left > 0; turn++) {
    let grew = false;
    turns.forEach((c, i) => {
      const claim = claims[i];
      if (left === 0 || claim === undefined || c.cap <= turn) return;
      claim.count++;
      left--;
      grew = true;
    });
    if (!grew) break;
  }
  return claims;
}
