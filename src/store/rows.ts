import type { Org } from "../model/records.js";
import type { Permission } from "../model/records.js";
import type { Principal } from "../model/records.js";
import type { PrincipalKey } from "../model/records.js";
import type { SecretState } from "../model/records.js";
import type { AttemptStatus, DueDelivery } from "../model/records.js";
import type { Positioned, RoleRecord } from "./orgs.js";
import type { ScopedKeyRecord } from "./scoped-keys.js";
import type { SecretRecord } from "./secrets.js";
import type { WebhookRecord } from "./webhooks.js";

/*
 * The rows both engines return, and their mappers to the records the domain
 * sees. schema.sql and schema-pg.sql use the same column names and types
 * (times as integer milliseconds, 0/1 flags, JSON as text); a table's
 * creation order is `seq` (SQLite selects `rowid AS seq`).
 */

/** A `secrets` row. */
export interface SecretRow {
  id: number;
  scope: string;
  key: string;
  is_public: number;
  state: SecretState;
  ciphertext: Buffer | null;
  created_at: number;
  updated_at: number;
  expires_at: number | null;
  max_reads: number | null;
  read_count: number;
  burn_on_limit: number;
  owner_id: string | null;
  allowed_keys: string | null;
  /** The row's value version (schema.sql version 19): the write its ciphertext belongs to. */
  value_version: number;
}

/** A `secrets` row as the domain sees it: booleans, the allowed_keys array. */
export function toSecretRecord(row: SecretRow): SecretRecord {
  return {
    id: row.id,
    scope: row.scope,
    key: row.key,
    isPublic: row.is_public === 1,
    state: row.state,
    ciphertext: row.ciphertext,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    maxReads: row.max_reads,
    readCount: row.read_count,
    burnOnLimit: row.burn_on_limit === 1,
    ownerId: row.owner_id,
    allowedKeys: row.allowed_keys === null ? null : (JSON.parse(row.allowed_keys) as string[]),
    valueVersion: row.value_version,
  };
}

/** The columns of a `secrets` row in order: a raw (array) row selects them so. */
export const SECRET_COLUMNS = [
  "id",
  "scope",
  "key",
  "is_public",
  "state",
  "ciphertext",
  "created_at",
  "expires_at",
  "max_reads",
  "read_count",
  "burn_on_limit",
  "owner_id",
  "allowed_keys",
  "value_version",
] as const;

/**
 * toSecretRecord() of a raw row of SECRET_COLUMNS, its values by position
 * (an array row names no column: docs/performance.md, "Smaller things on
 * the hot path").
 */
export function secretRecordFromColumns(r: unknown[]): SecretRecord {
  const allowedKeys = r[12] as string | null;
  return {
    id: r[0] as number,
    scope: r[1] as string,
    key: r[2] as string,
    isPublic: r[3] === 1,
    state: r[4] as SecretState,
    ciphertext: r[5] as Buffer | null,
    createdAt: r[6] as number,
    expiresAt: r[7] as number | null,
    maxReads: r[8] as number | null,
    readCount: r[9] as number,
    burnOnLimit: r[10] === 1,
    ownerId: r[11] as string | null,
    allowedKeys: allowedKeys === null ? null : (JSON.parse(allowedKeys) as string[]),
    valueVersion: r[13] as number,
  };
}

/** A `scoped_keys` row (its token hash never leaves the store). */
export interface ScopedKeyRow {
  seq: number;
  id: string;
  name: string;
  permissions: string;
  prefix: string | null;
  expires_at: number | null;
  created_at: number;
  last_used_at: number | null;
}

export function toScopedKeyRecord(row: ScopedKeyRow): ScopedKeyRecord {
  return {
    seq: row.seq,
    id: row.id,
    name: row.name,
    permissions: JSON.parse(row.permissions) as Permission[],
    prefix: row.prefix,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}

/** An `orgs` row. */
export interface OrgRow {
  seq: number;
  id: string;
  name: string;
  metadata: string;
  created_at: number;
}

export function toOrgRecord(row: OrgRow): Positioned<Org> {
  return {
    seq: row.seq,
    id: row.id,
    name: row.name,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    createdAt: row.created_at,
  };
}

/** A `roles` row: its id is its creation order. */
export interface RoleRow {
  id: number;
  org_id: string;
  name: string;
  permissions: string;
}

export function toRoleRecord(row: RoleRow): RoleRecord {
  return { seq: row.id, orgId: row.org_id, name: row.name, permissions: row.permissions };
}

/** A `principals` row. */
export interface PrincipalRow {
  seq: number;
  id: string;
  org_id: string;
  name: string;
  role: string;
  metadata: string;
  created_at: number;
}

export function toPrincipalRecord(row: PrincipalRow): Positioned<Principal> {
  return {
    seq: row.seq,
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    role: row.role,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    createdAt: row.created_at,
  };
}

/** A `principal_keys` row (its token hash never leaves the store). */
export interface PrincipalKeyRow {
  seq: number;
  id: string;
  principal_id: string;
  org_id: string;
  name: string;
  valid_after: number | null;
  valid_before: number | null;
  created_at: number;
  /** The key that minted it (POST /me/keys); null for none. */
  parent_key_id: string | null;
}

export function toPrincipalKeyRecord(row: PrincipalKeyRow): Positioned<PrincipalKey> {
  return {
    seq: row.seq,
    id: row.id,
    principalId: row.principal_id,
    orgId: row.org_id,
    name: row.name,
    validAfter: row.valid_after,
    validBefore: row.valid_before,
    createdAt: row.created_at,
    parentKeyId: row.parent_key_id,
  };
}

/** A `webhooks` row. */
export interface WebhookRow {
  seq: number;
  id: string;
  org_id: string | null;
  url: string;
  events: string;
  description: string | null;
  key_prefix: string | null;
  created_at: number;
}

export function toWebhookRecord(row: WebhookRow): WebhookRecord {
  return {
    seq: row.seq,
    id: row.id,
    orgId: row.org_id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    description: row.description,
    keyPrefix: row.key_prefix,
    createdAt: row.created_at,
  };
}

/** A due webhook delivery as both engines' claim queries select it (webhook_deliveries joined to its webhook and event). */
export interface DueDeliveryRow {
  id: number;
  webhook_id: string;
  url: string;
  event_id: string;
  type: string;
  body: string;
  attempts: number;
  failing_since: number | null;
  signing_generation: number;
  previous_signing_until: number | null;
}

/**
 * A due delivery row as the webhook worker takes it: `failing` while its
 * webhook is marked failing; `scope` is "global" or the org id.
 */
export function toDueDelivery(r: DueDeliveryRow, scope: string): DueDelivery {
  return {
    deliveryId: r.id,
    scope,
    webhookId: r.webhook_id,
    url: r.url,
    eventId: r.event_id,
    type: r.type,
    body: r.body,
    attempts: r.attempts,
    failing: r.failing_since !== null,
    signingGeneration: r.signing_generation,
    previousSigningUntil: r.previous_signing_until,
  };
}

/** A `webhook_attempts` row as the deliveries list selects it: next_attempt_at is the delivery's, on its latest attempt while pending. */
export interface AttemptRow {
  id: number;
  event_id: string;
  type: string;
  attempt: number;
  status: AttemptStatus;
  http_status: number | null;
  error: string | null;
  at: number;
  next_attempt_at: number | null;
}
