import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { ValueCipher } from "../../crypto/cipher.js";
import { randomBytesPooled } from "../../crypto/random.js";
import { VaultError } from "../../model/errors.js";
import type { ReceiptEnd, ReceiptRecord } from "../../store/receipts.js";
import type { Awaitable, Work } from "../../store/work.js";
import type { EventSink, Origin, SecretEvent } from "../events.js";
import type { SecretLifecycle } from "../secrets/lifecycle.js";
import { GLOBAL_SCOPE, PastTtl } from "../secrets/model.js";
import type { SecretMeta } from "../secrets/model.js";

/** How long a receipt outlives a secret made without a TTL: 7 days, in milliseconds (docs/share.md, "Receipts"). */
export const RECEIPT_KEEP_WITHOUT_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** The SHA-256 of a receipt token (32 bytes): the only form in which it is stored. */
function receiptHash(token: string): Buffer {
  return createHash("sha256").update(token).digest();
}

/**
 * A receipt token: `vrc_` and 54 base64url characters, 40 bytes: the
 * secret's row id (8 bytes, big-endian: where the receipt is, so a create
 * writes no random-keyed index), masked, then 32 random ones (256 bits: the
 * capability). The mask is the first 8 bytes of HMAC-SHA256(the receipts'
 * key, the random bytes), the key HKDF of the root key (info
 * RECEIPT_KEY_INFO), so a token tells its holder nothing of how many
 * secrets the vault made.
 */
export const RECEIPT_TOKEN_PATTERN = /^vrc_[A-Za-z0-9_-]{54}$/;

/** The HKDF info of the key that masks a receipt's row id. */
const RECEIPT_KEY_INFO = "ephemeral-vault/v1/receipt-row";

/** The 8 bytes masking a row id: HMAC-SHA256(key, random)'s first 8. */
function maskOf(key: Buffer, random: Buffer): Buffer {
  return createHmac("sha256", key).update(random).digest().subarray(0, 8);
}

/** `a` XOR `b`, 8 bytes. */
function xor8(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.alloc(8);
  for (let i = 0; i < 8; i++) out[i] = (a[i] as number) ^ (b[i] as number);
  return out;
}

/** What a receipt says (docs/share.md, "Receipts"). Times in Unix milliseconds. */
export interface ReceiptView {
  state: "waiting" | "opened" | "burned" | "expired" | "deleted";
  createdAt: number;
  expiresAt: number | null;
  maxReads: number | null;
  readCount: number;
  lastReadAt: number | null;
}

/** The secret-event types that end a public secret, and the end each records. */
const ENDS: Partial<Record<SecretEvent["type"], ReceiptEnd>> = {
  "secret.burned": "burned",
  "secret.expired": "expired",
  "secret.deleted": "deleted",
};

/**
 * Receipts (docs/share.md, "Receipts"): the sender's capability on one
 * public secret, made with it. It tells whether the secret was opened (how
 * many reads, the last one when), and how it ended, and it can destroy the
 * secret; it never reads the value. The token is stored as its SHA-256.
 *
 * Also an EventSink: the secret events of public secrets keep each receipt
 * current in the change's own transaction (a read: its count and time; a
 * burn, expiry or delete: the end, and until when the receipt is kept: the
 * TTL the secret had, after the end). Time from `now`, in milliseconds.
 */
export class Receipts implements EventSink {
  /** The masking keys, the current root key's first: a token made before a rekey still opens. */
  private readonly masks: Buffer[];

  constructor(private readonly deps: { now: () => number; cipher: ValueCipher }) {
    const keys = deps.cipher.derivedKeys(RECEIPT_KEY_INFO);
    const current = keys.get(deps.cipher.currentKeyId);
    this.masks = [...(current === undefined ? [] : [current]), ...[...keys].filter(([id]) => id !== deps.cipher.currentKeyId).map(([, key]) => key)];
  }

  /** The row ids a token may name: one per masking key (usually one). */
  private secretIdsOf(token: string): number[] {
    if (!RECEIPT_TOKEN_PATTERN.test(token)) return [];
    const bytes = Buffer.from(token.slice(4), "base64url");
    const random = bytes.subarray(8);
    const ids: number[] = [];
    for (const key of this.masks) {
      const id = xor8(bytes.subarray(0, 8), maskOf(key, random)).readBigUInt64BE(0);
      if (id <= BigInt(Number.MAX_SAFE_INTEGER)) ids.push(Number(id));
    }
    return ids;
  }

  /**
   * Issues the receipt of a public secret made in this unit of work.
   * @returns the token (`vrc_...`), shown once: only its hash is kept.
   */
  async issue(w: Work, secret: SecretMeta): Promise<string> {
    if (secret.rowId === undefined) throw new Error("a receipt needs the secret's row id (toMeta)");
    const head = Buffer.alloc(8);
    head.writeBigUInt64BE(BigInt(secret.rowId));
    const random = randomBytesPooled(32);
    const mask = this.masks[0];
    if (mask === undefined) throw new Error("no root key to mask a receipt with");
    const token = `vrc_${Buffer.concat([xor8(head, maskOf(mask, random)), random]).toString("base64url")}`;
    await w.receipts.insert({
      secretId: secret.rowId,
      publicId: secret.key,
      tokenHash: receiptHash(token),
      createdAt: secret.createdAt,
      expiresAt: secret.expiresAt,
      maxReads: secret.maxReads,
    });
    return token;
  }

  /**
   * What the receipt of `token` says: `waiting` (not read yet), `opened`
   * (read, reads may be left), `burned`, `expired` (also a live one past
   * its TTL, not swept yet) or `deleted`.
   * @returns undefined for a token that names no receipt (never issued, or kept past its time).
   */
  async view(w: Work, token: string): Promise<ReceiptView | undefined> {
    const row = await this.find(w, token);
    return row === undefined ? undefined : this.viewOf(row);
  }

  /** The receipt of `token`: the one of its row id whose stored hash is the token's, compared in constant time. */
  private async find(w: Work, token: string): Promise<ReceiptRecord | undefined> {
    const hash = receiptHash(token);
    for (const secretId of this.secretIdsOf(token)) {
      const found = (await w.receipts.bySecretId(secretId)).find((row) => timingSafeEqual(row.tokenHash, hash));
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /**
   * Destroys the secret of a receipt now (`POST /receipts/<token>/destroy`):
   * deleted through the lifecycle (event and audit `secret.deleted`, which
   * ends the receipt as `deleted`).
   * @returns the receipt after it, or undefined for an unknown token.
   * @throws VaultError "conflict" (409) when the secret has ended already (burned, expired, deleted).
   */
  async destroy(w: Work, secrets: SecretLifecycle, token: string, origin: Origin): Promise<ReceiptView | undefined> {
    const before = await this.view(w, token);
    if (before === undefined) return undefined;
    if (before.state !== "waiting" && before.state !== "opened") throw new VaultError("conflict", `the secret is already ${before.state}`);
    const row = (await this.find(w, token)) as ReceiptRecord;
    try {
      await secrets.remove(w, GLOBAL_SCOPE, row.publicId, origin);
    } catch (err) {
      // Past its TTL, not swept yet: the caller expires it (secret.expired) and answers the end.
      if (err instanceof PastTtl) throw new VaultError("conflict", "the secret is already expired");
      throw err;
    }
    await w.revealChecks.remove(row.publicId);
    return this.view(w, token);
  }

  /** Deletes up to `batch` receipts kept past their time (the sweeper). @returns how many. */
  pruneKept(w: Work, batch: number): Awaitable<number> {
    return w.receipts.pruneKept(this.deps.now(), batch);
  }

  /** EventSink: a public secret's read or end, recorded on its receipt (none: nothing). */
  secretEvent(w: Work, event: SecretEvent, _origin: Origin): Awaitable<void> {
    if (!event.isPublic || event.scope !== GLOBAL_SCOPE) return undefined;
    const now = this.deps.now();
    if (event.rowId === undefined) return undefined;
    const key = { secretId: event.rowId, publicId: event.key };
    if (event.type === "secret.read") return w.receipts.read(key, event.readCount, now);
    const end = ENDS[event.type];
    if (end === undefined) return undefined;
    // Kept for the TTL the secret had, counted from its end (RECEIPT_KEEP_WITHOUT_TTL_MS without one).
    return w.receipts.end(key, end, now, RECEIPT_KEEP_WITHOUT_TTL_MS);
  }

  /** EventSink: nothing to record. */
  secretsPruned(): void {}

  /** EventSink: nothing to record. */
  requestEvent(): void {}

  private viewOf(row: ReceiptRecord): ReceiptView {
    const base = { createdAt: row.createdAt, expiresAt: row.expiresAt, maxReads: row.maxReads, readCount: row.readCount, lastReadAt: row.lastReadAt };
    if (row.state !== "live") return Object.assign(base, { state: row.state });
    if (row.expiresAt !== null && row.expiresAt <= this.deps.now()) return Object.assign(base, { state: "expired" as const });
    return Object.assign(base, { state: row.readCount > 0 ? ("opened" as const) : ("waiting" as const) });
  }
}

