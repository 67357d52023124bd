import type { Db } from "../db.js";
import { hashToken, newId, newToken } from "../crypto.js";
import type { AuditLog } from "./audit.js";
import { VaultError } from "./errors.js";
import type { Origin } from "./events.js";
import { cutPage } from "./paging.js";
import type { Page } from "./paging.js";
import { holdsPermission } from "./permissions.js";
import type { Permission } from "./permissions.js";
import { SCOPED_PERMISSIONS } from "./permissions.js";
import { GLOBAL_SCOPE } from "./secret-model.js";
import { globPrefix } from "../store/sqlite/glob.js";


/** How often last_used_at is written at most, per key: once a minute (ms). */
export const LAST_USED_DEBOUNCE_MS = 60_000;

/** A scoped API key's metadata; never its token. Times in milliseconds. */
export interface ScopedKey {
  id: string;
  name: string;
  permissions: Permission[];
  /** Only secrets whose key starts with this; null: every secret. */
  prefix: string | null;
  expiresAt: number | null;
  createdAt: number;
  lastUsedAt: number | null;
}

export interface CreateKeyInput {
  /** Label, already trimmed, 1-128 characters. */
  name: string;
  /** Non-empty, each one of SCOPED_PERMISSIONS. */
  permissions: Permission[];
  prefix: string | null;
  /** Unix milliseconds, or null for a key that never expires. */
  expiresAt: number | null;
}

/** The result of looking a bearer token up. */
export type ScopedKeyLookup = { kind: "ok"; key: ScopedKey } | { kind: "expired" } | { kind: "unknown" };


export interface KeysDeps {
  db: Db;
  audit: AuditLog;
  /** Current time, Unix milliseconds. */
  now: () => number;
}

interface Row {
  seq: number;
  id: string;
  name: string;
  token_hash: string;
  permissions: string;
  prefix: string | null;
  expires_at: number | null;
  created_at: number;
  last_used_at: number | null;
}

/**
 * Scoped API keys (interface section 4 "Scoped API keys", decisions.md
 * sections 2 and 5). The token (`vsk_` + 43 base64url characters) is
 * returned once by create(); only its SHA-256 is stored and looked up.
 *
 * Every method that writes must run inside GroupCommit.run(); key.created and
 * key.deleted are audited in the same transaction.
 */
export class ScopedKeys {
  private readonly q;

  constructor(private readonly deps: KeysDeps) {
    const db = deps.db;
    this.q = {
      insert: db.prepare(
        `INSERT INTO scoped_keys (id, name, token_hash, permissions, prefix, expires_at, created_at, last_used_at)
         VALUES (@id, @name, @token_hash, @permissions, @prefix, @expires_at, @created_at, NULL)`,
      ),
      byHash: db.prepare<[string], Row>("SELECT rowid AS seq, * FROM scoped_keys WHERE token_hash = ?"),
      byId: db.prepare<[string], Row>("SELECT rowid AS seq, * FROM scoped_keys WHERE id = ?"),
      page: db.prepare<{ after: number; glob: string | null; limit: number }, Row>(
        `SELECT rowid AS seq, * FROM scoped_keys
         WHERE rowid > @after AND (@glob IS NULL OR prefix GLOB @glob)
         ORDER BY rowid LIMIT @limit`,
      ),
      remove: db.prepare<[string]>("DELETE FROM scoped_keys WHERE id = ?"),
      touch: db.prepare<{ id: string; now: number; before: number }>(
        `UPDATE scoped_keys SET last_used_at = @now
         WHERE id = @id AND (last_used_at IS NULL OR last_used_at <= @before)`,
      ),
    };
  }

  /**
   * Creates a key and returns it with its token (the only time the token is
   * seen). Rules of decisions.md section 5: a scoped creator may grant only
   * permissions it holds (admin holds all), only a prefix that starts with
   * its own, and only an expiry no later than its own; an unrestricted admin
   * key (admin without prefix) is made only by the master key.
   *
   * @param creatorKeyId the creating scoped key's id, or null for the master key.
   * @throws VaultError "invalid" (400) when expiresAt is not in the future;
   *   "forbidden" (403) when the new key would be broader than its creator.
   */
  create(input: CreateKeyInput, creatorKeyId: string | null, origin: Origin): { key: ScopedKey; token: string } {
    const now = this.deps.now();
    if (input.expiresAt !== null && input.expiresAt <= now) {
      throw new VaultError("invalid", "expires_at must be in the future");
    }
    if (creatorKeyId !== null) this.checkNotBroader(input, creatorKeyId);
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
    this.q.insert.run({
      id: key.id,
      name: key.name,
      token_hash: hashToken(token),
      permissions: JSON.stringify(key.permissions),
      prefix: key.prefix,
      expires_at: key.expiresAt,
      created_at: key.createdAt,
    });
    this.deps.audit.recordFor(origin, GLOBAL_SCOPE, "key.created", key.id);
    return { key, token };
  }

  /**
   * One page of keys in creation order, without tokens. A prefix-scoped
   * viewer sees only keys whose prefix starts with its own (decisions.md
   * section 5: an admin key with a prefix lists only its prefix).
   * @param viewerPrefix the viewing key's prefix, or null (master, unrestricted admin).
   */
  list(viewerPrefix: string | null, options: { limit: number; after?: number | undefined }): Page<ScopedKey> {
    const rows = this.q.page.all({
      after: options.after ?? 0,
      glob: viewerPrefix === null ? null : globPrefix(viewerPrefix),
      limit: options.limit + 1,
    });
    const { rows: page, next } = cutPage(rows, options.limit, (row) => row.seq);
    return { items: page.map(toScopedKey), nextAfterId: next };
  }

  /**
   * Deletes (revokes) a key: its row is removed, so later requests with its
   * token get 401. Audited as key.deleted.
   * @param viewerPrefix the deleting key's prefix, or null; a prefixed key
   *   may delete only keys within its prefix.
   * @returns "not_found" for an unknown id, "forbidden" for a key outside
   *   the viewer's prefix.
   */
  remove(id: string, viewerPrefix: string | null, origin: Origin): "ok" | "not_found" | "forbidden" {
    const row = this.q.byId.get(id);
    if (!row) return "not_found";
    if (viewerPrefix !== null && (row.prefix === null || !row.prefix.startsWith(viewerPrefix))) return "forbidden";
    this.q.remove.run(id);
    this.deps.audit.recordFor(origin, GLOBAL_SCOPE, "key.deleted", id);
    return "ok";
  }

  /**
   * Looks a bearer token up by its SHA-256. Reads only.
   * @returns "unknown" for a token no key has (deleted keys included),
   *   "expired" once now >= expires_at, else the key.
   */
  lookup(token: string): ScopedKeyLookup {
    const row = this.q.byHash.get(hashToken(token));
    if (!row) return { kind: "unknown" };
    if (row.expires_at !== null && row.expires_at <= this.deps.now()) return { kind: "expired" };
    return { kind: "ok", key: toScopedKey(row) };
  }

  /** True when last_used_at is due a write: never written, or a minute old. */
  touchDue(key: ScopedKey): boolean {
    return key.lastUsedAt === null || key.lastUsedAt <= this.deps.now() - LAST_USED_DEBOUNCE_MS;
  }

  /**
   * Sets last_used_at to now, at most once per LAST_USED_DEBOUNCE_MS per key
   * (the guard is in the UPDATE, so requests racing in one batch write once).
   * Must run inside GroupCommit.run().
   */
  touch(id: string): void {
    const now = this.deps.now();
    this.q.touch.run({ id, now, before: now - LAST_USED_DEBOUNCE_MS });
  }

  /** A key by id, for tests and tools; undefined when unknown. */
  get(id: string): ScopedKey | undefined {
    const row = this.q.byId.get(id);
    return row ? toScopedKey(row) : undefined;
  }

  private checkNotBroader(input: CreateKeyInput, creatorKeyId: string): void {
    const creator = this.q.byId.get(creatorKeyId);
    if (!creator) throw new VaultError("forbidden", "the creating key no longer exists");
    const held = JSON.parse(creator.permissions) as string[];
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
    if (creator.expires_at !== null && (input.expiresAt === null || input.expiresAt > creator.expires_at)) {
      throw new VaultError("forbidden", "a key may not outlive the key that creates it");
    }
  }
}

function canonical(permissions: Permission[]): Permission[] {
  return SCOPED_PERMISSIONS.filter((p) => permissions.includes(p));
}

function toScopedKey(row: Row): ScopedKey {
  return {
    id: row.id,
    name: row.name,
    permissions: JSON.parse(row.permissions) as Permission[],
    prefix: row.prefix,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}
