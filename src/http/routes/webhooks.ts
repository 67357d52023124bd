import * as v from "valibot";
import type { AppContext } from "../context.js";
import { originOf } from "../context.js";
import { WEBHOOK_ID_PATTERN, WEBHOOK_NOT_FOUND } from "../../domain/webhooks.js";
import type { WebhookRegistry, WebhookView } from "../../domain/webhooks.js";
import type { Awaitable, UnitOfWork, Work } from "../../store/work.js";
import { checkWebhookTarget, parseWebhookUrl } from "../../webhooks/address-guard.js";
import type { Lookup } from "../../webhooks/address-guard.js";
import { deletedSchema } from "./answers.js";
import type { Route } from "./declare.js";
import { route } from "./declare.js";
import { decodeCursor, pageQuery } from "./input.js";
import { listSchema, pageBody } from "./lists.js";
import { idOrNotFound } from "./org-input.js";
import type { RouteScope } from "./scope.js";
import { byScope, SCOPES } from "./scope.js";
import { attemptJson, createWebhookBody, deliveriesSchema, webhookJson, webhookParams, webhookSchema, withSecretSchema } from "./webhook-schemas.js";

/** What the webhook routes need, built by vault.ts. */
export interface WebhookRouteDeps {
  registry: WebhookRegistry;
  tx: UnitOfWork<Work>;
  /** VAULT_WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  /** Name resolution for the creation-time address guard. */
  lookup: Lookup;
}

const NO_WEBHOOK = { 404: { description: "no such webhook" } };

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
  return [
    route({
      method: "post",
      path: base,
      summary: `Register a ${scope.name} webhook. The url must be https:// and its host must not be (or resolve to) a loopback, private, link-local or unspecified address unless VAULT_WEBHOOK_ALLOW_PRIVATE. The answer, and only it, carries the webhook's signing secret.`,
      permission,
      auditAction,
      body: createWebhookBody,
      responses: Object.assign(
        {
          201: { description: "the webhook and its signing secret (shown only here and in a rotation's answer)", schema: withSecretSchema },
          400: { description: "invalid body, url not https, unknown event type, or a refused address" },
          409: { description: "the scope already has VAULT_WEBHOOKS_PER_SCOPE webhooks (default 25)" },
        },
        scope.missing,
      ),
      handler: async (c, { body }) => {
        const url = parseWebhookUrl(body.url);
        await checkWebhookTarget(url, deps.allowPrivate, deps.lookup);
        const origin = originOf(c);
        const created = await tx.run(async (w) => {
          const view = await viewIn(w, c, scope);
          const input = { orgId: view.orgId, url: url.href, events: body.events, description: body.description ?? null, keyPrefix: view.viewerPrefix };
          return registry.create(w, input, origin);
        });
        return c.json(Object.assign(webhookJson(created.webhook), { secret: created.secret }), 201);
      },
    }),
    route({
      method: "get",
      path: base,
      summary: `List ${scope.name} webhooks, oldest first.`,
      permission,
      auditAction,
      query: pageQuery,
      responses: Object.assign(
        {
          200: { description: "{webhooks, next_cursor?}", schema: listSchema("webhooks", webhookSchema) },
          400: { description: "invalid limit or cursor" },
        },
        scope.missing,
      ),
      handler: async (c, { query }) => {
        const afterId = decodeCursor(query.cursor);
        const page = await tx.run(async (w) => registry.list(w, await viewIn(w, c, scope), { limit: query.limit ?? 1000, afterId }));
        return c.json(pageBody("webhooks", page.items.map(webhookJson), page.nextAfterId));
      },
    }),
    route({
      method: "delete",
      path: `${base}/:id`,
      summary: "Delete a webhook; its pending deliveries are cancelled.",
      permission,
      auditAction,
      params: webhookParams,
      responses: Object.assign({ 200: { description: "{deleted: true}", schema: deletedSchema } }, NO_WEBHOOK),
      handler: async (c, { params }) => {
        const origin = originOf(c);
        await onWebhook(tx, c, scope, params.id, (w, view, id) => registry.remove(w, view, id, origin));
        return c.json({ deleted: true });
      },
    }),
    route({
      method: "post",
      path: `${base}/:id/rotate`,
      summary:
        "Rotate a webhook's signing secret: the answer carries the new secret; for 24 hours deliveries are signed with both the new and the previous one (two webhook-signature entries).",
      permission,
      auditAction,
      params: webhookParams,
      responses: Object.assign({ 200: { description: "the webhook and its new signing secret", schema: withSecretSchema } }, NO_WEBHOOK),
      handler: async (c, { params }) => {
        const origin = originOf(c);
        const rotated = await onWebhook(tx, c, scope, params.id, (w, view, id) => registry.rotate(w, view, id, origin));
        return c.json(Object.assign(webhookJson(rotated.webhook), { secret: rotated.secret }));
      },
    }),
    route({
      method: "post",
      path: `${base}/:id/test`,
      summary:
        'Queue a test event for this webhook only, whatever it subscribes to: {id, type: "webhook.test", timestamp, data: {webhook_id}}, signed and retried like any event; its attempts are listed in .../deliveries.',
      permission,
      auditAction,
      params: webhookParams,
      responses: Object.assign({ 202: { description: "{event_id}: queued", schema: v.object({ event_id: v.string() }) } }, NO_WEBHOOK),
      handler: async (c, { params }) => {
        const origin = originOf(c);
        const eventId = await onWebhook(tx, c, scope, params.id, (w, view, id) => registry.sendTest(w, view, id, origin));
        return c.json({ event_id: eventId }, 202);
      },
    }),
    route({
      method: "get",
      path: `${base}/:id/deliveries`,
      summary: "Recent delivery attempts of a webhook, newest first (kept 7 days).",
      permission,
      auditAction,
      query: pageQuery,
      params: webhookParams,
      responses: Object.assign(
        { 200: { description: "{deliveries, next_cursor?}", schema: deliveriesSchema }, 400: { description: "invalid limit or cursor" } },
        NO_WEBHOOK,
      ),
      handler: async (c, { params, query }) => {
        const beforeId = decodeCursor(query.cursor);
        const page = await onWebhook(tx, c, scope, params.id, (w, view, id) => registry.attempts(w, view, id, { limit: query.limit ?? 1000, beforeId }));
        return c.json(pageBody("deliveries", page.items.map(attemptJson), page.nextAfterId));
      },
    }),
  ];
}

/** The webhook routes of both scopes, global first (docs/webhooks.md). */
export function webhookRoutes(deps: WebhookRouteDeps): Route[] {
  return SCOPES.flatMap((scope) => webhookFamily(deps, scope));
}
