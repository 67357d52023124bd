import { describe, expect, it } from "vitest";
import { ACME_BACKOFF_FIRST_MS, ACME_BACKOFF_MAX_MS, AcmeRenewer, backoffDelay, MAX_TIMER_MS, renewalTime } from "../../../src/http/tls/acme-renewer.js";
import type { AttemptOutcome, Validity } from "../../../src/http/tls/acme-renewer.js";

// The ACME schedule (docs/deploy.md "Certificates by ACME") on a hand-driven clock:
// renewal at two thirds of the lifetime, a doubling backoff after failures, long waits in steps.

const DAY = 86_400_000;

/** A clock and a timer queue that run only when told. */
function fakeTime(start = 1_000_000) {
  let now = start;
  const timers: { at: number; fn: () => void; live: boolean }[] = [];
  return {
    now: () => now,
    setTimer: (fn: () => void, ms: number) => {
      expect(ms).toBeLessThanOrEqual(MAX_TIMER_MS);
      const t = { at: now + ms, fn, live: true };
      timers.push(t);
      return () => {
        t.live = false;
      };
    },
    /** Moves the clock to the next live timer and runs it; returns its time. */
    async next(): Promise<number> {
      const live = timers.filter((t) => t.live).sort((a, b) => a.at - b.at);
      const t = live[0];
      if (t === undefined) throw new Error("no timer");
      t.live = false;
      now = Math.max(now, t.at);
      t.fn();
      // Let the attempt's promise settle.
      for (let i = 0; i < 5; i++) await Promise.resolve();
      return t.at;
    },
    pending: () => timers.filter((t) => t.live).length,
  };
}

describe("renewalTime", () => {
  it("is two thirds into the lifetime: 60 days into a 90-day certificate", () => {
    expect(renewalTime({ notBefore: 0, notAfter: 90 * DAY })).toBe(60 * DAY);
    expect(renewalTime({ notBefore: 1000, notAfter: 31_000 })).toBe(21_000);
  });
});

describe("backoffDelay", () => {
  it("doubles from a minute up to six hours", () => {
    expect([1, 2, 3, 4].map((n) => backoffDelay(n))).toEqual([60_000, 120_000, 240_000, 480_000]);
    expect(backoffDelay(50)).toBe(ACME_BACKOFF_MAX_MS);
  });
  it("never waits past the current certificate's expiry", () => {
    expect(backoffDelay(20, { now: 0, validity: { notBefore: -DAY, notAfter: 600_000 } })).toBe(599_000);
    expect(backoffDelay(1, { now: 0, validity: { notBefore: -DAY, notAfter: DAY } })).toBe(ACME_BACKOFF_FIRST_MS);
  });
});

describe("AcmeRenewer", () => {
  it("orders at once without a certificate, then at two thirds of each new one's lifetime", async () => {
    const time = fakeTime();
    const outcomes: AttemptOutcome[] = [];
    const attempts: number[] = [];
    const renewer = new AcmeRenewer({
      ...time,
      attempt: async () => {
        attempts.push(time.now());
        return { validity: { notBefore: time.now(), notAfter: time.now() + 30_000 }, ordered: attempts.length === 1 };
      },
      onAttempt: (o) => outcomes.push(o),
    });
    renewer.start(undefined);
    expect(await time.next()).toBe(1_000_000);
    expect(renewer.next).toBe(1_020_000);
    expect(await time.next()).toBe(1_020_000);
    expect(attempts).toEqual([1_000_000, 1_020_000]);
    // The second certificate came from another node: picked up, not ordered.
    expect(outcomes).toEqual(["success", "picked_up"]);
  });

  it("with a stored certificate orders nothing before its renewal time, waiting in steps of the longest timer", async () => {
    const time = fakeTime(0);
    let attempts = 0;
    const renewer = new AcmeRenewer({
      ...time,
      attempt: async () => {
        attempts += 1;
        return { validity: { notBefore: time.now(), notAfter: time.now() + 90 * DAY }, ordered: true };
      },
      onAttempt: () => {},
    });
    const stored: Validity = { notBefore: 0, notAfter: 90 * DAY };
    renewer.start(stored);
    expect(renewer.next).toBe(60 * DAY);
    // 60 days is more than one setTimeout can wait (24.8 days): two wake-ups without an order, then the order.
    expect(await time.next()).toBe(MAX_TIMER_MS);
    expect(await time.next()).toBe(2 * MAX_TIMER_MS);
    expect(attempts).toBe(0);
    expect(await time.next()).toBe(60 * DAY);
    expect(attempts).toBe(1);
  });

  it("backs off after failures, doubling, and starts over after a success", async () => {
    const time = fakeTime(0);
    const results = [false, false, false, true, false];
    const seen: { outcome: AttemptOutcome; next: number; failures: number; error?: unknown }[] = [];
    const renewer = new AcmeRenewer({
      ...time,
      attempt: async () => {
        if (results.shift() !== true) throw new Error("urn:ietf:params:acme:error:connection");
        return { validity: { notBefore: time.now(), notAfter: time.now() + 3 * DAY }, ordered: true };
      },
      onAttempt: (outcome, detail) => seen.push({ outcome, ...detail }),
    });
    renewer.start(undefined);
    const at: number[] = [];
    for (let i = 0; i < 5; i++) at.push(await time.next());
    expect(at).toEqual([0, 60_000, 180_000, 420_000, 420_000 + 2 * DAY]);
    expect(seen.map((s) => [s.outcome, s.failures])).toEqual([
      ["failure", 1],
      ["failure", 2],
      ["failure", 3],
      ["success", 0],
      ["failure", 1],
    ]);
    expect((seen[0]?.error as Error).message).toContain("acme:error:connection");
    // After the renewal failed, the next try comes a minute later (the certificate is still good for a day).
    expect(renewer.next).toBe(420_000 + 2 * DAY + 60_000);
  });

  it("schedules nothing after stop(), not even when an attempt under way ends", async () => {
    const time = fakeTime(0);
    let finish: (v: { validity: Validity; ordered: boolean }) => void = () => {};
    const renewer = new AcmeRenewer({
      ...time,
      attempt: () => new Promise<{ validity: Validity; ordered: boolean }>((resolve) => (finish = resolve)),
      onAttempt: () => {},
    });
    renewer.start(undefined);
    await time.next();
    renewer.stop();
    finish({ validity: { notBefore: 0, notAfter: DAY }, ordered: true });
    await renewer.idle();
    expect(time.pending()).toBe(0);
    expect(renewer.next).toBeUndefined();
  });
});
