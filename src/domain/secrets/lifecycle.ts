import { newPublicId } from "../../crypto/tokens.js";
import type { ValueCipher } from "../../crypto/cipher.js";
import { FIRST_VALUE_VERSION } from "../../store/secrets.js";
import type { SecretRecord } from "../../store/secrets.js";
import { andThen } from "../../store/work.js";
import type { Awaitable, Work } from "../../store/work.js";
import type { EventSink, Origin, SecretEventType } from "../events.js";
import { VaultError } from "../../model/errors.js";
import { cutPage } from "../paging.js";
import { retrieveSecret } from "./read.js";
import type { ReadSteps } from "./read.js";
import { DUPLICATE_KEY, eventOf, GLOBAL_SCOPE, isDue, limitsOf, PastTtl, refuseUnreadable, SECRET_NOT_FOUND, toMeta } from "./model.js";
import type { AnonymousCaps, CreateInput, ListOptions, ListPage, PatchInput, Reader } from "./model.js";
import type { ReplaceInput, ReplaceOutcome, SecretMeta, SecretRead } from "./model.js";

export interface SecretsDeps {
  cipher: ValueCipher;
  events: EventSink;
  /** Current time, Unix milliseconds. */
  now: () => number;
  /** Active-secret limit (free tier), or null when a valid license lifts it. */
  activeLimit: () => number | null;
}


/** The events after which a secret's value is gone (its `file_meta` goes with it). */
const ENDS: ReadonlySet<SecretEventType> = new Set<SecretEventType>(["secret.burned", "secret.expired", "secret.deleted"]);
/**
 * The one secret lifecycle (docs/contract.md §6) for
 * global and org secrets alike: active -> burned | sealed | expired | deleted.
 *
 * Every method takes the work handle of a unit of work (`tx.run((w) =>
 * ...)`): each change, its audit rows and its outbox rows commit together or
 * not at all. The SQL is the store's (store/secrets.ts); the decisions are
 * here. Time comes from deps.now(), in milliseconds.
 *
 * A refusal is a thrown VaultError (model/errors.ts) and changes nothing;
 * a secret found past its TTL is refused with PastTtl (404), which the
 * caller follows with expireKey() in a unit of its own.
 */
export class SecretLifecycle {
  constructor(private readonly deps: SecretsDeps) {}

  /**
   * Creates a secret (state active) and emits `secret.created`.
   * @throws VaultError "conflict" when the key names a live secret of the
   *   scope (409), "limit" when the active-secret limit is reached (402).
   */
  async create(w: Work, input: CreateInput, origin: Origin): Promise<SecretMeta> {
    return this.createRow(w, input, origin, undefined);
  }

  /**
   * Creates an anonymous link (docs/share.md, "Anonymous links"): a public
   * secret of the global scope made without a token, marked with the
   * network it came from. It does not count against the free tier, and the
   * free tier does not refuse it: it is refused when it would pass one of
   * `caps` (live anonymous secrets and their ciphertext bytes, in all and of
   * `net`), counted in the same unit of work as the insert.
   * @param net the client's network (http/pages/anonymous.ts anonymousNet).
   * @throws VaultError "full" (429) when a cap is reached; as create().
   */
  async createAnonymous(w: Work, input: CreateInput, net: string, caps: AnonymousCaps, origin: Origin): Promise<SecretMeta> {
    const usage = await w.secrets.anonymousUsage(this.deps.now(), net);
    const bytes = Buffer.byteLength(input.value);
    const over =
      usage.netCount >= caps.netMaxSecrets || usage.netBytes + bytes > caps.netMaxBytes
        ? "from this address"
        : usage.count >= caps.maxSecrets || usage.bytes + bytes > caps.maxBytes
          ? "on this vault"
          : undefined;
    if (over !== undefined) {
      throw new VaultError("full", "too many links made without a token", {
        message: `links made without a token are capped ${over} until some expire or are read; use a token to create more`,
      });
    }
    return this.createRow(w, input, origin, net);
  }

  /** create() and createAnonymous(): `anonymousNet` set skips the free tier and marks the row. */
  private async createRow(w: Work, input: CreateInput, origin: Origin, anonymousNet: string | undefined): Promise<SecretMeta> {
    const now = this.deps.now();
    const isPublic = input.key === undefined;
    const key = input.key ?? input.publicId ?? newPublicId();
    // A fresh 256-bit public id names no row: only a caller's key is looked up.
    const existing = isPublic ? undefined : await w.secrets.live(input.scope, key);
    if (existing) {
      if (isDue(existing, now)) await this.expireRow(w, existing, now, origin);
      else throw new VaultError("conflict", DUPLICATE_KEY);
    }
    const limit = anonymousNet === undefined ? this.deps.activeLimit() : null;
    if (limit !== null && (await w.secrets.countActive(now)) >= limit) {
      throw new VaultError("limit", "free tier limit reached", {
        message: `Without a valid license key this vault holds at most ${limit} active secrets. Set VAULT_LICENSE_KEY to lift the limit.`,
      });
    }
    // The insert writes the first value version (store/secrets.ts NewSecret), the one this AAD binds.
    const ciphertext = this.deps.cipher.encryptRecord(input.value, { scope: input.scope, key, createdAt: now, valueVersion: FIRST_VALUE_VERSION });
    const record = await w.secrets.insert(
      Object.assign(limitsOf(input, now), { scope: input.scope, key, isPublic, ciphertext, now, ownerId: input.ownerId ?? null }),
    );
    if (anonymousNet !== undefined) await w.secrets.markAnonymous(record.id, anonymousNet);
    if (isPublic && input.revealCheck !== undefined) {
      await w.revealChecks.insert(key, { checkHash: input.revealCheck.checkHash, maxFailures: input.revealCheck.maxFailures, failures: 0 });
    }
    // A file link's encrypted name, type and size, shown before the reveal (docs/share.md, "Files").
    if (isPublic && input.fileMeta !== undefined) await w.fileMetas.insert(key, input.fileMeta);
    const meta = toMeta(record);
    await this.emit(w, "secret.created", meta, origin);
    return meta;
  }

  /**
   * Reads a secret's value and counts the read, atomically
   * (domain/secrets/read.ts): the guarded UPDATE ... RETURNING admits exactly
   * max_reads readers; the read that reaches max_reads burns the secret (or
   * seals it when burnOnLimit is false).
   * @throws VaultError "not_found" (404) for no live secret, or one that
   *   burned while this read waited; PastTtl (404) for one past its
   *   expires_at (the caller expires it: expireKey); "forbidden" (403) for
   *   a reader not in `allowed_keys`; "gone" (410) for a sealed secret.
   * @throws DecryptError when the ciphertext does not open: the read is not
   *   counted; the caller answers 500.
   */
  retrieve(w: Work, scope: string, key: string, reader: Reader, origin: Origin): Promise<SecretRead> {
    return retrieveSecret(w, this.readSteps, scope, key, reader, origin);
  }

  /** What a read needs of the lifecycle (domain/secrets/read.ts). */
  private readonly readSteps: ReadSteps = {
    now: () => this.deps.now(),
    cipher: () => this.deps.cipher,
    emit: (w, type, meta, origin) => this.emit(w, type, meta, origin),
  };

  /**
   * Looks a secret up without decrypting it or counting a read (the share
   * page). A query, not a refusal: absence is its answer. A secret past
   * its TTL is expired here (value destroyed, `secret.expired`) and
   * reported missing, and the unit commits that.
   * @returns the metadata, or undefined when there is no live secret.
   */
  async peek(w: Work, scope: string, key: string, origin: Origin): Promise<SecretMeta | undefined> {
    const now = this.deps.now();
    const row = await w.secrets.live(scope, key);
    if (!row) return undefined;
    if (!isDue(row, now)) return toMeta(row);
    await this.expireRow(w, row, now, origin);
    return undefined;
  }

  /**
   * HEAD: whether `reader` could read the secret, without decrypting it or
   * counting a read; the same refusals, in the same order, as retrieve().
   * @returns the metadata.
   * @throws VaultError "not_found", PastTtl, "forbidden" or "gone", as retrieve().
   */
  async check(w: Work, scope: string, key: string, reader: Reader): Promise<SecretMeta> {
    const row = await w.secrets.live(scope, key);
    if (!row) throw new VaultError("not_found", SECRET_NOT_FOUND);
    refuseUnreadable(row, this.deps.now(), reader);
    return toMeta(row);
  }

  /**
   * PATCH (docs/contract.md §6): `ttlSeconds` sets expires_at = now + ttl;
   * `maxReads` sets a new limit and resets read_count to 0, which makes a
   * sealed secret active again. Event `secret.updated`.
   * @returns the metadata after the change.
   * @throws VaultError "invalid" when neither is given (400); "not_found"
   *   (404) for no live secret, PastTtl (404) for one past its TTL;
   *   "conflict" for an org secret that burns on its limit (created with
   *   delete=true) (409).
   */
  async update(w: Work, scope: string, key: string, patch: PatchInput, origin: Origin, opts: { sealable: boolean }): Promise<SecretMeta> {
    if (patch.ttlSeconds === undefined && patch.maxReads === undefined) {
      throw new VaultError("invalid", "give ttl_seconds or max_reads");
    }
    const now = this.deps.now();
    const row = await this.unexpired(w, scope, key, now);
    if (opts.sealable && row.burnOnLimit) {
      throw new VaultError("conflict", "only secrets created with delete: false can be patched");
    }
    const reset = patch.maxReads !== undefined;
    const updated = await w.secrets.patch(
      row.id,
      {
        expiresAt: patch.ttlSeconds !== undefined ? now + patch.ttlSeconds * 1000 : row.expiresAt,
        maxReads: reset ? (patch.maxReads ?? null) : row.maxReads,
        readCount: reset ? 0 : row.readCount,
        state: reset ? "active" : row.state,
      },
      now,
    );
    const meta = toMeta(updated);
    await this.emit(w, "secret.updated", meta, origin);
    return meta;
  }

  /**
   * PUT (docs/api.md "Replace a secret"): replaces a live (active or sealed)
   * secret's value and limits in place, in this one unit of work, so no
   * reader finds the key missing in between: read_count 0, state active,
   * created_at and owner kept, updated_at set, the value version one more
   * (the new value's AAD binds it, so the old ciphertext no longer opens);
   * event `secret.updated`. A missing key (or one past its TTL, expired
   * here first) is created as by create(): `secret.created`, and the
   * free-tier limit applies. Omitted limits mean none: the body is the whole
   * new secret.
   * @throws VaultError "limit" (402) or "conflict" (409: another unit created
   *   the key meanwhile; the caller retries once) from create().
   */
  async replace(w: Work, input: ReplaceInput, origin: Origin): Promise<ReplaceOutcome> {
    const now = this.deps.now();
    const found = await w.secrets.liveForChange(input.scope, input.key);
    if (found && isDue(found, now)) await this.expireRow(w, found, now, origin);
    else if (found) {
      // created_at is kept; the value version moves by one with this ciphertext, in the replace's
      // one statement, so the value it replaces no longer opens in the row (docs/operations.md).
      const valueVersion = found.valueVersion + 1;
      const ciphertext = this.deps.cipher.encryptRecord(input.value, { scope: found.scope, key: found.key, createdAt: found.createdAt, valueVersion });
      const replaced = await w.secrets.replace(found.id, Object.assign(limitsOf(input, now), { ciphertext, valueVersion }), now);
      if (replaced) {
        const meta = toMeta(replaced);
        await this.emit(w, "secret.updated", meta, origin);
        return { created: false, secret: meta };
      }
    }
    return { created: true, secret: await this.create(w, input, origin) };
  }

  /**
   * Burns a live public secret without a read: the refused reveal proof
   * that reached its max_failed_reveals (docs/share.md, "The reveal proof");
   * event `secret.burned`, as the burn of a last read.
   * @returns the burned secret's metadata, or undefined when it is gone.
   */
  async burnUnread(w: Work, scope: string, key: string, origin: Origin): Promise<SecretMeta | undefined> {
    const row = await w.secrets.liveForChange(scope, key);
    if (!row) return undefined;
    await w.secrets.remove(row.id);
    const meta = toMeta(row);
    await this.emit(w, "secret.burned", meta, origin);
    return meta;
  }

  /**
   * Deletes a live (active or sealed) secret outright; event `secret.deleted`.
   * @returns the deleted secret's metadata.
   * @throws VaultError "not_found" (404) for no live secret; PastTtl (404)
   *   for one past its TTL (the caller expires it: expireKey).
   */
  async remove(w: Work, scope: string, key: string, origin: Origin): Promise<SecretMeta> {
    const row = await this.unexpired(w, scope, key, this.deps.now());
    await w.secrets.remove(row.id);
    const meta = toMeta(row);
    await this.emit(w, "secret.deleted", meta, origin);
    return meta;
  }

  /**
   * Expires one secret when it is live and past its expires_at (value
   * destroyed, `secret.expired`): what follows a PastTtl refusal, in a unit
   * of its own. Does nothing when the key is gone, replaced by a secret not
   * yet due, or already expired.
   */
  async expireKey(w: Work, scope: string, key: string, origin: Origin): Promise<void> {
    await this.peek(w, scope, key, origin);
  }

  /**
   * One page of a scope's live secrets in creation order, without values.
   * Secrets past expires_at are left out, swept or not (docs/contract.md §6).
   */
  async list(w: Work, scope: string, options: ListOptions): Promise<ListPage> {
    const rows = await w.secrets.list({
      scope,
      now: this.deps.now(),
      afterId: options.afterId ?? 0,
      includeSealed: options.includeSealed === true,
      keyPrefix: options.keyPrefix,
      limit: options.limit + 1,
    });
    const { rows: page, next } = cutPage(rows, options.limit, (row) => row.id);
    return { secrets: page.map(toMeta), nextAfterId: next };
  }

  /**
   * The sweeper's step: expires up to `batch` secrets whose expires_at has
   * passed, destroying their values and emitting `secret.expired`.
   * The rows are independent, so each row's statements are issued without
   * waiting for the row before (docs/performance.md, "Reads at scale").
   * Every row has settled before this returns or throws, and one row's
   * failure fails the whole unit.
   * @returns how many were expired (less than `batch` means none remain).
   * @throws (rejects) the first row's failure in row order, a store's or an
   *   event sink's: the caller's unit rolls back, nothing of it expired.
   */
  async expireDue(w: Work, batch: number, origin: Origin): Promise<number> {
    const now = this.deps.now();
    const rows = await w.secrets.due(now, batch);
    await this.expireRows(w, rows, now, origin);
    return rows.length;
  }

  /**
   * Removes a scope's expired tombstones (first expiring what is due) and
   * returns how many were removed: the `pruned` count.
   * @param keyPrefix limit to keyed secrets with this prefix (prefix-scoped admin keys).
   */
  async prune(w: Work, scope: string, origin: Origin, keyPrefix?: string): Promise<number> {
    const now = this.deps.now();
    // A prefix-scoped prune touches only its prefix, expiries included.
    const due = (await w.secrets.dueInScope(now, scope)).filter((row) => keyPrefix === undefined || (!row.isPublic && row.key.startsWith(keyPrefix)));
    await this.expireRows(w, due, now, origin);
    const pruned = await w.secrets.pruneExpired(scope, keyPrefix);
    // Reveal checks whose public secret is gone (docs/share.md, "The reveal proof"); public ids are global.
    if (scope === GLOBAL_SCOPE && keyPrefix === undefined) {
      await w.revealChecks.pruneOrphans();
      await w.fileMetas.pruneOrphans();
    }
    await this.deps.events.secretsPruned(w, scope, pruned, origin);
    return pruned;
  }

  /** Secrets that count toward the free tier: active or sealed, not past their TTL. */
  async countActive(w: Work): Promise<number> {
    return w.secrets.countActive(this.deps.now());
  }

  /**
   * The live (active or sealed) row of a key that is not past its TTL.
   * @throws VaultError "not_found" for no live row; PastTtl for one past its expires_at.
   */
  private async unexpired(w: Work, scope: string, key: string, now: number): Promise<SecretRecord> {
    const row = await w.secrets.live(scope, key);
    if (!row) throw new VaultError("not_found", SECRET_NOT_FOUND);
    if (isDue(row, now)) throw new PastTtl(row.scope, row.key);
    return row;
  }

  /**
   * Expires `rows` (expireDue, prune), each row's statements issued without
   * waiting for the row before; every row settled, failed or not, before it
   * returns or throws: no statement of the unit runs after its rollback.
   * @throws (rejects) the first failure in row order.
   */
  private async expireRows(w: Work, rows: readonly SecretRecord[], now: number, origin: Origin): Promise<void> {
    const settled = await Promise.allSettled(rows.map((row) => this.expireRow(w, row, now, origin)));
    for (const outcome of settled) if (outcome.status === "rejected") throw outcome.reason;
  }

  private async expireRow(w: Work, row: SecretRecord, now: number, origin: Origin): Promise<void> {
    await w.secrets.expire(row.id, now);
    await this.emit(w, "secret.expired", Object.assign(toMeta(row), { state: "expired" as const }), origin);
  }

  /**
   * Emits a secret's event; the event of a public secret's end (burned,
   * expired, deleted) also deletes its `file_meta` in the same unit
   * (docs/share.md, "The file's metadata before the reveal"), so it never
   * outlives the value.
   */
  private emit(w: Work, type: SecretEventType, meta: SecretMeta, origin: Origin): Awaitable<void> {
    if (meta.isPublic && ENDS.has(type)) return andThen(w.fileMetas.remove(meta.key), () => this.deps.events.secretEvent(w, eventOf(type, meta), origin));
    return this.deps.events.secretEvent(w, eventOf(type, meta), origin);
  }
}
