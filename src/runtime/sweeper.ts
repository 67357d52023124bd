import type { SecretLifecycle } from "../domain/secrets/lifecycle.js";
import type { Requests } from "../domain/requests/requests.js";
import type { Receipts } from "../domain/receipts/receipts.js";
import type { IdempotencyKeys } from "../domain/idempotency/keys.js";
import { SYSTEM_ORIGIN } from "../domain/events.js";
import type { UnitOfWork, Work } from "../store/work.js";
import type { Logger } from "../log/log.js";

/**
 * Secrets expired per unit of work: small enough never to hold requests up
 * for long. The requests of a batch wait for its COMMIT, so a unit's time
 * is added to their latency; 64 keeps the p99 of reads during a mass expiry
 * near the steady one (the figures: docs/performance.md, "Reads at scale").
 */
export const SWEEP_BATCH = 64;

/**
 * Secrets expired per unit of work where units are awaited, not run on the
 * event loop (PostgreSQL): a unit holds no request up, so it stays as large
 * as it was before SWEEP_BATCH shrank for SQLite.
 */
export const SWEEP_BATCH_AWAITED = 256;

export interface SweeperDeps {
  secrets: SecretLifecycle;
  /** Requests past their expiry are deleted too (docs/requests.md); absent: secrets only. */
  requests?: Requests | undefined;
  /** Receipts kept past their time are deleted too (docs/share.md, "Receipts"). */
  receipts?: Receipts | undefined;
  /** First answers past the Idempotency-Key window are deleted too (docs/api.md, "Retries"). */
  idempotency?: IdempotencyKeys | undefined;
  /** Told when kept answers were deleted: they held values (a read's answer), scrubbed as a burn's (the engine's valueDestroyed). */
  valueDestroyed?: (() => void) | undefined;
  tx: UnitOfWork<Work>;
  log: Logger;
  /** Period, milliseconds; 0 disables the sweeper. */
  intervalMs: number;
  /** Secrets expired per unit of work; SWEEP_BATCH when absent. */
  batch?: number;
}

/**
 * The TTL sweeper (VAULT_SWEEP_INTERVAL_MS): every period, expires the
 * secrets whose expires_at has passed, then deletes the requests past
 * theirs (`request.expired` for an open one), in units of `deps.batch` (default
 * SWEEP_BATCH) through the unit of work, yielding to requests between units.
 * @returns stop(), which cancels the timer and resolves once no batch runs.
 */
export function startSweeper(deps: SweeperDeps): { stop: () => Promise<void>; sweepNow: () => Promise<number> } {
  let running: Promise<number> | null = null;
  let stopped = false;
  const batch = deps.batch ?? SWEEP_BATCH;

  /** Runs `unit` until it does less than a batch (or the sweeper stops). @returns the sum of what it did. */
  const drain = async (unit: () => Promise<number>): Promise<number> => {
    let sum = 0;
    for (;;) {
      if (stopped) return sum;
      const n = await unit();
      sum += n;
      if (n < batch) return sum;
    }
  };

  const sweep = async (): Promise<number> => {
    let total = await drain(() => deps.tx.run((w) => deps.secrets.expireDue(w, batch, SYSTEM_ORIGIN)));
    const { requests, receipts } = deps;
    if (requests !== undefined) total += await drain(() => deps.tx.run((w) => requests.expireDue(w, batch, SYSTEM_ORIGIN)));
    // Receipts kept past their time go too (not counted: they are not secrets or requests).
    if (receipts !== undefined) await drain(() => deps.tx.run((w) => receipts.pruneKept(w, batch)));
    const { idempotency } = deps;
    if (idempotency !== undefined && (await drain(() => deps.tx.run((w) => idempotency.prune(w, batch)))) > 0) deps.valueDestroyed?.();
    return total;
  };

  const tick = () => {
    if (running) return;
    running = sweep()
      .then((n) => {
        if (n > 0) deps.log.debug({ expired: n }, "sweeper expired secrets");
        return n;
      })
      .catch((err: unknown) => {
        if (!stopped) deps.log.error({ err }, "sweeper failed");
        return 0;
      })
      .finally(() => {
        running = null;
      });
  };

  const timer = deps.intervalMs > 0 ? setInterval(tick, deps.intervalMs) : undefined;
  timer?.unref();

  return {
    stop: async () => {
      stopped = true;
      if (timer) clearInterval(timer);
      if (running) await running;
    },
    sweepNow: () => sweep(),
  };
}
