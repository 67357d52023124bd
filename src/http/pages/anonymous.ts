import type { Origin } from "../../domain/events.js";
import { GLOBAL_SCOPE } from "../../domain/secrets/model.js";
import type { AnonymousCaps, SecretMeta } from "../../domain/secrets/model.js";
import ipaddr from "ipaddr.js";
import type { SecretLifecycle } from "../../domain/secrets/lifecycle.js";
import type { Receipts } from "../../domain/receipts/receipts.js";
import { ApiError } from "../errors.js";
import { limiterKey } from "../failed-auth.js";
import { parse } from "../routes/declare.js";
import { checkValueSize, createSecretBody, fileMetaOf, revealCheckOf } from "../routes/secrets/bodies.js";
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
 * The network an anonymous link is counted under (docs/share.md, "Anonymous
 * links"): an IPv4 address as is (also written IPv4-mapped), an IPv6 address
 * by its /48, the block one site is usually given (a /64 per host would let
 * one site count as 65,536 networks); `unknown` for no or no valid address
 * (in-process requests), all of which share one network.
 */
export function anonymousNet(ip: string | null): string {
  if (ip === null) return "unknown";
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(ip);
  } catch {
    return "unknown";
  }
  if (parsed.kind() === "ipv4") return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  return `${v6.parts.slice(0, 3).map((p) => p.toString(16)).join(":")}::/48`;
}

/**
 * A fixed-window counter for the whole vault, in memory: at most `limit`
 * events per `windowMs` milliseconds (VAULT_SHARE_ANONYMOUS_TOTAL_PER_MINUTE).
 */
export class GlobalRate {
  private start = Number.NEGATIVE_INFINITY;
  private count = 0;

  /**
   * @param limit events per window.
   * @param windowMs the window, milliseconds.
   * @param now current time, Unix milliseconds.
   */
  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  /** Counts one event. @returns 0 when admitted, else the milliseconds until the window ends (nothing counted). */
  take(): number {
    const now = this.now();
    if (now - this.start >= this.windowMs) {
      this.start = now;
      this.count = 0;
    }
    if (this.count >= this.limit) return Math.max(1, this.start + this.windowMs - now);
    this.count += 1;
    return 0;
  }
}

/** The anonymous links' limits besides the per-address rate (docs/share.md, "Anonymous links"). */
export interface AnonymousLimits {
  caps: AnonymousCaps;
  /** Creates per minute by every client together. */
  total: GlobalRate;
}

/**
 * A public secret made by the create page without a token, when
 * VAULT_SHARE_ANONYMOUS is on (docs/share.md, "Anonymous links"): the body of
 * POST /secrets without `key`, under caps the server enforces: TTL at most 7
 * days (7 days when omitted), reads at most 10 (1 when omitted), the value
 * within VAULT_MAX_VALUE_BYTES (a file within VAULT_MAX_FILE_BYTES and the 1 MiB body), and VAULT_SHARE_ANONYMOUS_PER_MINUTE creates
 * per client address per minute, `limits.total` creates per minute in all,
 * and the count and byte caps of `limits.caps`, in all and per network
 * (anonymousNet). It does not count against the free tier (nor is it refused
 * by it): token holders keep their whole tier. Audited with actor `share-page`.
 * The receipt (docs/share.md, "Receipts") is issued in the create's unit.
 * @returns the new secret's metadata and its receipt's token.
 * @throws ApiError 400 (bad body, a `key`, a cap exceeded), 413 (value too
 *   large), 429 (a rate, with Retry-After); VaultError "full" (429) at a
 *   count or byte cap.
 */
export async function anonymousCreate(
  deps: { tx: UnitOfWork<Work>; secrets: SecretLifecycle; receipts: Receipts; maxValueBytes: number; maxFileBytes: number },
  raw: Record<string, unknown>,
  ip: string | null,
  rate: PerAddressRate,
  limits: AnonymousLimits,
  origin: Origin,
): Promise<{ secret: SecretMeta; receipt: string }> {
  const body = parse(createSecretBody, raw);
  if (body.key !== undefined) throw new ApiError(400, "a link made without a token is public: leave out key");
  const revealCheck = revealCheckOf(body);
  const fileMeta = fileMetaOf(body);
  const ttlSeconds = body.ttl_seconds ?? ANONYMOUS_CAPS.ttlSeconds;
  const maxReads = body.max_reads ?? 1;
  if (ttlSeconds > ANONYMOUS_CAPS.ttlSeconds) throw new ApiError(400, `ttl_seconds may be at most ${ANONYMOUS_CAPS.ttlSeconds} without a token`);
  if (maxReads > ANONYMOUS_CAPS.maxReads) throw new ApiError(400, `max_reads may be at most ${ANONYMOUS_CAPS.maxReads} without a token`);
  checkValueSize(body.value, deps.maxValueBytes, deps.maxFileBytes);
  const waitMs = rate.take(ip);
  if (waitMs > 0) {
    throw new ApiError(429, "too many links made from this address", {
      message: "links made without a token are limited per address per minute; try again later or use a token",
      headers: { "Retry-After": String(Math.ceil(waitMs / 1000)) },
    });
  }
  const totalWaitMs = limits.total.take();
  if (totalWaitMs > 0) {
    throw new ApiError(429, "too many links made without a token", {
      message: "links made without a token are limited per minute on this vault; try again later or use a token",
      headers: { "Retry-After": String(Math.ceil(totalWaitMs / 1000)) },
    });
  }
  const input = { scope: GLOBAL_SCOPE, value: body.value, ttlSeconds, maxReads, revealCheck, fileMeta };
  return deps.tx.run(async (w) => {
    const secret = await deps.secrets.createAnonymous(w, input, anonymousNet(ip), limits.caps, origin);
    return { secret, receipt: await deps.receipts.issue(w, secret) };
  });
}
