/**
 * How the delivery worker's slots are shared between scopes (the global
 * scope and each org), docs/webhooks.md "Delivery and retries": the same
 * decision for both engines, taken here and handed to the outbox claim as
 * per-scope limits (ScopeLimits).
 */

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
