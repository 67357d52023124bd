import type { Db } from "../db.js";
import { newPublicId } from "../crypto.js";
import type { ValueCipher } from "../crypto.js";
import type { EventSink, Origin, SecretEventType } from "./events.js";
import { VaultError } from "./errors.js";
import { cutPage } from "./paging.js";
import { globPrefix, toMeta } from "./secret-model.js";
import { ListStatements, secretStatements } from "./secret-statements.js";
import type { ChangeOutcome, CheckOutcome, CreateInput, ListOptions, ListPage, PatchInput, Reader, RetrieveOutcome, Row, SecretMeta } from "./secret-model.js";


export interface SecretsDeps {
  db: Db;
  cipher: ValueCipher;
  events: EventSink;
  /** Current time, Unix milliseconds. */
  now: () => number;
  /** Active-secret limit (free tier), or null when a valid license lifts it. */
  activeLimit: () => number | null;
}

/**
 * The one secret lifecycle (interface section 3, decisions.md section 4) for
 * global and org secrets alike: active -> burned | sealed | expired | deleted.
 *
 * Every method is synchronous and must run inside GroupCommit.run(): each
 * change, its audit rows and its outbox rows commit together or not at all.
 * Time comes from deps.now(), in milliseconds.
 */
export class SecretLifecycle {
  private readonly q;
  private readonly lists: ListStatements;

  constructor(private readonly deps: SecretsDeps) {
    this.q = secretStatements(deps.db);
    this.lists = new ListStatements(deps.db);
  }

  /**
   * Creates a secret (state active) and emits `secret.created`.
   * @throws VaultError "conflict" when the key names a live secret of the
   *   scope (409), "limit" when the active-secret limit is reached (402).
   */
  create(input: CreateInput, origin: Origin): SecretMeta {
    const now = this.deps.now();
    const isPublic = input.key === undefined;
    const key = input.key ?? newPublicId();
    const existing = this.q.live.get(input.scope, key);
    if (existing) {
      if (this.isDue(existing, now)) this.expireRow(existing, now, origin);
      else throw new VaultError("conflict", "a secret with this key already exists");
    }
    const limit = this.deps.activeLimit();
    if (limit !== null && (this.q.countActive.get(now)?.n ?? 0) >= limit) {
      throw new VaultError("limit", "free tier limit reached", {
        message: `Without a valid license key this vault holds at most ${limit} active secrets. Set VAULT_LICENSE_KEY to lift the limit.`,
      });
    }
    const row = this.q.insert.get({
      scope: input.scope,
      key,
      is_public: isPublic ? 1 : 0,
      ciphertext: this.deps.cipher.encryptRecord(input.value, { scope: input.scope, key, createdAt: now }),
      now,
      expires_at: input.ttlSeconds === undefined ? null : now + input.ttlSeconds * 1000,
      max_reads: input.maxReads ?? null,
      burn_on_limit: input.burnOnLimit === false ? 0 : 1,
      owner_id: input.ownerId ?? null,
      allowed_keys: input.allowedKeys ? JSON.stringify(input.allowedKeys) : null,
    }) as Row;
    const meta = toMeta(row);
    this.emit("secret.created", meta, origin);
    return meta;
  }

  /**
   * Reads a secret's value and counts the read, atomically: the guarded
   * UPDATE ... RETURNING admits exactly max_reads readers. The read that
   * reaches max_reads burns the secret (or seals it when burnOnLimit is
   * false); events `secret.read` then `secret.burned` / `secret.sealed`.
   * A secret past its expires_at is expired here (event `secret.expired`)
   * and reported not_found, even before the sweeper runs.
   *
   * @throws DecryptError when the ciphertext does not open (wrong key, row
   *   moved): the read is not counted; the caller answers 500.
   */
  retrieve(scope: string, key: string, reader: Reader, origin: Origin): RetrieveOutcome {
    const now = this.deps.now();
    const row = this.liveRow(scope, key, now, origin);
    if (!row) return { kind: "not_found" };
    if (!this.mayRead(row, reader)) return { kind: "forbidden" };
    if (row.state === "sealed") return { kind: "sealed" };
    const counted = this.q.countRead.get(row.id);
    if (!counted) return { kind: row.burn_on_limit ? "not_found" : "sealed" };
    const value = this.deps.cipher.decryptRecord(row.ciphertext as Buffer, {
      scope: row.scope,
      key: row.key,
      createdAt: row.created_at,
    });
    const meta = toMeta({ ...row, read_count: counted.read_count });
    this.emit("secret.read", meta, origin);
    if (counted.max_reads !== null && counted.read_count >= counted.max_reads) {
      if (row.burn_on_limit) {
        this.q.remove.run(row.id);
        this.emit("secret.burned", meta, origin);
      } else {
        this.q.seal.run(now, row.id);
        meta.state = "sealed";
        this.emit("secret.sealed", meta, origin);
      }
    }
    return { kind: "ok", secret: meta, value };
  }

  /**
   * Looks a secret up without decrypting it or counting a read (HEAD).
   * Expires it first when its TTL has passed.
   * @returns the metadata, or undefined when there is no live secret.
   */
  peek(scope: string, key: string, origin: Origin): SecretMeta | undefined {
    const now = this.deps.now();
    const row = this.liveRow(scope, key, now, origin);
    return row ? toMeta(row) : undefined;
  }

  /**
   * HEAD: whether `reader` could read the secret, without decrypting it or
   * counting a read; the same rules, in the same order, as retrieve():
   * not_found, then `allowed_keys` (decisions.md section 5: forbidden),
   * then sealed. Expires it first when its TTL has passed.
   */
  check(scope: string, key: string, reader: Reader, origin: Origin): CheckOutcome {
    const row = this.liveRow(scope, key, this.deps.now(), origin);
    if (!row) return { kind: "not_found" };
    if (!this.mayRead(row, reader)) return { kind: "forbidden" };
    if (row.state === "sealed") return { kind: "sealed" };
    return { kind: "ok", secret: toMeta(row) };
  }

  /**
   * PATCH (decisions.md section 4): `ttlSeconds` sets expires_at = now + ttl;
   * `maxReads` sets a new limit and resets read_count to 0, which makes a
   * sealed secret active again. Event `secret.updated`.
   * @throws VaultError "invalid" when neither is given (400), "conflict" for
   *   an org secret that burns on its limit (created with delete=true) (409).
   */
  update(scope: string, key: string, patch: PatchInput, origin: Origin, opts: { sealable: boolean }): ChangeOutcome {
    if (patch.ttlSeconds === undefined && patch.maxReads === undefined) {
      throw new VaultError("invalid", "give ttl_seconds or max_reads");
    }
    const now = this.deps.now();
    const row = this.liveRow(scope, key, now, origin);
    if (!row) return { kind: "not_found" };
    if (opts.sealable && row.burn_on_limit) {
      throw new VaultError("conflict", "only secrets created with delete: false can be patched");
    }
    const reset = patch.maxReads !== undefined;
    const updated = this.q.patch.get({
      id: row.id,
      now,
      expires_at: patch.ttlSeconds !== undefined ? now + patch.ttlSeconds * 1000 : row.expires_at,
      max_reads: reset ? patch.maxReads : row.max_reads,
      read_count: reset ? 0 : row.read_count,
      state: reset ? "active" : row.state,
    }) as Row;
    const meta = toMeta(updated);
    this.emit("secret.updated", meta, origin);
    return { kind: "ok", secret: meta };
  }

  /**
   * Deletes a live (active or sealed) secret outright; event `secret.deleted`.
   * A secret past its TTL is expired instead and reported not_found.
   */
  remove(scope: string, key: string, origin: Origin): ChangeOutcome {
    const now = this.deps.now();
    const row = this.liveRow(scope, key, now, origin);
    if (!row) return { kind: "not_found" };
    this.q.remove.run(row.id);
    const meta = toMeta(row);
    this.emit("secret.deleted", meta, origin);
    return { kind: "ok", secret: meta };
  }

  /**
   * One page of a scope's live secrets in creation order, without values.
   * Secrets past expires_at are left out, swept or not (decisions.md section 4).
   */
  list(scope: string, options: ListOptions): ListPage {
    const now = this.deps.now();
    const rows = this.lists.get(options.includeSealed === true, options.keyPrefix !== undefined).all({
      scope,
      now,
      after: options.afterId ?? 0,
      glob: options.keyPrefix !== undefined ? globPrefix(options.keyPrefix) : null,
      limit: options.limit + 1,
    });
    const { rows: page, next } = cutPage(rows, options.limit, (row) => row.id);
    return { secrets: page.map(toMeta), nextAfterId: next };
  }

  /**
   * The sweeper's step: expires up to `batch` secrets whose expires_at has
   * passed, destroying their values and emitting `secret.expired`.
   * @returns how many were expired (less than `batch` means none remain).
   */
  expireDue(batch: number, origin: Origin): number {
    const now = this.deps.now();
    const rows = this.q.due.all(now, batch);
    for (const row of rows) this.expireRow(row, now, origin);
    return rows.length;
  }

  /**
   * Removes a scope's expired tombstones (first expiring what is due) and
   * returns how many were removed: the `pruned` count.
   * @param keyPrefix limit to keyed secrets with this prefix (prefix-scoped admin keys).
   */
  prune(scope: string, origin: Origin, keyPrefix?: string): number {
    const now = this.deps.now();
    for (const row of this.q.dueInScope.all(now, scope)) {
      // A prefix-scoped prune touches only its prefix, expiries included.
      if (keyPrefix !== undefined && (row.is_public === 1 || !row.key.startsWith(keyPrefix))) continue;
      this.expireRow(row, now, origin);
    }
    const result =
      keyPrefix === undefined
        ? this.q.pruneScope.run(scope)
        : this.q.pruneScopePrefix.run(scope, globPrefix(keyPrefix));
    this.deps.events.secretsPruned(scope, result.changes, origin);
    return result.changes;
  }

  /** Secrets that count toward the free tier: active or sealed, not past their TTL. */
  countActive(): number {
    return this.q.countActive.get(this.deps.now())?.n ?? 0;
  }

  /**
   * The live (active or sealed) row of a key, or undefined. A row past its
   * expires_at is expired here (value destroyed, `secret.expired`) and
   * reported missing: nothing past its TTL is ever served.
   */
  private liveRow(scope: string, key: string, now: number, origin: Origin): Row | undefined {
    const row = this.q.live.get(scope, key);
    if (!row) return undefined;
    if (this.isDue(row, now)) {
      this.expireRow(row, now, origin);
      return undefined;
    }
    return row;
  }

  private isDue(row: Row, now: number): boolean {
    return row.expires_at !== null && row.expires_at <= now;
  }

  private mayRead(row: Row, reader: Reader): boolean {
    if (row.allowed_keys === null || reader.principalKeyId === null) return true;
    return (JSON.parse(row.allowed_keys) as string[]).includes(reader.principalKeyId);
  }

  private expireRow(row: Row, now: number, origin: Origin): void {
    this.q.expire.run(now, row.id);
    this.emit("secret.expired", { ...toMeta(row), state: "expired" }, origin);
  }

  private emit(type: SecretEventType, meta: SecretMeta, origin: Origin): void {
    this.deps.events.secretEvent(
      {
        type,
        scope: meta.scope,
        key: meta.key,
        isPublic: meta.isPublic,
        readCount: meta.readCount,
        maxReads: meta.maxReads,
        expiresAt: meta.expiresAt,
      },
      origin,
    );
  }
}
