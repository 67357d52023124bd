import * as v from "valibot";
import type { AppContext } from "../context.js";
import { WEBHOOK_EVENT_TYPES, WEBHOOK_ID_PATTERN, WEBHOOK_NOT_FOUND } from "../../webhooks/registry.js";
import type { DeliveryAttempt, Webhook, WebhookRegistry, WebhookView } from "../../webhooks/registry.js";
import type { Awaitable, UnitOfWork, Work } from "../../store/work.js";
import { checkWebhookTarget, MAX_URL_LENGTH, parseWebhookUrl } from "../../webhooks/address-guard.js";
import type { Lookup } from "../../webhooks/address-guard.js";
import { int, seconds } from "./answers.js";
import type { Route } from "./declare.js";
import { charCount, idOrNotFound, MAX_NAME_CHARS, requiredString } from "./input.js";
import { DELETED, listOp, op } from "./ops.js";
import type { RouteScope } from "./scope.js";
import { byScope, SCOPES } from "./scope.js";

/**
 * The webhook routes of both scopes (docs/webhooks.md): the create body,
 * the webhook and delivery attempt in answers and their schemas (the same
 * for both scopes; org webhooks carry `org_id`), and the routes.
 */

const EVENTS_RULE = `events must be a non-empty array of event types (${WEBHOOK_EVENT_TYPES.join(", ")}) or ["*"]`;

/**
 * POST /webhooks and POST /orgs/:org_id/webhooks body (docs/webhooks.md):
 * `url` (https), `events` (known types, without repeats kept, or `["*"]`
 * alone), `description` (optional, 1-128 characters after trimming; null or
 * absent: none).
 */
const createWebhookBody = v.object({
  url: v.pipe(requiredString("url"), v.maxLength(MAX_URL_LENGTH, `url must be at most ${MAX_URL_LENGTH} characters`)),
  events: v.pipe(
    v.array(v.string(EVENTS_RULE), EVENTS_RULE),
    v.minLength(1, EVENTS_RULE),
    v.check(
      (events) =>
        (events.length === 1 && events[0] === "*") ||
        events.every((e) => (WEBHOOK_EVENT_TYPES as readonly string[]).includes(e)),
      EVENTS_RULE,
    ),
    v.transform((events) => [...new Set(events)]),
  ),
  description: v.optional(
    v.nullable(
      v.pipe(
        v.string("description must be a string"),
        v.trim(),
        v.minLength(1, "description must be 1 to 128 characters"),
        v.check((text) => charCount(text) <= MAX_NAME_CHARS, "description must be 1 to 128 characters"),
      ),
    ),
  ),
});

/** The `{id}` path parameter of one webhook's routes; an id of another shape is not found (404). */
const webhookParams = v.object({ id: v.pipe(v.string(), v.description("the webhook's id, wh_...")) });

/** The webhook object of responses; `org_id` only for org webhooks. */
function webhookJson(w: Webhook) {
  const body: {
    id: string;
    url: string;
    events: string[];
    description: string | null;
    created_at: number;
    org_id?: string;
  } = { id: w.id, url: w.url, events: w.events, description: w.description, created_at: seconds(w.createdAt) };
  if (w.orgId !== null) body.org_id = w.orgId;
  return body;
}

/** One entry of GET .../deliveries. */
function attemptJson(a: DeliveryAttempt) {
  return {
    event_id: a.eventId,
    type: a.type,
    attempt: a.attempt,
    status: a.status,
    http_status: a.httpStatus,
    error: a.error,
    at: seconds(a.at),
    next_attempt_at: seconds(a.nextAttemptAt),
  };
}

const webhookFields = {
  id: v.pipe(v.string(), v.description("wh_ and 26 base32 characters")),
  url: v.pipe(v.string(), v.description("https:// URL, normalized")),
  events: v.array(v.picklist([...WEBHOOK_EVENT_TYPES, "*"])),
  description: v.nullable(v.string()),
  created_at: int,
  org_id: v.optional(v.pipe(v.string(), v.description("org webhooks only"))),
};

/** A webhook. */
const webhookSchema = v.object(webhookFields);

/** The create and rotate answers: the webhook object and its signing secret. */
const withSecretSchema = v.object({
  ...webhookFields,
  secret: v.pipe(
    v.string(),
    v.regex(/^whsec_[A-Za-z0-9+/]{43}=$/),
    v.description("the webhook's signing secret: whsec_ and the base64 of 32 bytes (Standard Webhooks); shown only in this answer"),
  ),
});

/** A delivery attempt, as a page of `{deliveries, next_cursor?}` lists it. */
const attemptSchema = v.object({
  event_id: v.pipe(v.string(), v.description("evt_...; the X-Vault-Delivery header, the same on every retry")),
  type: v.string(),
  attempt: v.pipe(int, v.description("1 for the first attempt")),
  status: v.pipe(
    v.picklist(["delivered", "retrying", "failed"]),
    v.description("delivered: 2xx; retrying: failed, another attempt is scheduled; failed: the last attempt failed"),
  ),
  http_status: v.pipe(v.nullable(int), v.description("the receiver's status; null when no response came")),
  error: v.pipe(v.nullable(v.string()), v.description("why the attempt failed; null on success")),
  at: int,
  next_attempt_at: v.pipe(
    v.nullable(int),
    v.description(
      "when the next retry is due, Unix seconds: on the latest attempt of a delivery still pending a retry; null once delivered or failed, and on earlier attempts",
    ),
  ),
});

/** What the webhook routes need, built by assembly/vault.ts. */
export interface WebhookRouteDeps {
  registry: WebhookRegistry;
  tx: UnitOfWork<Work>;
  /** VAULT_WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  /** Name resolution for the creation-time address guard. */
  lookup: Lookup;
}

const NO_WEBHOOK = { 404: "no such webhook" };

/**
 * Runs `act` on the webhook `id` as the request sees it (viewIn: the org's
 * 404 first), in one unit of work.
 * @returns what `act` returns.
 * @throws ApiError 404 `webhook not found` for an id of the wrong shape;
 *   whatever `act` throws (the registry's VaultError "not_found" when the
 *   viewer sees no such webhook).
 */
function onWebhook<T>(
  tx: UnitOfWork<Work>,
  c: AppContext,
  scope: RouteScope,
  id: string,
  act: (w: Work, view: WebhookView, id: string) => Awaitable<T>,
): Promise<T> {
  return tx.run(async (w) => act(w, await viewIn(w, c, scope), idOrNotFound(id, WEBHOOK_NOT_FOUND, WEBHOOK_ID_PATTERN)));
}

/** The view of a request inside unit `w`: its scope's org (404 for an unknown org) and a scoped key's prefix, which narrows what it sees. */
async function viewIn(w: Work, c: AppContext, scope: RouteScope): Promise<WebhookView> {
  const actor = c.get("actor");
  const viewerPrefix = actor.kind === "scoped" ? actor.prefix : null;
  return { orgId: await scope.orgIn(w, c), viewerPrefix };
}

/**
 * Webhooks of one scope (docs/webhooks.md): global ones (`/webhooks*`, the
 * master key or a scoped key with `admin`) and an org's
 * (`/orgs/:org_id/webhooks*`, the master key or a principal key of the org
 * with `M`); the same shapes, org webhooks carrying `org_id`. A webhook id
 * of the wrong shape is simply not found, checked after the org.
 */
function webhookFamily(deps: WebhookRouteDeps, scope: RouteScope): Route[] {
  const { registry, tx } = deps;
  const base = `${scope.base}/webhooks`;
  const permission = byScope(scope, { global: "admin", org: "org:M" } as const);
  // A scoped-key request to these routes that records nothing (a list) is audited as webhook.listed.
  const auditAction = "webhook.listed";
  const one = `${base}/:id`;
  return [
    op("post", base, permission, {
      summary: `Register a ${scope.name} webhook. The url must be https:// and its host must not be (or resolve to) a loopback, private, link-local or unspecified address unless VAULT_WEBHOOK_ALLOW_PRIVATE. The answer, and only it, carries the webhook's signing secret.`,
      auditAction,
      body: createWebhookBody,
      ok: [201, "the webhook and its signing secret (shown only here and in a rotation's answer)", withSecretSchema],
      errors: { 400: "invalid body, url not https, unknown event type, or a refused address", 409: "the scope already has VAULT_WEBHOOKS_PER_SCOPE webhooks (default 25)", ...scope.missing },
      run: async (c, { body }, origin) => {
        const url = parseWebhookUrl(body.url);
        await checkWebhookTarget(url, deps.allowPrivate, deps.lookup);
        const created = await tx.run(async (w) => {
          const view = await viewIn(w, c, scope);
          const input = { orgId: view.orgId, url: url.href, events: body.events, description: body.description ?? null, keyPrefix: view.viewerPrefix };
          return registry.create(w, input, origin);
        });
        return Object.assign(webhookJson(created.webhook), { secret: created.secret });
      },
    }),
    listOp(base, permission, {
      summary: `List ${scope.name} webhooks, oldest first.`,
      auditAction,
      field: "webhooks",
      item: webhookSchema,
      errors: scope.missing,
      page: (c, _params, { limit, afterId }) => tx.run(async (w) => registry.list(w, await viewIn(w, c, scope), { limit, afterId })),
      json: webhookJson,
    }),
    op("delete", one, permission, {
      summary: "Delete a webhook; its pending deliveries are cancelled.",
      auditAction,
      params: webhookParams,
      ok: DELETED,
      errors: NO_WEBHOOK,
      run: (c, { params }, origin) => onWebhook(tx, c, scope, params.id, (w, view, id) => registry.remove(w, view, id, origin)),
    }),
    op("post", `${one}/rotate`, permission, {
      summary:
        "Rotate a webhook's signing secret: the answer carries the new secret; for 24 hours deliveries are signed with both the new and the previous one (two webhook-signature entries).",
      auditAction,
      params: webhookParams,
      ok: [200, "the webhook and its new signing secret", withSecretSchema],
      errors: NO_WEBHOOK,
      run: async (c, { params }, origin) => {
        const rotated = await onWebhook(tx, c, scope, params.id, (w, view, id) => registry.rotate(w, view, id, origin));
        return Object.assign(webhookJson(rotated.webhook), { secret: rotated.secret });
      },
    }),
    op("post", `${one}/test`, permission, {
      summary:
        'Queue a test event for this webhook only, whatever it subscribes to: {id, type: "webhook.test", timestamp, data: {webhook_id}}, signed and retried like any event; its attempts are listed in .../deliveries.',
      auditAction,
      params: webhookParams,
      ok: [202, "{event_id}: queued", v.object({ event_id: v.string() })],
      errors: NO_WEBHOOK,
      run: async (c, { params }, origin) => ({ event_id: await onWebhook(tx, c, scope, params.id, (w, view, id) => registry.sendTest(w, view, id, origin)) }),
    }),
    listOp(`${one}/deliveries`, permission, {
      summary: "Recent delivery attempts of a webhook, newest first (kept 7 days).",
      auditAction,
      params: webhookParams,
      field: "deliveries",
      item: attemptSchema,
      errors: NO_WEBHOOK,
      // Newest first: the cursor is the row id the next page ends before.
      page: (c, params, { limit, afterId }) => onWebhook(tx, c, scope, params.id, (w, view, id) => registry.attempts(w, view, id, { limit, beforeId: afterId })),
      json: attemptJson,
    }),
  ];
}

/** The webhook routes of both scopes, global first (docs/webhooks.md). */
export function webhookRoutes(deps: WebhookRouteDeps): Route[] {
  return SCOPES.flatMap((scope) => webhookFamily(deps, scope));
}
