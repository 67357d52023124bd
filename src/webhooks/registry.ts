import { newId } from "../crypto/tokens.js";
import { VaultError } from "../model/errors.js";
import { REQUEST_EVENT_TYPES, SECRET_EVENT_TYPES } from "../domain/events.js";
import type { Origin, RequestEventType, SecretEventType } from "../domain/events.js";
import { cutPage } from "../domain/paging.js";
import type { Page } from "../domain/paging.js";
import { GLOBAL_SCOPE } from "../domain/secrets/model.js";
import type { WebhookRecord } from "../store/webhooks.js";
import type { Awaitable, Work } from "../store/work.js";
import type { Webhook, DeliveryAttempt } from "../model/records.js";
export type { Webhook, DeliveryAttempt } from "../model/records.js";

/** The event types a webhook may subscribe to (docs/contract.md §10, docs/requests.md "Events and audit"); `*` means all. */
export const WEBHOOK_EVENT_TYPES: readonly (SecretEventType | RequestEventType)[] = [...SECRET_EVENT_TYPES, ...REQUEST_EVENT_TYPES];

/** The 404 of a webhook the viewer does not see. */
export const WEBHOOK_NOT_FOUND = "webhook not found";

/** Webhook ids: `wh_` and 26 base32 characters (crypto.newId). */
export const WEBHOOK_ID_PATTERN = /^wh_[a-z2-7]{26}$/;

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
 * Records audit entries on behalf of a request's origin, in the caller's
 * unit of work; structurally the `recordFor` of domain/audit/log.ts
 * (docs/contract.md §11), so the audit log can be passed as is and knows
 * the request has left its row.
 */
export interface AuditRecorder {
  recordFor(w: Work, origin: Origin, scope: string, action: string, key: string | null): Awaitable<void>;
}

export interface WebhookRegistryDeps {
  /** Current time, Unix milliseconds. */
  now: () => number;
  /** Audit log for `webhook.created` / `webhook.deleted`; none when undefined. */
  audit?: AuditRecorder | undefined;
  /** VAULT_WEBHOOKS_PER_SCOPE: webhooks at most in one scope (global, or one org); default 25. */
  perScope?: number | undefined;
  /** Called after a webhook is created or deleted (the outbox drops its subscriber cache). */
  onChange?: (() => void) | undefined;
  /**
   * A webhook's signing secret at a signing generation (`whsec_...`,
   * webhooks/signing.ts webhookSigningSecret under VAULT_WEBHOOK_SECRET).
   */
  signingSecret: (webhookId: string, generation: number) => string;
  /** Called after a test event was queued (inside the transaction): wakes the delivery worker. */
  onQueued?: (() => void) | undefined;
}

/** The type of a test event (POST .../webhooks/:id/test): delivered to that one webhook only. */
export const TEST_EVENT_TYPE = "webhook.test";

/** How long a rotated-out signing secret still signs deliveries: 24 hours, in milliseconds. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;

/** A webhook and its signing secret: the answer of a create or a rotation, the only places the secret is shown. */
export interface WebhookWithSecret {
  webhook: Webhook;
  /** `whsec_` and the base64 of 32 bytes. */
  secret: string;
}

/**
 * Webhook registrations, global and per org (docs/webhooks.md, docs/contract.md §10), through the work
 * handle's `webhooks` and `outbox` stores; every change is recorded with
 * its audit row in the caller's unit of work.
 */
export class WebhookRegistry {
  constructor(private readonly deps: WebhookRegistryDeps) {}

  /**
   * Registers a webhook; audit action `webhook.created` with the webhook id
   * as key (docs/contract.md §11). A scope (the global one, or an org)
   * holds at most `perScope` webhooks, so one tenant cannot multiply every
   * event into thousands of deliveries.
   * @returns the webhook and its signing secret (generation 0), shown only
   *   in this answer and in a rotation's.
   * @throws VaultError "conflict" (409) when the scope already has `perScope` webhooks.
   */
  async create(w: Work, input: CreateWebhookInput, origin: Origin): Promise<WebhookWithSecret> {
    const cap = this.deps.perScope ?? 25;
    if ((await w.webhooks.countInScope(input.orgId)) >= cap) {
      throw new VaultError("conflict", `at most ${cap} webhooks per ${input.orgId === null ? "vault" : "org"} (VAULT_WEBHOOKS_PER_SCOPE); delete one first`);
    }
    const record = await w.webhooks.insert({
      id: newId("wh_"),
      orgId: input.orgId,
      url: input.url,
      events: input.events,
      description: input.description,
      keyPrefix: input.keyPrefix,
      createdAt: this.deps.now(),
    });
    this.deps.onChange?.();
    const webhook = toWebhook(record);
    await this.audit(w, "webhook.created", webhook, origin);
    return { webhook, secret: this.deps.signingSecret(webhook.id, 0) };
  }

  /**
   * Rotates a webhook's signing secret (docs/webhooks.md "Rotating the
   * signing secret"): the next generation signs every delivery from now on,
   * and the one it replaces also signs them for PREVIOUS_SECRET_GRACE_MS
   * (24 hours; a generation older than that no longer does). Audit action
   * `webhook.rotated` with the webhook id as key; the secret is in no row.
   * @returns the webhook and its new secret.
   * @throws VaultError "not_found" (404) when the viewer sees no such webhook.
   */
  async rotate(w: Work, view: WebhookView, id: string, origin: Origin): Promise<WebhookWithSecret> {
    const webhook = await this.require(w, view, id);
    const generation = await w.webhooks.rotateSigning(id, this.deps.now() + PREVIOUS_SECRET_GRACE_MS);
    if (generation === undefined) throw new VaultError("not_found", WEBHOOK_NOT_FOUND);
    await this.audit(w, "webhook.rotated", webhook, origin);
    return { webhook, secret: this.deps.signingSecret(id, generation) };
  }

  /**
   * Queues a test event for one webhook (docs/webhooks.md "Test events"):
   * `{id, type: "webhook.test", timestamp, data: {webhook_id}}`, signed and
   * delivered (with retries) like any event, to this webhook only, whatever
   * it subscribes to. Audit action `webhook.tested`.
   * @returns the event id (`evt_...`).
   * @throws VaultError "not_found" (404) when the viewer sees no such webhook.
   */
  async sendTest(w: Work, view: WebhookView, id: string, origin: Origin): Promise<string> {
    const webhook = await this.require(w, view, id);
    const now = this.deps.now();
    const eventId = newId("evt_");
    const body = JSON.stringify({ id: eventId, type: TEST_EVENT_TYPE, timestamp: Math.floor(now / 1000), data: { webhook_id: id } });
    await w.outbox.enqueue({ id: eventId, type: TEST_EVENT_TYPE, body }, [id], now);
    this.deps.onQueued?.();
    await this.audit(w, "webhook.tested", webhook, origin);
    return eventId;
  }

  /** One page of a scope's webhooks visible to the viewer, oldest first. */
  async list(w: Work, view: WebhookView, options: { limit: number; afterId?: number | undefined }): Promise<Page<Webhook>> {
    const records = await w.webhooks.list(view, options.afterId ?? 0, options.limit + 1);
    const { rows: page, next } = cutPage(records, options.limit, (record) => record.seq);
    return { items: page.map(toWebhook), nextAfterId: next };
  }

  /** The webhook with this id in the scope, when the viewer may see it; else undefined (a query: absence is an answer). */
  async get(w: Work, view: WebhookView, id: string): Promise<Webhook | undefined> {
    const record = await w.webhooks.get(view, id);
    return record === undefined ? undefined : toWebhook(record);
  }

  /**
   * The webhook with this id in the scope, when the viewer may see it.
   * @throws VaultError "not_found" (404) otherwise.
   */
  async require(w: Work, view: WebhookView, id: string): Promise<Webhook> {
    const webhook = await this.get(w, view, id);
    if (!webhook) throw new VaultError("not_found", WEBHOOK_NOT_FOUND);
    return webhook;
  }

  /**
   * Deletes a webhook. Its pending deliveries and its attempt log go with it
   * (ON DELETE CASCADE), so nothing more is sent to it (docs/contract.md §10).
   * Audit action `webhook.deleted`.
   * @throws VaultError "not_found" (404) when the viewer sees no such webhook.
   */
  async remove(w: Work, view: WebhookView, id: string, origin: Origin): Promise<void> {
    const webhook = await this.require(w, view, id);
    await w.webhooks.remove(id);
    this.deps.onChange?.();
    await this.audit(w, "webhook.deleted", webhook, origin);
  }

  /**
   * A page of a webhook's delivery attempts, newest first
   * (docs/contract.md §10, GET .../deliveries), when the viewer sees the
   * webhook.
   * @param options.beforeId continue below this attempt id (cursor).
   * @throws VaultError "not_found" (404) when the viewer sees no such webhook.
   */
  async attempts(w: Work, view: WebhookView, webhookId: string, options: { limit: number; beforeId?: number | undefined }): Promise<Page<DeliveryAttempt>> {
    await this.require(w, view, webhookId);
    const rows = await w.outbox.attempts(webhookId, options.beforeId ?? Number.MAX_SAFE_INTEGER, options.limit + 1);
    const { rows: page, next } = cutPage(rows, options.limit, (row) => row.id);
    return {
      items: page.map((r) => ({
        eventId: r.eventId,
        type: r.type,
        attempt: r.attempt,
        status: r.status,
        httpStatus: r.httpStatus,
        error: r.error,
        at: r.at,
        nextAttemptAt: r.nextAttemptAt,
      })),
      nextAfterId: next,
    };
  }

  private audit(w: Work, action: "webhook.created" | "webhook.deleted" | "webhook.rotated" | "webhook.tested", webhook: Webhook, origin: Origin): Awaitable<void> {
    return this.deps.audit?.recordFor(w, origin, webhook.orgId ?? GLOBAL_SCOPE, action, webhook.id);
  }
}

/** The webhook of a stored record (without its position). */
function toWebhook(record: WebhookRecord): Webhook {
  return {
    id: record.id,
    orgId: record.orgId,
    url: record.url,
    events: record.events,
    description: record.description,
    keyPrefix: record.keyPrefix,
    createdAt: record.createdAt,
  };
}
