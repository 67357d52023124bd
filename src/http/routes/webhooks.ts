import * as v from "valibot";
import type { AppContext } from "../context.js";
import { originOf } from "../context.js";
import { orgIdOf } from "../org-auth.js";
import { ApiError } from "../errors.js";
import { WEBHOOK_EVENT_TYPES, WEBHOOK_ID_PATTERN } from "../../domain/webhooks.js";
import type { DeliveryAttempt, Webhook, WebhookRegistry, WebhookView } from "../../domain/webhooks.js";
import type { Awaitable, UnitOfWork, Work } from "../../store/work.js";
import { checkWebhookTarget, MAX_URL_LENGTH, parseWebhookUrl } from "../../webhooks/address-guard.js";
import type { Lookup } from "../../webhooks/address-guard.js";
import { decodeCursor, pageQuery, parse, readBody, requiredString, seconds } from "./input.js";
import { listSchema, pageBody, pageQueryDocs } from "./lists.js";
import type { ResponseDecl, RouteDecl, RoutePermission } from "./declare.js";
import { charCount, MAX_NAME_CHARS, pathId } from "./org-input.js";

const EVENTS_RULE = `events must be a non-empty array of event types (${WEBHOOK_EVENT_TYPES.join(", ")}) or ["*"]`;

/**
 * POST /webhooks and POST /orgs/:org_id/webhooks body (docs/contract.md
 * §2, §4 and §10): `url` (https), `events` (known types,
 * without repeats kept, or `["*"]` alone), `description` (optional, 1-128
 * characters after trimming; null or absent: none).
 */
export const createWebhookBody = v.object({
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

/** What the webhook routes need, built by vault.ts. */
export interface WebhookRouteDeps {
  registry: WebhookRegistry;
  tx: UnitOfWork<Work>;
  /** VAULT_WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  /** Name resolution for the creation-time address guard. */
  lookup: Lookup;
}

/** The webhook object of responses (docs/contract.md §10); `org_id` only for org webhooks. */
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

const NOT_FOUND = "webhook not found";

/** The viewer's prefix: a scoped key's prefix narrows what it sees; anyone else sees the whole scope. */
function viewerPrefix(c: AppContext): string | null {
  const actor = c.get("actor");
  return actor.kind === "scoped" ? actor.prefix : null;
}

/** The webhook id of the path; an id of the wrong shape is simply not found. */
function webhookId(c: AppContext): string {
  return pathId(c, "id", NOT_FOUND, WEBHOOK_ID_PATTERN);
}

/**
 * Global webhooks (`/webhooks*`, master key or a scoped key with `admin`)
 * and org webhooks (`/orgs/:org_id/webhooks*`, the master key or a
 * principal key of the org with `M`), docs/contract.md
 * §2 and §10: one family of routes declared for both scopes. Same shapes for
 * both; org webhooks carry `org_id`.
 */
export function webhookRouteDecls(deps: WebhookRouteDeps): RouteDecl[] {
  const { registry, tx } = deps;

  /**
   * The routes of one scope; `orgOf` answers the org id (null: global),
   * after input validation and inside the transaction that uses it.
   */
  const family = (
    base: string,
    permission: RoutePermission,
    orgOf: (w: Work, c: AppContext) => Awaitable<string | null>,
    who: string,
  ): RouteDecl[] => {
    const orgMissing: Record<number, ResponseDecl> = base.startsWith("/orgs")
      ? { 404: { description: "no such organization" } }
      : {};
    // A scoped-key request to these routes that records nothing (a list) is audited as webhook.listed.
    const auditAction = "webhook.listed";
    return [
      {
        method: "post",
        path: base,
        summary: `Register a ${who} webhook. The url must be https:// and its host must not be (or resolve to) a loopback, private, link-local or unspecified address unless VAULT_WEBHOOK_ALLOW_PRIVATE. The answer, and only it, carries the webhook's signing secret.`,
        permission,
        auditAction,
        body: createWebhookBody,
        responses: {
          201: { description: "the webhook and its signing secret (shown only here and in a rotation's answer)", schema: withSecretSchema },
          400: { description: "invalid body, url not https, unknown event type, or a refused address" },
          409: { description: "the scope already has VAULT_WEBHOOKS_PER_SCOPE webhooks (default 25)" },
          ...orgMissing,
        },
        handler: async (c) => {
          const body = await readBody(c, createWebhookBody);
          const url = parseWebhookUrl(body.url);
          await checkWebhookTarget(url, deps.allowPrivate, deps.lookup);
          const origin = originOf(c);
          const keyPrefix = viewerPrefix(c);
          const created = await tx.run(async (w) =>
            registry.create(
              w,
              { orgId: await orgOf(w, c), url: url.href, events: body.events, description: body.description ?? null, keyPrefix },
              origin,
            ),
          );
          return c.json(Object.assign(webhookJson(created.webhook), { secret: created.secret }), 201);
        },
      },
      {
        method: "get",
        path: base,
        summary: `List ${who} webhooks, oldest first.`,
        permission,
        auditAction,
        query: pageQueryDocs,
        responses: {
          200: { description: "{webhooks, next_cursor?}", schema: listSchema("webhooks", webhookSchema) },
          400: { description: "invalid limit or cursor" },
          ...orgMissing,
        },
        handler: async (c) => {
          const query = parse(pageQuery, c.req.query());
          const afterId = decodeCursor(query.cursor);
          const keyPrefix = viewerPrefix(c);
          const page = await tx.run(async (w) => {
            const view: WebhookView = { orgId: await orgOf(w, c), viewerPrefix: keyPrefix };
            return registry.list(w, view, { limit: query.limit ?? 1000, afterId });
          });
          return c.json(pageBody("webhooks", page.items.map(webhookJson), page.nextAfterId));
        },
      },
      {
        method: "delete",
        path: `${base}/:id`,
        summary: "Delete a webhook; its pending deliveries are cancelled.",
        permission,
        auditAction,
        params: { id: "the webhook's id, wh_..." },
        responses: {
          200: { description: "{deleted: true}", schema: { type: "object", properties: { deleted: { const: true } } } },
          404: { description: "no such webhook" },
        },
        handler: async (c) => {
          const origin = originOf(c);
          const keyPrefix = viewerPrefix(c);
          const removed = await tx.run(async (w) => {
            const view: WebhookView = { orgId: await orgOf(w, c), viewerPrefix: keyPrefix };
            return registry.remove(w, view, webhookId(c), origin);
          });
          if (!removed) throw new ApiError(404, NOT_FOUND);
          return c.json({ deleted: true });
        },
      },
      {
        method: "post",
        path: `${base}/:id/rotate`,
        summary:
          "Rotate a webhook's signing secret: the answer carries the new secret; for 24 hours deliveries are signed with both the new and the previous one (two webhook-signature entries).",
        permission,
        auditAction,
        params: { id: "the webhook's id, wh_..." },
        responses: {
          200: { description: "the webhook and its new signing secret", schema: withSecretSchema },
          404: { description: "no such webhook" },
        },
        handler: async (c) => {
          const origin = originOf(c);
          const keyPrefix = viewerPrefix(c);
          const rotated = await tx.run(async (w) => {
            const view: WebhookView = { orgId: await orgOf(w, c), viewerPrefix: keyPrefix };
            return registry.rotate(w, view, webhookId(c), origin);
          });
          if (!rotated) throw new ApiError(404, NOT_FOUND);
          return c.json(Object.assign(webhookJson(rotated.webhook), { secret: rotated.secret }));
        },
      },
      {
        method: "post",
        path: `${base}/:id/test`,
        summary:
          'Queue a test event for this webhook only, whatever it subscribes to: {id, type: "webhook.test", timestamp, data: {webhook_id}}, signed and retried like any event; its attempts are listed in .../deliveries.',
        permission,
        auditAction,
        params: { id: "the webhook's id, wh_..." },
        responses: {
          202: { description: "{event_id}: queued", schema: v.object({ event_id: v.string() }) },
          404: { description: "no such webhook" },
        },
        handler: async (c) => {
          const origin = originOf(c);
          const keyPrefix = viewerPrefix(c);
          const eventId = await tx.run(async (w) => {
            const view: WebhookView = { orgId: await orgOf(w, c), viewerPrefix: keyPrefix };
            return registry.sendTest(w, view, webhookId(c), origin);
          });
          if (eventId === undefined) throw new ApiError(404, NOT_FOUND);
          return c.json({ event_id: eventId }, 202);
        },
      },
      {
        method: "get",
        path: `${base}/:id/deliveries`,
        summary: "Recent delivery attempts of a webhook, newest first (kept 7 days).",
        permission,
        auditAction,
        query: pageQueryDocs,
        params: { id: "the webhook's id, wh_..." },
        responses: {
          200: { description: "{deliveries, next_cursor?}", schema: deliveriesSchema },
          400: { description: "invalid limit or cursor" },
          404: { description: "no such webhook" },
        },
        handler: async (c) => {
          const query = parse(pageQuery, c.req.query());
          const beforeId = decodeCursor(query.cursor);
          const keyPrefix = viewerPrefix(c);
          const page = await tx.run(async (w) => {
            const view: WebhookView = { orgId: await orgOf(w, c), viewerPrefix: keyPrefix };
            const id = webhookId(c);
            if (!(await registry.get(w, view, id))) return undefined;
            return registry.attempts(w, id, { limit: query.limit ?? 1000, beforeId });
          });
          if (!page) throw new ApiError(404, NOT_FOUND);
          return c.json(pageBody("deliveries", page.items.map(attemptJson), page.nextAfterId));
        },
      },
    ];
  };

  return [...family("/webhooks", "admin", () => null, "global"), ...family("/orgs/:org_id/webhooks", "org:M", (w, c) => orgIdOf(w, c), "org")];
}

const webhookSchema = {
  type: "object",
  required: ["id", "url", "events", "description", "created_at"],
  properties: {
    id: { type: "string", description: "wh_ and 26 base32 characters" },
    url: { type: "string", description: "https:// URL, normalized" },
    events: { type: "array", items: { type: "string", enum: [...WEBHOOK_EVENT_TYPES, "*"] } },
    description: { type: ["string", "null"] },
    created_at: { type: "integer" },
    org_id: { type: "string", description: "org webhooks only" },
  },
};

/** The create and rotate answers: the webhook object and its signing secret. */
const withSecretSchema = {
  type: "object",
  required: [...webhookSchema.required, "secret"],
  properties: {
    ...webhookSchema.properties,
    secret: {
      type: "string",
      pattern: "^whsec_[A-Za-z0-9+/]{43}=$",
      description: "the webhook's signing secret: whsec_ and the base64 of 32 bytes (Standard Webhooks); shown only in this answer",
    },
  },
};

const deliveriesSchema = listSchema("deliveries", {
  type: "object",
  required: ["event_id", "type", "attempt", "status", "http_status", "error", "at", "next_attempt_at"],
  properties: {
    event_id: { type: "string", description: "evt_...; the X-Vault-Delivery header, the same on every retry" },
    type: { type: "string" },
    attempt: { type: "integer", description: "1 for the first attempt" },
    status: {
      type: "string",
      enum: ["delivered", "retrying", "failed"],
      description: "delivered: 2xx; retrying: failed, another attempt is scheduled; failed: the last attempt failed",
    },
    http_status: { type: ["integer", "null"], description: "the receiver's status; null when no response came" },
    error: { type: ["string", "null"], description: "why the attempt failed; null on success" },
    at: { type: "integer" },
    next_attempt_at: {
      type: ["integer", "null"],
      description: "when the next retry is due, Unix seconds: on the latest attempt of a delivery still pending a retry; null once delivered or failed, and on earlier attempts",
    },
  },
});
