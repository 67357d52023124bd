import { hashToken, newId, newToken } from "../crypto/tokens.js";
import type { ScopedKeyRecord } from "../store/scoped-keys.js";
import type { Awaitable, Work } from "../store/work.js";
import { VaultError } from "../model/errors.js";
import type { Origin } from "./events.js";
import { cutPage } from "./paging.js";
import type { Page } from "./paging.js";
import { holdsPermission } from "./permissions.js";
import type { Permission } from "./permissions.js";
import { SCOPED_PERMISSIONS } from "./permissions.js";
import { GLOBAL_SCOPE } from "./secrets/model.js";
import type { ScopedKey } from "../model/records.js";
export type { ScopedKey } from "../model/records.js";

/** How often last_used_at is written at most, per key: once a minute (ms). */
export const LAST_USED_DEBOUNCE_MS = 60_000;

export interface CreateKeyInput {
  /** Label, already trimmed, 1-128 characters. */
  name: string;
  /** Non-empty, each one of SCOPED_PERMISSIONS. */
  permissions: Permission[];
  prefix: string | null;
  /** Unix milliseconds, or null for a key that never expires. */
  expiresAt: number | null;
}

export interface KeysDeps {
  audit: KeyAudit;
  /** Current time, Unix milliseconds. */
  now: () => number;
}

/** What the keys write to the audit log (domain/audit/log.ts AuditLog). */
export interface KeyAudit {
  recordFor(w: Work, origin: Origin, scope: string, action: string, key: string | null): Awaitable<void>;
}

/**
 * Scoped API keys (docs/keys.md, docs/contract.md
 * §4 and §8). The token (`vsk_` + 43 base64url characters) is
 * returned once by create(); only its SHA-256 is stored and looked up.
 *
 * Every method takes the unit of work's handle; key.created and key.deleted
 * are audited in the same transaction. The SQL is store/scoped-keys.ts's.
 */
export class ScopedKeys {
  constructor(private readonly deps: KeysDeps) {}

  /**
   * Creates a key and returns it with its token (the only time the token is
   * seen). Rules of docs/contract.md §8: a scoped creator may grant only
   * permissions it holds (admin holds all), only a prefix that starts with
   * its own, and only an expiry no later than its own; an unrestricted admin
   * key (admin without prefix) is made only by the master key.
   *
   * @param creatorKeyId the creating scoped key's id, or null for the master key.
   * @throws VaultError "invalid" (400) when expiresAt is not in the future;
   *   "forbidden" (403) when the new key would be broader than its creator.
   */
  async create(w: Work, input: CreateKeyInput, creatorKeyId: string | null, origin: Origin): Promise<{ key: ScopedKey; token: string }> {
    const now = this.deps.now();
    if (input.expiresAt !== null && input.expiresAt <= now) {
      throw new VaultError("invalid", "expires_at must be in the future");
    }
    if (creatorKeyId !== null) this.checkNotBroader(input, await w.scopedKeys.byId(creatorKeyId));
    const token = newToken("vsk_");
    const key: ScopedKey = {
      id: newId("sk_"),
      name: input.name,
      permissions: canonical(input.permissions),
      prefix: input.prefix,
      expiresAt: input.expiresAt,
      createdAt: now,
      lastUsedAt: null,
    };
    await w.scopedKeys.insert(key, hashToken(token));
    await this.deps.audit.recordFor(w, origin, GLOBAL_SCOPE, "key.created", key.id);
    return { key, token };
  }

  /**
   * One page of keys in creation order, without tokens. A prefix-scoped
   * viewer sees only keys whose prefix starts with its own (docs/contract.md
   * §8: an admin key with a prefix lists only its prefix).
   * @param viewerPrefix the viewing key's prefix, or null (master, unrestricted admin).
   */
  async list(w: Work, viewerPrefix: string | null, options: { limit: number; after?: number | undefined }): Promise<Page<ScopedKey>> {
    const rows = await w.scopedKeys.page({ afterSeq: options.after ?? 0, keyPrefix: viewerPrefix, limit: options.limit + 1 });
    const { rows: page, next } = cutPage(rows, options.limit, (row) => row.seq);
    return { items: page.map(withoutSeq), nextAfterId: next };
  }

  /**
   * Deletes (revokes) a key: its row is removed, so later requests with its
   * token get 401. Audited as key.deleted.
   * @param viewerPrefix the deleting key's prefix, or null; a prefixed key
   *   may delete only keys within its prefix.
   * @throws VaultError "not_found" (404) for an unknown id; "forbidden"
   *   (403) for a key outside the viewer's prefix.
   */
  async remove(w: Work, id: string, viewerPrefix: string | null, origin: Origin): Promise<void> {
    const row = await w.scopedKeys.byId(id);
    if (!row) throw new VaultError("not_found", "key not found");
    if (viewerPrefix !== null && (row.prefix === null || !row.prefix.startsWith(viewerPrefix))) {
      throw new VaultError("forbidden", "this key is outside your key's prefix");
    }
    await w.scopedKeys.remove(id);
    await this.deps.audit.recordFor(w, origin, GLOBAL_SCOPE, "key.deleted", id);
  }

  /**
   * Looks a bearer token up by its SHA-256 (docs/keys.md "Expiry and
   * revocation"). Reads only. A token no key has is not a refusal here:
   * the next token resolver may know it, and auth.ts answers 401 `invalid
   * token` when none does.
   * @returns the key, or undefined for a token no key has (deleted keys included).
   * @throws VaultError "unauthorized" (401 `token expired`) once now >= expires_at.
   */
  async lookup(w: Work, token: string): Promise<ScopedKey | undefined> {
    const row = await w.scopedKeys.byTokenHash(hashToken(token));
    if (!row) return undefined;
    if (row.expiresAt !== null && row.expiresAt <= this.deps.now()) throw new VaultError("unauthorized", "token expired");
    return withoutSeq(row);
  }

  /** True when last_used_at is due a write: never written, or a minute old. */
  touchDue(key: ScopedKey): boolean {
    return key.lastUsedAt === null || key.lastUsedAt <= this.deps.now() - LAST_USED_DEBOUNCE_MS;
  }

  /**
   * Sets last_used_at to now, at most once per LAST_USED_DEBOUNCE_MS per key
   * (the guard is in the UPDATE, so requests racing in one batch write once).
   */
  async touch(w: Work, id: string): Promise<void> {
    const now = this.deps.now();
    await w.scopedKeys.touch(id, now, now - LAST_USED_DEBOUNCE_MS);
  }

  /** A key by id, for tests and tools; undefined when unknown. */
  async get(w: Work, id: string): Promise<ScopedKey | undefined> {
    const row = await w.scopedKeys.byId(id);
    return row ? withoutSeq(row) : undefined;
  }

  private checkNotBroader(input: CreateKeyInput, creator: ScopedKey | undefined): void {
    if (!creator) throw new VaultError("forbidden", "the creating key no longer exists");
    const held: string[] = creator.permissions;
    if (!input.permissions.every((p) => holdsPermission(held, p))) {
      throw new VaultError("forbidden", "a key may grant only permissions it holds");
    }
    if (creator.prefix === null) {
      // An unrestricted admin key: only the master key makes one.
      if (input.prefix === null && input.permissions.includes("admin")) {
        throw new VaultError("forbidden", "only the master key may create an admin key without a prefix");
      }
    } else if (input.prefix === null || !input.prefix.startsWith(creator.prefix)) {
      throw new VaultError("forbidden", "the prefix must start with the creating key's prefix");
    }
    if (creator.expiresAt !== null && (input.expiresAt === null || input.expiresAt > creator.expiresAt)) {
      throw new VaultError("forbidden", "a key may not outlive the key that creates it");
    }
  }
}

function canonical(permissions: Permission[]): Permission[] {
  return SCOPED_PERMISSIONS.filter((p) => permissions.includes(p));
}

/** A stored key without its list position. */
function withoutSeq(record: ScopedKeyRecord): ScopedKey {
  const { seq: _seq, ...key } = record;
  return key;
}
