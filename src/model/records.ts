/**
 * One audit row as stored and chained (schema.sql section 2): `at` in Unix
 * milliseconds, `hash` 64 hex characters over the previous row's hash and
 * this row's other fields (model/audit/chain.ts rowHash).
 */
export interface AuditRow {
  id: number;
  scope: string;
  at: number;
  action: string;
  key: string | null;
  actor: string | null;
  principal_id: string | null;
  ip: string | null;
  /** How many events the row stands for (coalesced failed authentications); null: one. */
  count: number | null;
  hash: string;
}

/** An organization. Times in milliseconds. */
export interface Org {
  id: string;
  name: string;
  metadata: Record<string, unknown>;
  createdAt: number;
}

/** A principal (user or service account) of an org. Times in milliseconds. */
export interface Principal {
  id: string;
  orgId: string;
  name: string;
  role: string;
  metadata: Record<string, unknown>;
  createdAt: number;
}

/** A principal key's summary, never its token. Times in milliseconds. */
export interface PrincipalKey {
  id: string;
  principalId: string;
  orgId: string;
  name: string;
  validAfter: number | null;
  validBefore: number | null;
  createdAt: number;
  /** The key that minted it with POST /me/keys; null when the master key made it (or made before lineage was kept). */
  parentKeyId: string | null;
}

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

/** A webhook (docs/contract.md §10). Times in milliseconds. */
export interface Webhook {
  id: string;
  /** null for a global webhook. */
  orgId: string | null;
  /** https:// URL, normalized by the WHATWG URL parser. */
  url: string;
  /** Event types, or `["*"]`. */
  events: string[];
  description: string | null;
  /**
   * The prefix of the scoped admin key that created it: only events of keyed
   * secrets under this prefix are queued for it, and only keys whose prefix
   * covers it see it. null (master, principals): every event of the scope.
   */
  keyPrefix: string | null;
  createdAt: number;
}

/** One delivery attempt, for GET .../deliveries (docs/webhooks.md). Times in milliseconds. */
export interface DeliveryAttempt {
  eventId: string;
  type: string;
  attempt: number;
  /** delivered; retrying (failed, another attempt is scheduled); failed (the last attempt failed). */
  status: AttemptStatus;
  /** The receiver's HTTP status, or null when no response came. */
  httpStatus: number | null;
  /** Why it failed, null on success. */
  error: string | null;
  at: number;
  /**
   * When the delivery's next attempt is due: set only on the latest attempt
   * of a delivery still pending a retry; null once it is delivered or
   * failed, and on its earlier attempts.
   */
  nextAttemptAt: number | null;
}

/** The outcome of one attempt, as the worker decided it. Times in milliseconds. */
export interface AttemptRecord {
  status: AttemptStatus;
  httpStatus: number | null;
  error: string | null;
  /** For `retrying`: when the next attempt is due. */
  nextAttemptAt: number | null;
}

/** A delivery the worker is about to attempt. */
export interface DueDelivery {
  deliveryId: number;
  /** The webhook's scope: "global" or its org id. */
  scope: string;
  webhookId: string;
  url: string;
  eventId: string;
  type: string;
  /** The exact body to sign and send. */
  body: string;
  /** Attempts made so far (0 before the first). */
  attempts: number;
  /** The webhook is failing: this attempt is the last, whatever its outcome. */
  failing: boolean;
  /** The webhook's signing generation (webhooks/signing.ts): its secret is derived with it. */
  signingGeneration: number;
  /** Until when the previous generation's secret also signs, Unix milliseconds; null: it does not. */
  previousSigningUntil: number | null;
}

/** An attempt's outcome: delivered; retrying (failed, another attempt is scheduled); failed (the last attempt failed). */
export type AttemptStatus = "delivered" | "retrying" | "failed";

/** A scoped API key permission, and what a global route needs. */
export type Permission = (typeof SCOPED_PERMISSIONS)[number];

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
  /**
   * The row's id (its creation order), set by the lifecycle's toMeta for
   * what is keyed by it (a receipt: docs/share.md, "Receipts"); never in an
   * answer. A row id can come back after its row is deleted (SQLite), so it
   * names a row only with its key.
   */
  rowId?: number | undefined;
}

/** Lifecycle states (docs/contract.md §6); burned and deleted rows are removed. */
export type SecretState = "active" | "sealed" | "expired";

/** The 409 of a key that names a live secret of its scope (docs/contract.md §6). */
export const DUPLICATE_KEY = "a secret with this key already exists";

/** The scope of global secrets; org secrets use their org id. */
export const GLOBAL_SCOPE = "global";

/**
 * Public secret ids: 64 lower-case hex characters (docs/contract.md §4),
 * reserved in the global key space: no keyed secret takes this shape, so the
 * audit store can tell a public id's rows by their key.
 */
export const PUBLIC_ID_PATTERN = /^[0-9a-f]{64}$/;

/** Scoped API key permissions (docs/contract.md §8), in their canonical order. */
export const SCOPED_PERMISSIONS = ["read", "write", "delete", "admin"] as const;
