import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY } from "@ephemeral-vault/client";
import { connectionRetryable, newIdempotencyKey, retryDelay, retryPolicy } from "../../packages/client/src/retry.js";

// The pure parts of the client's retries (docs/client.md, "Retries"): the policy option, the waits,
// which connection failures count, the key. What they do against a vault: retries.test.ts.

/** A fetch failure as undici makes it: TypeError "fetch failed" with the socket's error as cause. */
function fetchFailed(cause: unknown): TypeError {
  return new TypeError("fetch failed", { cause });
}

function coded(code: string, message = code): Error {
  return Object.assign(new Error(message), { code });
}

describe("retryPolicy", () => {
  it("completes a partial option from the defaults; false is one attempt", () => {
    expect(retryPolicy(undefined)).toEqual(DEFAULT_RETRY);
    expect(retryPolicy({ attempts: 2 })).toEqual({ ...DEFAULT_RETRY, attempts: 2 });
    expect(retryPolicy({ attempts: undefined, maxDelayMs: 100 } as never)).toEqual({ ...DEFAULT_RETRY, maxDelayMs: 100 });
    expect(retryPolicy(false).attempts).toBe(1);
  });

  it("refuses attempts below 1 or fractional, and negative or NaN delays", () => {
    for (const bad of [{ attempts: 0 }, { attempts: -1 }, { attempts: 2.5 }, { attempts: Number.NaN }, { baseDelayMs: -1 }, { maxDelayMs: Number.NaN }]) {
      expect(() => retryPolicy(bad), JSON.stringify(bad)).toThrow(RangeError);
    }
  });
});

describe("retryDelay", () => {
  const policy = { attempts: 10, baseDelayMs: 100, maxDelayMs: 1_000 };

  it("doubles from baseDelayMs, in the upper half of each step, never above maxDelayMs", () => {
    for (let i = 0; i < 200; i++) {
      const steps = [2, 3, 4, 5, 6, 7].map((next) => retryDelay(policy, next, undefined) ?? -1);
      const caps = [100, 200, 400, 800, 1_000, 1_000];
      steps.forEach((ms, n) => {
        expect(ms).toBeGreaterThanOrEqual((caps[n] ?? 0) / 2);
        expect(ms).toBeLessThanOrEqual(caps[n] ?? 0);
      });
    }
  });

  it("waits a Retry-After as given, and stops (undefined) for one longer than maxDelayMs", () => {
    expect(retryDelay(policy, 2, 1)).toBe(1_000);
    expect(retryDelay(policy, 5, 0)).toBe(0);
    expect(retryDelay(policy, 2, 2)).toBeUndefined();
  });
});

describe("connectionRetryable", () => {
  it("a connection that never opened is retried for every call, even a write without a key", () => {
    for (const code of ["ECONNREFUSED", "UND_ERR_CONNECT_TIMEOUT", "EHOSTUNREACH"]) {
      expect(connectionRetryable(fetchFailed(coded(code)), "unsent"), code).toBe(true);
      expect(connectionRetryable(fetchFailed(coded(code)), "keyed"), code).toBe(true);
    }
    // Node's happy-eyeballs failure: an AggregateError holding one refusal per address.
    const both = Object.assign(new AggregateError([coded("ECONNREFUSED"), coded("ECONNREFUSED")], ""), { code: "ECONNREFUSED" });
    expect(connectionRetryable(fetchFailed(both), "unsent")).toBe(true);
    const inner = new AggregateError([coded("ECONNREFUSED")], "");
    expect(connectionRetryable(fetchFailed(inner), "unsent")).toBe(true);
  });

  it("a connection cut after sending is retried for keyed and safe calls only", () => {
    for (const cause of [coded("ECONNRESET", "socket hang up"), coded("UND_ERR_SOCKET", "other side closed"), coded("EPIPE")]) {
      expect(connectionRetryable(fetchFailed(cause), "keyed")).toBe(true);
      expect(connectionRetryable(fetchFailed(cause), "safe")).toBe(true);
      expect(connectionRetryable(fetchFailed(cause), "unsent")).toBe(false);
    }
    // A body cut while read: undici's TypeError "terminated".
    expect(connectionRetryable(new TypeError("terminated", { cause: coded("UND_ERR_SOCKET") }), "keyed")).toBe(true);
  });

  it("a failure without such a code is not retried", () => {
    expect(connectionRetryable(new TypeError("fetch failed"), "keyed")).toBe(false);
    expect(connectionRetryable(fetchFailed(coded("ENOTFOUND")), "keyed")).toBe(false);
    expect(connectionRetryable(fetchFailed(coded("CERT_HAS_EXPIRED")), "safe")).toBe(false);
    expect(connectionRetryable("a string", "safe")).toBe(false);
  });
});

describe("newIdempotencyKey", () => {
  it("is 22 base64url characters (128 bits), within 1 to 255 printable ASCII, fresh each time", () => {
    const keys = new Set(Array.from({ length: 1_000 }, () => newIdempotencyKey()));
    expect(keys.size).toBe(1_000);
    for (const key of keys) expect(key).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});
