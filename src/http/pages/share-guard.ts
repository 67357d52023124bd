import { FailedAuthLimiter } from "../failed-auth.js";

/** A request's client as the share pages see it. */
export interface ShareClient {
  /** The socket's address, or the last X-Forwarded-For entry behind a trusted proxy; null when unknown. */
  ip: string | null;
  /** Whether `ip` came from a trusted proxy (then a loopback claim is counted too). */
  forwarded: boolean;
}

/**
 * The share pages' own limiter (docs/share.md, "Misses and refusals"):
 * counts the refusals of `/s/...` (a link that names nothing, a reveal of
 * a secret that is not there) per client address (IPv4 by address, IPv6 by
 * its /64, as the brute-force guard counts) in a fixed window, and answers
 * 429 under `/s/` once an address has `limit` of them in one window.
 *
 * It is separate from the API's brute-force guard (failed-auth.ts
 * FailedAuthLimiter in front.ts): share misses need no credential, so any
 * web page can make a browser send them (`<img src=".../s/junk">`); counting
 * them where bearer tokens are judged would let such a page lock a token
 * holder, the master key included, out of the API. This limiter only ever
 * refuses requests under `/s/`; the API never consults it.
 *
 * In memory, per app instance; unknown addresses and a direct loopback peer
 * are not counted (failed-auth.ts exemptFromCounting).
 */
export class ShareMissGuard {
  private readonly limiter: FailedAuthLimiter;

  /**
   * @param options.limit refusals per window before 429; 0 turns it off.
   * @param options.windowMs the window, milliseconds.
   * @param options.now current time, Unix milliseconds.
   */
  constructor(options: { limit: number; windowMs: number; now: () => number }) {
    this.limiter = new FailedAuthLimiter(options);
  }

  /**
   * Counts one refusal of a share request from `client`: a miss under `/s/`,
   * and any refusal a share route decides counts against the guard (a
   * refused reveal proof: docs/share.md, "Misses and refusals"). Call it
   * once per refused request, after the answer is decided.
   */
  countRefusal(client: ShareClient): void {
    this.limiter.fail(client.ip, client.forwarded);
  }

  /** Milliseconds until `client` may use the share pages again; 0 when it is not refused. */
  retryAfterMs(client: ShareClient): number {
    return this.limiter.retryAfterMs(client.ip, client.forwarded);
  }
}
