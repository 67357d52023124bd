/*
 * When the ACME certificate is ordered (docs/deploy.md "Certificates by
 * ACME"): at once when there is none, again when two thirds of its lifetime
 * have passed, and after a failed attempt with a doubling backoff. No I/O of
 * its own: the clock, the timer and the attempt are given, so the schedule is
 * tested without waiting.
 */

/** First wait after a failed attempt, milliseconds; it doubles per failure in a row. */
export const ACME_BACKOFF_FIRST_MS = 60_000;
/** Longest wait after failed attempts, milliseconds (6 hours). */
export const ACME_BACKOFF_MAX_MS = 6 * 3600_000;
/** Longest single timer, milliseconds: setTimeout's limit (2^31 - 1); longer waits are taken in steps. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** The validity of a certificate, Unix milliseconds. */
export interface Validity {
  notBefore: number;
  notAfter: number;
}

/**
 * When a certificate is renewed: two thirds into its lifetime,
 * `notBefore + 2/3 (notAfter - notBefore)` (for a 90-day certificate, 30
 * days before it expires, as Let's Encrypt advises).
 * @returns Unix milliseconds.
 */
export function renewalTime(validity: Validity): number {
  return validity.notBefore + Math.floor(((validity.notAfter - validity.notBefore) * 2) / 3);
}

/**
 * The wait after `failures` failed attempts in a row (1 or more):
 * ACME_BACKOFF_FIRST_MS doubled per failure after the first, at most
 * ACME_BACKOFF_MAX_MS, and never past the current certificate's expiry
 * when there is one (one more try just before it lapses).
 * @param firstMs the first wait (default ACME_BACKOFF_FIRST_MS); tests and the e2e harness pass a short one.
 * @returns milliseconds, at least 1000.
 */
export function backoffDelay(failures: number, options: { firstMs?: number; maxMs?: number; now?: number; validity?: Validity | undefined } = {}): number {
  const first = options.firstMs ?? ACME_BACKOFF_FIRST_MS;
  const max = Math.max(first, options.maxMs ?? ACME_BACKOFF_MAX_MS);
  let delay = Math.min(max, first * 2 ** Math.min(30, Math.max(0, failures - 1)));
  if (options.validity !== undefined && options.now !== undefined) {
    const left = options.validity.notAfter - options.now;
    if (left > 0) delay = Math.min(delay, Math.max(1000, left - 1000));
  }
  return Math.max(1000, delay);
}

/**
 * What one attempt gives: the new certificate's validity, and whether it was
 * ordered (false: another node of the database ordered it and this one
 * picked it up). An attempt that fails throws.
 */
export type AcmeAttempt = () => Promise<{ validity: Validity; ordered: boolean }>;

/**
 * What an attempt came to, for the log line and (success and failure only)
 * the metric vault_acme_renewals_total{outcome}: an order that succeeded or
 * failed, or a certificate another node ordered, picked up.
 */
export type AttemptOutcome = "success" | "failure" | "picked_up";

/** The parts of an AcmeRenewer. */
export interface RenewerParts {
  /** Unix milliseconds. */
  now: () => number;
  /** Runs `fn` after `ms` milliseconds (at most MAX_TIMER_MS); returns its cancel. */
  setTimer: (fn: () => void, ms: number) => () => void;
  /** Orders a certificate and installs it. */
  attempt: AcmeAttempt;
  /** Called after each attempt with its outcome, the error of a failed one and the time of the next attempt (Unix ms). */
  onAttempt: (outcome: AttemptOutcome, detail: { error?: unknown; next: number; failures: number }) => void;
  /** The first backoff wait, ms (default ACME_BACKOFF_FIRST_MS). */
  backoffFirstMs?: number | undefined;
}

/**
 * Runs the attempts of one certificate on schedule: start(validity) with the
 * certificate already held (none: an attempt at once), then each success
 * schedules the next at renewalTime(), each failure after backoffDelay().
 * One attempt at a time; stop() cancels what is scheduled (an attempt under
 * way finishes, but schedules nothing).
 */
export class AcmeRenewer {
  readonly #parts: RenewerParts;
  #cancel: (() => void) | undefined;
  #validity: Validity | undefined;
  #failures = 0;
  #stopped = false;
  #running: Promise<void> | undefined;
  /** Unix ms of the next attempt; undefined while one runs or after stop(). */
  next: number | undefined;

  constructor(parts: RenewerParts) {
    this.#parts = parts;
  }

  /** Starts the schedule from the certificate held now (undefined: none, attempt at once). */
  start(validity: Validity | undefined): void {
    this.#validity = validity;
    this.#scheduleAt(validity === undefined ? this.#parts.now() : renewalTime(validity));
  }

  /** Failed attempts in a row since the last success. */
  get failures(): number {
    return this.#failures;
  }

  /** Resolves when the attempt under way (if any) has ended. */
  async idle(): Promise<void> {
    await this.#running;
  }

  /** Cancels the scheduled attempt; nothing is scheduled after one under way. */
  stop(): void {
    this.#stopped = true;
    this.#cancel?.();
    this.#cancel = undefined;
    this.next = undefined;
  }

  #scheduleAt(at: number): void {
    if (this.#stopped) return;
    this.#cancel?.();
    this.next = at;
    const wait = Math.max(0, at - this.#parts.now());
    if (wait > MAX_TIMER_MS) {
      // Longer than one timer can wait: wake up and schedule the rest.
      this.#cancel = this.#parts.setTimer(() => this.#scheduleAt(at), MAX_TIMER_MS);
      return;
    }
    this.#cancel = this.#parts.setTimer(() => {
      this.#running = this.#run();
    }, wait);
  }

  async #run(): Promise<void> {
    this.#cancel = undefined;
    this.next = undefined;
    let validity: Validity;
    let ordered: boolean;
    try {
      ({ validity, ordered } = await this.#parts.attempt());
    } catch (error) {
      this.#failures += 1;
      const now = this.#parts.now();
      const next = now + backoffDelay(this.#failures, { firstMs: this.#parts.backoffFirstMs, now, validity: this.#validity });
      this.#parts.onAttempt("failure", { error, next, failures: this.#failures });
      this.#scheduleAt(next);
      return;
    }
    this.#failures = 0;
    this.#validity = validity;
    const next = renewalTime(validity);
    this.#parts.onAttempt(ordered ? "success" : "picked_up", { next, failures: 0 });
    this.#scheduleAt(next);
  }
}
