import type { AttemptRecord } from "./outbox.js";
import type { DeliveryResult } from "./transport.js";

/*
 * The retry schedule of webhook deliveries (docs/contract.md §3): when the
 * next attempt is due, and what one attempt's result means for its delivery.
 * The worker (worker.ts) applies it.
 */

/** Longest wait between two attempts (docs/contract.md §3): one hour, in milliseconds. */
export const MAX_RETRY_DELAY_MS = 60 * 60 * 1000;
/** Jitter of a retry delay: +-20% (docs/contract.md §3). */
export const RETRY_JITTER = 0.2;

/** What attemptOutcome() needs of the worker's settings. */
export interface RetryPolicy {
  /** VAULT_WEBHOOK_MAX_ATTEMPTS: attempts per delivery, the first included. */
  maxAttempts: number;
  /** VAULT_WEBHOOK_RETRY_BASE_MS. */
  retryBaseMs: number;
  /** Uniform [0, 1) for the jitter. */
  random: () => number;
  /** Current time, Unix milliseconds (read only when a retry is scheduled). */
  now: () => number;
}

/**
 * The wait before attempt `attempt` (docs/contract.md §3): attempt n
 * (n >= 2) waits `baseMs * 2^(n-2)`, scaled by a uniform jitter in
 * [-20%, +20%], capped at one hour. All in milliseconds.
 *
 * @param attempt the attempt about to be made, 2 or more.
 * @param random a uniform number in [0, 1) (Math.random; injected in tests).
 * @throws RangeError when attempt < 2.
 */
export function retryDelayMs(attempt: number, baseMs: number, random: () => number): number {
  if (!Number.isInteger(attempt) || attempt < 2) throw new RangeError("retries start at attempt 2");
  const nominal = baseMs * 2 ** (attempt - 2);
  const jitter = 1 + RETRY_JITTER * (2 * random() - 1);
  return Math.min(MAX_RETRY_DELAY_MS, Math.round(nominal * jitter));
}

/**
 * Decides what an attempt's result means for its delivery: delivered on
 * success; failed after the last attempt, or at once when the webhook is
 * failing (the attempt log says so); else retrying, its next attempt
 * retryDelayMs() after policy.now().
 */
export function attemptOutcome(attempt: number, result: DeliveryResult, failing: boolean, policy: RetryPolicy): AttemptRecord {
  if (result.ok) return { status: "delivered", httpStatus: result.httpStatus, error: null, nextAttemptAt: null };
  if (failing) {
    return { status: "failed", httpStatus: result.httpStatus, error: `${result.error} (webhook failing: not retried)`, nextAttemptAt: null };
  }
  if (attempt >= policy.maxAttempts) {
    return { status: "failed", httpStatus: result.httpStatus, error: result.error, nextAttemptAt: null };
  }
  return {
    status: "retrying",
    httpStatus: result.httpStatus,
    error: result.error,
    nextAttemptAt: policy.now() + retryDelayMs(attempt + 1, policy.retryBaseMs, policy.random),
  };
}
