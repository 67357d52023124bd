/**
 * The data of the secret lifecycle (docs/contract.md
 * §5 and §6): its shapes, limits and the pure row helpers. The
 * lifecycle itself is SecretLifecycle in secrets.ts; callers import these
 * names from this module.
 */

/** The scope of global secrets; org secrets use their org id. */
export const GLOBAL_SCOPE = "global";

/** The 409 of a key that names a live secret of its scope (docs/contract.md §6). */
export const DUPLICATE_KEY = "a secret with this key already exists";

/**
 * Public secret ids: 64 lower-case hex characters (docs/contract.md §4),
 * reserved in the global key space: no keyed secret takes this shape, so the
 * SQLite audit store can tell a public id's rows by their key.
 */
export const PUBLIC_ID_PATTERN = /^[0-9a-f]{64}$/;

/** Lifecycle states (docs/contract.md §6); burned and deleted rows are removed. */
export type SecretState = "active" | "sealed" | "expired";

/** A secret's metadata, never its value. Times in milliseconds. */
export interface SecretMeta {
  scope: string;
  key: string;
  isPublic: boolean;
  state: SecretState;
  createdAt: number;
  expiresAt: number | null;
  maxReads: number | null;
  readCount: number;
  /** false: seal instead of burn on reaching max_reads (org `delete: false`). */
  burnOnLimit: boolean;
  ownerId: string | null;
  allowedKeys: string[] | null;
}

export interface CreateInput {
  scope: string;
  /** The caller's key; undefined makes a public secret with a generated id. */
  key?: string | undefined;
  value: string;
  ttlSeconds?: number | undefined;
  maxReads?: number | undefined;
  /** Org `delete` flag; global secrets always burn. Default true. */
  burnOnLimit?: boolean | undefined;
  ownerId?: string | null | undefined;
  allowedKeys?: string[] | null | undefined;
}

/** PUT (docs/api.md "Replace a secret"): a create's input with its key required. */
export type ReplaceInput = CreateInput & { key: string };

/** The outcome of a replace: a secret created (201) or a live one replaced (200). */
export type ReplaceOutcome = { kind: "created" | "replaced"; secret: SecretMeta };

export interface PatchInput {
  ttlSeconds?: number | undefined;
  maxReads?: number | undefined;
}

/** Who reads: for `allowed_keys`. */
export interface Reader {
  /** The principal key id, or null for the master key (always allowed). */
  principalKeyId: string | null;
}

/**
 * The outcome of a read. Not-found and sealed are results, not exceptions,
 * because a read that finds an expired secret destroys it and that change
 * must commit even though the answer is 404.
 */
export type RetrieveOutcome =
  | { kind: "ok"; secret: SecretMeta; value: string }
  | { kind: "not_found" }
  | { kind: "sealed" }
  | { kind: "forbidden" };

/** The outcome of an existence check (HEAD): a read's outcome without the value. */
export type CheckOutcome =
  | { kind: "ok"; secret: SecretMeta }
  | { kind: "not_found" }
  | { kind: "sealed" }
  | { kind: "forbidden" };

export type ChangeOutcome = { kind: "ok"; secret: SecretMeta } | { kind: "not_found" };

export interface ListOptions {
  /** Page size, 1 to 1000. */
  limit: number;
  /** Return secrets with a row id above this (cursor). */
  afterId?: number | undefined;
  /** Only keyed secrets whose key starts with this (prefix-scoped keys). */
  keyPrefix?: string | undefined;
  /** Include sealed secrets (org lists). */
  includeSealed?: boolean | undefined;
}

export interface ListPage {
  secrets: SecretMeta[];
  /** Row id to continue after, when more remain. */
  nextAfterId: number | null;
}

/** Largest ttl_seconds (docs/contract.md §5): ten years. */
export const MAX_TTL_SECONDS = 315_360_000;
/** Largest max_reads (docs/contract.md §5). */
export const MAX_READS_LIMIT = 2_147_483_647;

/**
 * A stored secret's metadata, without its row id and never its ciphertext.
 * Times stay in milliseconds.
 */
export function toMeta(record: SecretMeta & { id: number; ciphertext: Buffer | null }): SecretMeta {
  return {
    scope: record.scope,
    key: record.key,
    isPublic: record.isPublic,
    state: record.state,
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    maxReads: record.maxReads,
    readCount: record.readCount,
    burnOnLimit: record.burnOnLimit,
    ownerId: record.ownerId,
    allowedKeys: record.allowedKeys,
  };
}

/** Whether a secret's expires_at (Unix ms) has passed at `now` (Unix ms). */
export function isDue(row: Pick<SecretMeta, "expiresAt">, now: number): boolean {
  return row.expiresAt !== null && row.expiresAt <= now;
}

/**
 * Whether `reader` may read a secret by its `allowed_keys` (docs/orgs.md):
 * no list, or a reader that is not a principal key (the master key), may.
 */
export function mayRead(row: Pick<SecretMeta, "allowedKeys">, reader: Reader): boolean {
  if (row.allowedKeys === null || reader.principalKeyId === null) return true;
  return row.allowedKeys.includes(reader.principalKeyId);
}

/**
 * The limits and access of a create or replace input, as stored: expires_at
 * (Unix ms, `now` + ttl_seconds, or null), max_reads (or null), whether the
 * last read burns (default true) and `allowed_keys` (or null: org-wide).
 */
export function limitsOf(input: CreateInput, now: number): { expiresAt: number | null; maxReads: number | null; burnOnLimit: boolean; allowedKeys: string[] | null } {
  return {
    expiresAt: input.ttlSeconds === undefined ? null : now + input.ttlSeconds * 1000,
    maxReads: input.maxReads ?? null,
    burnOnLimit: input.burnOnLimit !== false,
    allowedKeys: input.allowedKeys ?? null,
  };
}
