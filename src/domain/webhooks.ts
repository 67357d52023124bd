import type { Db } from "../db.js";
import { newId } from "../crypto.js";
import { VaultError } from "./errors.js";
import { SECRET_EVENT_TYPES } from "./events.js";
import type { Origin, SecretEventType } from "./events.js";
import { cutPage } from "./paging.js";
import type { Page } from "./paging.js";
import { GLOBAL_SCOPE } from "./secret-model.js";
import type { AttemptStatus } from "./webhook-outbox.js";

// The outbox and the delivery queue live in webhook-outbox.ts; this path keeps exporting them.

/** The event types a webhook may subscribe to (decisions.md section 7); `*` means all. */
export const WEBHOOK_EVENT_TYPES: readonly SecretEventType[] = SECRET_EVENT_TYPES;

/** Webhook ids: `wh_` and 26 base32 characters (crypto.newId). */
export const WEBHOOK_ID_PATTERN = /^wh_[a-z2-7]{26}$/;

/** A webhook (decisions.md section 7). Times in milliseconds. */
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

/** One delivery attempt, for GET .../deliveries. `at` in milliseconds. */
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
}

/** Which webhooks a caller may see: those of one scope, narrowed by a scoped key's prefix. */
export interface WebhookView {
  /** null: global webhooks; else the org's. */
  orgId: string | null;
  /** The viewer's scoped-key prefix; null sees every webhook of the scope. */
  viewerPrefix: string | null;
}

export interface CreateWebhookInput {
  orgId: string | null;
  /** Already validated and normalized (webhooks/address-guard.ts). */
  url: string;
  events: string[];
  description: string | null;
  keyPrefix: string | null;
}

/**
 * Records audit entries on behalf of a request's origin; structurally the
 * `recordFor` of domain/audit.ts (decisions.md section 8), so the audit log
 * can be passed as is and knows the request has left its row.
 */
export interface AuditRecorder {
  recordFor(origin: Origin, scope: string, action: string, key: string | null): void;
}

interface WebhookRow {
  rowid: number;
  id: string;
  org_id: string | null;
  url: string;
  events: string;
  description: string | null;
  key_prefix: string | null;
  created_at: number;
}

interface AttemptRow {
  id: number;
  event_id: string;
  type: string;
  attempt: number;
  status: AttemptStatus;
  http_status: number | null;
  error: string | null;
  at: number;
}

export interface WebhookRegistryDeps {
  db: Db;
  /** Current time, Unix milliseconds. */
  now: () => number;
  /** Audit log for `webhook.created` / `webhook.deleted`; none when undefined. */
  audit?: AuditRecorder | undefined;
  /** VAULT_WEBHOOKS_PER_SCOPE: webhooks at most in one scope (global, or one org); default 25. */
  perScope?: number | undefined;
  /** Called after a webhook is created or deleted (the outbox drops its subscriber cache). */
  onChange?: (() => void) | undefined;
}

/** SQL: the webhook is visible to a viewer with prefix @viewer (or any when null). */
const VISIBLE = "(@viewer IS NULL OR (key_prefix IS NOT NULL AND substr(key_prefix, 1, length(@viewer)) = @viewer))";

/**
 * Webhook registrations, global and per org (interface section 4 "Global
 * webhooks" / "Org webhooks", decisions.md section 7). Synchronous; every
 * change runs inside GroupCommit.run() with its audit row.
 */
export class WebhookRegistry {
  private readonly q;

  constructor(private readonly deps: WebhookRegistryDeps) {
    const db = deps.db;
    this.q = {
      insert: db.prepare(
        `INSERT INTO webhooks (id, org_id, url, events, description, key_prefix, created_at)
         VALUES (@id, @org_id, @url, @events, @description, @key_prefix, @created_at)
         RETURNING rowid, *`,
      ),
      listGlobal: db.prepare<{ viewer: string | null; after: number; limit: number }, WebhookRow>(
        `SELECT rowid, * FROM webhooks WHERE org_id IS NULL AND rowid > @after AND ${VISIBLE}
         ORDER BY rowid LIMIT @limit`,
      ),
      listOrg: db.prepare<{ org: string; viewer: string | null; after: number; limit: number }, WebhookRow>(
        `SELECT rowid, * FROM webhooks WHERE org_id = @org AND rowid > @after AND ${VISIBLE}
         ORDER BY rowid LIMIT @limit`,
      ),
      getGlobal: db.prepare<{ id: string; viewer: string | null }, WebhookRow>(
        `SELECT rowid, * FROM webhooks WHERE id = @id AND org_id IS NULL AND ${VISIBLE}`,
      ),
      getOrg: db.prepare<{ id: string; org: string; viewer: string | null }, WebhookRow>(
        `SELECT rowid, * FROM webhooks WHERE id = @id AND org_id = @org AND ${VISIBLE}`,
      ),
      remove: db.prepare<[string]>("DELETE FROM webhooks WHERE id = ?"),
      countInScope: db.prepare<[string | null], { n: number }>("SELECT count(*) AS n FROM webhooks WHERE org_id IS ?"),
      attempts: db.prepare<{ webhook: string; before: number; limit: number }, AttemptRow>(
        `SELECT id, event_id, type, attempt, status, http_status, error, at FROM webhook_attempts
         WHERE webhook_id = @webhook AND id < @before ORDER BY id DESC LIMIT @limit`,
      ),
    };
  }

  /**
   * Registers a webhook; audit action `webhook.created` with the webhook id
   * as key (decisions.md section 8). A scope (the global one, or an org)
   * holds at most `perScope` webhooks, so one tenant cannot multiply every
   * event into thousands of deliveries.
   * @returns the webhook.
   * @throws VaultError "conflict" (409) when the scope already has `perScope` webhooks.
   */
  create(input: CreateWebhookInput, origin: Origin): Webhook {
    const cap = this.deps.perScope ?? 25;
    if ((this.q.countInScope.get(input.orgId)?.n ?? 0) >= cap) {
      throw new VaultError("conflict", `at most ${cap} webhooks per ${input.orgId === null ? "vault" : "org"} (VAULT_WEBHOOKS_PER_SCOPE); delete one first`);
    }
    const row = this.q.insert.get({
      id: newId("wh_"),
      org_id: input.orgId,
      url: input.url,
      events: JSON.stringify(input.events),
      description: input.description,
      key_prefix: input.keyPrefix,
      created_at: this.deps.now(),
    }) as WebhookRow;
    this.deps.onChange?.();
    const webhook = toWebhook(row);
    this.audit("webhook.created", webhook, origin);
    return webhook;
  }

  /** One page of a scope's webhooks visible to the viewer, oldest first. */
  list(view: WebhookView, options: { limit: number; afterId?: number | undefined }): Page<Webhook> {
    const params = { viewer: view.viewerPrefix, after: options.afterId ?? 0, limit: options.limit + 1 };
    const rows = view.orgId === null ? this.q.listGlobal.all(params) : this.q.listOrg.all({ ...params, org: view.orgId });
    const { rows: page, next } = cutPage(rows, options.limit, (row) => row.rowid);
    return { items: page.map(toWebhook), nextAfterId: next };
  }

  /** The webhook with this id in the scope, when the viewer may see it; else undefined. */
  get(view: WebhookView, id: string): Webhook | undefined {
    const row =
      view.orgId === null
        ? this.q.getGlobal.get({ id, viewer: view.viewerPrefix })
        : this.q.getOrg.get({ id, org: view.orgId, viewer: view.viewerPrefix });
    return row ? toWebhook(row) : undefined;
  }

  /**
   * Deletes a webhook. Its pending deliveries and its attempt log go with it
   * (ON DELETE CASCADE), so nothing more is sent to it (interface section 4).
   * Audit action `webhook.deleted`.
   * @returns false when the viewer sees no such webhook (404).
   */
  remove(view: WebhookView, id: string, origin: Origin): boolean {
    const webhook = this.get(view, id);
    if (!webhook) return false;
    this.q.remove.run(id);
    this.deps.onChange?.();
    this.audit("webhook.deleted", webhook, origin);
    return true;
  }

  /**
   * A page of a webhook's delivery attempts, newest first
   * (decisions.md section 7, GET .../deliveries). The caller has checked the
   * webhook is visible (get()).
   * @param beforeId continue below this attempt id (cursor).
   */
  attempts(webhookId: string, options: { limit: number; beforeId?: number | undefined }): Page<DeliveryAttempt> {
    const rows = this.q.attempts.all({
      webhook: webhookId,
      before: options.beforeId ?? Number.MAX_SAFE_INTEGER,
      limit: options.limit + 1,
    });
    const { rows: page, next } = cutPage(rows, options.limit, (row) => row.id);
    return {
      items: page.map((r) => ({
        eventId: r.event_id,
        type: r.type,
        attempt: r.attempt,
        status: r.status,
        httpStatus: r.http_status,
        error: r.error,
        at: r.at,
      })),
      nextAfterId: next,
    };
  }

  private audit(action: "webhook.created" | "webhook.deleted", webhook: Webhook, origin: Origin): void {
    this.deps.audit?.recordFor(origin, webhook.orgId ?? GLOBAL_SCOPE, action, webhook.id);
  }
}

function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    orgId: row.org_id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    description: row.description,
    keyPrefix: row.key_prefix,
    createdAt: row.created_at,
  };
}
