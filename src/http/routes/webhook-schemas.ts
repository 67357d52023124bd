import * as v from "valibot";
import { WEBHOOK_EVENT_TYPES } from "../../domain/webhooks.js";
import type { DeliveryAttempt, Webhook } from "../../domain/webhooks.js";
import { MAX_URL_LENGTH } from "../../webhooks/address-guard.js";
import { requiredString, seconds } from "./input.js";
import { charCount, MAX_NAME_CHARS } from "./org-input.js";

/**
 * The webhook routes' (webhooks.ts) body, answers and their schemas
 * (docs/webhooks.md): the same for both scopes; org webhooks carry `org_id`.
 */

const EVENTS_RULE = `events must be a non-empty array of event types (${WEBHOOK_EVENT_TYPES.join(", ")}) or ["*"]`;

/**
 * POST /webhooks and POST /orgs/:org_id/webhooks body (docs/webhooks.md):
 * `url` (https), `events` (known types, without repeats kept, or `["*"]`
 * alone), `description` (optional, 1-128 characters after trimming; null or
 * absent: none).
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

/** The `{id}` path parameter of one webhook's routes; an id of another shape is not found (404). */
export const webhookParams = v.object({ id: v.pipe(v.string(), v.description("the webhook's id, wh_...")) });

/** The webhook object of responses; `org_id` only for org webhooks. */
export function webhookJson(w: Webhook) {
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
export function attemptJson(a: DeliveryAttempt) {
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

const int = v.pipe(v.number(), v.integer());
const webhookFields = {
  id: v.pipe(v.string(), v.description("wh_ and 26 base32 characters")),
  url: v.pipe(v.string(), v.description("https:// URL, normalized")),
  events: v.array(v.picklist([...WEBHOOK_EVENT_TYPES, "*"])),
  description: v.nullable(v.string()),
  created_at: int,
  org_id: v.optional(v.pipe(v.string(), v.description("org webhooks only"))),
};

/** A webhook. */
export const webhookSchema = v.object(webhookFields);

/** The create and rotate answers: the webhook object and its signing secret. */
export const withSecretSchema = v.object({
  ...webhookFields,
  secret: v.pipe(
    v.string(),
    v.regex(/^whsec_[A-Za-z0-9+/]{43}=$/),
    v.description("the webhook's signing secret: whsec_ and the base64 of 32 bytes (Standard Webhooks); shown only in this answer"),
  ),
});

/** A delivery attempt, as a page of `{deliveries, next_cursor?}` lists it. */
export const attemptSchema = v.object({
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
