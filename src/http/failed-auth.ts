import ipaddr from "ipaddr.js";

/*
 * Failed authentications (401) per remote address: the brute-force guard
 * (429 past a limit per window) and the coalescing of repeated `auth.failed`
 * audit rows. Both in memory, per process; both count IPv6 by /64 and leave
 * unknown addresses and a direct loopback peer alone (exemptFromCounting).
 * access-guard.ts applies them.
 */

/** True for 127.0.0.0/8 and ::1, also written IPv4-mapped (::ffff:127.0.0.1). */
export function isLoopback(ip: string): boolean {
  const v4 = ip.startsWith("::ffff:") ? ip.slice("::ffff:".length) : ip;
  return v4.startsWith("127.") || ip === "::1";
}

/**
 * True when failures from `ip` are not counted: an unknown address (null),
 * or a loopback address (isLoopback) that is the socket's own peer. A
 * loopback address forwarded by a trusted proxy (X-Forwarded-For with
 * VAULT_TRUST_PROXY, `forwarded`) is counted like any other: anyone who
 * reaches the proxy, or the vault directly when it is reachable without
 * the proxy, can write 127.0.0.1 there (docs/audit.md).
 */
export function exemptFromCounting(ip: string | null, forwarded: boolean): boolean {
  return ip === null || (!forwarded && isLoopback(ip));
}

/** Above this many tracked addresses, finished windows are dropped. */
const SWEEP_ABOVE = 10_000;
/** Most addresses tracked at once; past it the oldest windows are dropped (bounded memory). */
export const MAX_TRACKED_ADDRESSES = 100_000;

interface Window {
  /** When the window opened, ms. */
  start: number;
  failures: number;
  /** A valid token was presented from this address in this window. */
  validSeen: boolean;
  /** The shared-address warning was given for this window. */
  warned: boolean;
}

/**
 * The address the guard counts failures under: an IPv4 address as is (also
 * when written IPv4-mapped), an IPv6 address by its /64 network, since one
 * host is usually given a whole /64 and could otherwise try from 2^64
 * addresses. null for what is not an IP address.
 */
export function limiterKey(ip: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(ip);
  } catch {
    return null;
  }
  if (parsed.kind() === "ipv4") return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  return `${v6.parts.slice(0, 4).map((p) => p.toString(16)).join(":")}::/64`;
}

/**
 * The brute-force guard: counts failed authentications (401) per client ip
 * in a fixed window that opens at an ip's first failure. Once `limit`
 * failures fall in one window, the ip is answered 429 until the window
 * closes. In memory, per app instance; time from the injected clock.
 *
 * Requests whose ip is unknown (in-process requests without a socket) are
 * not counted: there is nothing to tell one client from another. A direct
 * loopback peer is not counted either: a process on the vault's own machine
 * can read the data dir's key files, so locking it out protects nothing, and
 * it would lock out the local tools and tests that probe 401s on purpose.
 * A loopback address that only a forwarded header claims is counted
 * (exemptFromCounting). Every method's `forwarded` says whether `ip` came
 * from a trusted proxy's X-Forwarded-For (default false: the socket's).
 */
export class FailedAuthLimiter {
  private readonly windows = new Map<string, Window>();
  private sweepAbove = SWEEP_ABOVE;

  /**
   * @param options.limit failures per window before 429; 0 turns the guard off.
   * @param options.windowMs the window, milliseconds.
   * @param options.now current time, Unix milliseconds.
   * @param options.onSharedAddress called once per window when an address
   *   that also presented valid tokens in the window gets blocked: the sign of
   *   a proxy address shared by all clients (set VAULT_TRUST_PROXY).
   * @param options.maxTracked most addresses tracked (default MAX_TRACKED_ADDRESSES).
   */
  constructor(
    private readonly options: {
      limit: number;
      windowMs: number;
      now: () => number;
      onSharedAddress?: ((key: string) => void) | undefined;
      maxTracked?: number | undefined;
    },
  ) {}

  /** Milliseconds until `ip` may try again; 0 when it is not blocked. */
  retryAfterMs(ip: string | null, forwarded = false): number {
    const key = this.keyOf(ip, forwarded);
    if (key === null) return 0;
    const w = this.windows.get(key);
    if (!w || w.failures < this.options.limit) return 0;
    return Math.max(0, w.start + this.options.windowMs - this.options.now());
  }

  /** Counts one failed authentication from `ip`. */
  fail(ip: string | null, forwarded = false): void {
    const key = this.keyOf(ip, forwarded);
    if (key === null) return;
    const w = this.current(key);
    w.failures += 1;
    if (w.failures >= this.options.limit && w.validSeen && !w.warned) {
      w.warned = true;
      this.options.onSharedAddress?.(key);
    }
  }

  /** Notes a valid token presented from `ip` (for the shared-address warning). */
  succeeded(ip: string | null, forwarded = false): void {
    const key = this.keyOf(ip, forwarded);
    if (key === null) return;
    const w = this.windows.get(key);
    if (w && this.options.now() - w.start < this.options.windowMs) w.validSeen = true;
  }

  /** Addresses tracked now (tests). */
  get size(): number {
    return this.windows.size;
  }

  private keyOf(ip: string | null, forwarded: boolean): string | null {
    if (ip === null || this.options.limit <= 0 || exemptFromCounting(ip, forwarded)) return null;
    return limiterKey(ip);
  }

  /** The open window of `key`, a new one when none is open. */
  private current(key: string): Window {
    const now = this.options.now();
    const w = this.windows.get(key);
    if (w && now - w.start < this.options.windowMs) return w;
    const fresh: Window = { start: now, failures: 0, validSeen: false, warned: false };
    // Re-inserted, so the map stays in window-start order (oldest first) for eviction.
    this.windows.delete(key);
    this.windows.set(key, fresh);
    if (this.windows.size > this.sweepAbove) this.sweep(now);
    return fresh;
  }

  /**
   * Drops closed windows, so the map stays as large as one window's worth of
   * addresses; past maxTracked, the oldest open windows go too.
   */
  private sweep(now: number): void {
    for (const [key, w] of this.windows) {
      if (now - w.start >= this.options.windowMs) this.windows.delete(key);
    }
    const max = this.options.maxTracked ?? MAX_TRACKED_ADDRESSES;
    for (const key of this.windows.keys()) {
      if (this.windows.size <= max) break;
      this.windows.delete(key);
    }
    this.sweepAbove = Math.min(max, Math.max(SWEEP_ABOVE, this.windows.size * 2));
  }
}

/** Failed authentications per remote address and window that get a row each; the rest are coalesced. */
export const INDIVIDUAL_AUTH_FAILURES = 10;

/** A coalesced run of failed authentications: one `auth.failed` row with a count. */
export interface AuthFailureSummary {
  /** The last address the failures came from (an IPv6 /64 groups several). */
  ip: string;
  /** How many failed requests the row stands for, at least 1. */
  count: number;
}

interface FailureRun {
  /** When the window opened, ms. */
  start: number;
  /** Failures seen in the window. */
  seen: number;
  /** Failures past INDIVIDUAL_AUTH_FAILURES, not yet written. */
  suppressed: number;
  lastIp: string;
}

/**
 * Coalesces repeated `auth.failed` audit rows, so a client hammering bad
 * tokens cannot grow the undeletable audit log by a row per request: per
 * remote address (IPv6 by /64, as the brute-force guard counts) and window,
 * the first `individual` failures are recorded one row each, and the rest
 * become one row with a count, written when the window closes (drain()).
 * Every failure is still accounted for (docs/contract.md §11), only
 * grouped.
 *
 * Unknown addresses and a direct loopback peer are never coalesced (as the
 * brute-force guard does not count them: exemptFromCounting): each of their
 * failures gets its own row. A forwarded loopback claim is coalesced.
 * Memory is bounded: past `maxTracked` addresses the oldest run is closed
 * early and its summary queued for the next drain().
 */
export class AuthFailureCoalescer {
  private readonly runs = new Map<string, FailureRun>();
  private readonly closed: AuthFailureSummary[] = [];

  /**
   * @param options.windowMs the window, milliseconds (VAULT_AUTH_FAIL_WINDOW_MS).
   * @param options.now current time, Unix milliseconds.
   * @param options.individual failures per window recorded one row each (INDIVIDUAL_AUTH_FAILURES).
   * @param options.maxTracked most addresses tracked (MAX_TRACKED_ADDRESSES).
   */
  constructor(
    private readonly options: {
      windowMs: number;
      now: () => number;
      individual?: number | undefined;
      maxTracked?: number | undefined;
    },
  ) {}

  /**
   * Counts one failed authentication from `ip`.
   * @param forwarded whether `ip` came from a trusted proxy's X-Forwarded-For.
   * @returns whether it gets its own row now (true), or is counted toward the
   *   window's summary row (false); and the summary of this address's
   *   previous window when that closed with failures left to write.
   */
  admit(ip: string | null, forwarded = false): { record: boolean; closed: AuthFailureSummary | undefined } {
    if (ip === null || exemptFromCounting(ip, forwarded)) return { record: true, closed: undefined };
    const key = limiterKey(ip) ?? ip;
    const now = this.options.now();
    let run = this.runs.get(key);
    let closed: AuthFailureSummary | undefined;
    if (run !== undefined && now - run.start >= this.options.windowMs) {
      closed = summaryOf(run);
      this.runs.delete(key);
      run = undefined;
    }
    if (run === undefined) {
      run = { start: now, seen: 0, suppressed: 0, lastIp: ip };
      this.runs.set(key, run);
      this.bound();
    }
    run.seen += 1;
    run.lastIp = ip;
    const record = run.seen <= (this.options.individual ?? INDIVIDUAL_AUTH_FAILURES);
    if (!record) run.suppressed += 1;
    return { record, closed };
  }

  /**
   * Closes the windows that have ended (all of them with `all`, at a stop)
   * and returns the summaries still to write: one per address with
   * coalesced failures.
   */
  drain(all = false): AuthFailureSummary[] {
    const now = this.options.now();
    const out = this.closed.splice(0);
    for (const [key, run] of this.runs) {
      if (!all && now - run.start < this.options.windowMs) continue;
      this.runs.delete(key);
      const summary = summaryOf(run);
      if (summary !== undefined) out.push(summary);
    }
    return out;
  }

  /** Addresses tracked now (tests). */
  get size(): number {
    return this.runs.size;
  }

  /** Past maxTracked, closes the oldest runs early (their summaries wait for drain()). */
  private bound(): void {
    const max = this.options.maxTracked ?? MAX_TRACKED_ADDRESSES;
    for (const [key, run] of this.runs) {
      if (this.runs.size <= max) break;
      this.runs.delete(key);
      const summary = summaryOf(run);
      if (summary !== undefined) this.closed.push(summary);
    }
  }
}

/** The summary row a run still owes, if any of its failures were held back. */
function summaryOf(run: FailureRun): AuthFailureSummary | undefined {
  return run.suppressed > 0 ? { ip: run.lastIp, count: run.suppressed } : undefined;
}
