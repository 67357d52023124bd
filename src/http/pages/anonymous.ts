import type { Origin } from "../../domain/events.js";
import { GLOBAL_SCOPE } from "../../domain/secret-model.js";
import type { SecretMeta } from "../../domain/secret-model.js";
import type { SecretLifecycle } from "../../domain/secrets.js";
import { ApiError } from "../errors.js";
import { limiterKey } from "../failed-auth.js";
import { parse } from "../routes/input.js";
import { checkValueSize, createSecretBody, revealCheckOf } from "../routes/secret-input.js";
import type { UnitOfWork, Work } from "../../store/work.js";
import { ANONYMOUS_CAPS } from "./create-page.js";

/** Most client addresses the anonymous-create rate tracks (the oldest windows are dropped past it). */
const MAX_TRACKED = 50_000;

/**
 * A fixed-window counter per client address (IPv6 by /64, as the
 * brute-force guard counts), in memory: at most `limit` events per address
 * per `windowMs` milliseconds.
 */
export class PerAddressRate {
  private readonly windows = new Map<string, { start: number; count: number }>();

  /**
   * @param limit events per window per address.
   * @param windowMs the window, milliseconds.
   * @param now current time, Unix milliseconds.
   */
  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  /**
   * Counts one event from `ip`.
   * @returns 0 when admitted, else the milliseconds until the address may try again (nothing counted).
   */
  take(ip: string | null): number {
    const key = (ip === null ? null : limiterKey(ip)) ?? "unknown";
    const now = this.now();
    let w = this.windows.get(key);
    if (w === undefined || now - w.start >= this.windowMs) {
      if (w === undefined && this.windows.size >= MAX_TRACKED) {
        const oldest = this.windows.keys().next().value;
        if (oldest !== undefined) this.windows.delete(oldest);
      }
      w = { start: now, count: 0 };
      this.windows.delete(key);
      this.windows.set(key, w);
    }
    if (w.count >= this.limit) return Math.max(1, w.start + this.windowMs - now);
    w.count += 1;
    return 0;
  }
}

/**
 * A public secret made by the create page without a token, when
 * VAULT_SHARE_ANONYMOUS is on (docs/share.md, "Anonymous links"): the body of
 * POST /secrets without `key`, under caps the server enforces: TTL at most 7
 * days (7 days when omitted), reads at most 10 (1 when omitted), the value
 * within VAULT_MAX_VALUE_BYTES, and VAULT_SHARE_ANONYMOUS_PER_MINUTE creates
 * per client address per minute. It counts against the free tier like any
 * secret, and is audited with actor `share-page`.
 * @returns the new secret's metadata.
 * @throws ApiError 400 (bad body, a `key`, a cap exceeded), 413 (value too
 *   large), 429 (rate, with Retry-After); VaultError "limit" at the free-tier
 *   limit (402).
 */
export async function anonymousCreate(
  deps: { tx: UnitOfWork<Work>; secrets: SecretLifecycle; maxValueBytes: number },
  raw: Record<string, unknown>,
  ip: string | null,
  rate: PerAddressRate,
  origin: Origin,
): Promise<SecretMeta> {
  const body = parse(createSecretBody, raw);
  if (body.key !== undefined) throw new ApiError(400, "a link made without a token is public: leave out key");
  const revealCheck = revealCheckOf(body);
  const ttlSeconds = body.ttl_seconds ?? ANONYMOUS_CAPS.ttlSeconds;
  const maxReads = body.max_reads ?? 1;
  if (ttlSeconds > ANONYMOUS_CAPS.ttlSeconds) throw new ApiError(400, `ttl_seconds may be at most ${ANONYMOUS_CAPS.ttlSeconds} without a token`);
  if (maxReads > ANONYMOUS_CAPS.maxReads) throw new ApiError(400, `max_reads may be at most ${ANONYMOUS_CAPS.maxReads} without a token`);
  checkValueSize(body.value, deps.maxValueBytes);
  const waitMs = rate.take(ip);
  if (waitMs > 0) {
    throw new ApiError(429, "too many links made from this address", {
      message: "links made without a token are limited per address per minute; try again later or use a token",
      headers: { "Retry-After": String(Math.ceil(waitMs / 1000)) },
    });
  }
  return deps.tx.run((w) => deps.secrets.create(w, { scope: GLOBAL_SCOPE, value: body.value, ttlSeconds, maxReads, revealCheck }, origin));
}
