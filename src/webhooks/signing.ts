import { createHmac, hkdfSync } from "node:crypto";
import type { DueDelivery } from "./outbox.js";
import { hmacHex } from "../crypto/tokens.js";

/**
 * Each webhook's own signing secret and the Standard Webhooks signature
 * (docs/webhooks.md "Verifying a delivery"): a tenant verifies its
 * deliveries without the operator's VAULT_WEBHOOK_SECRET, and cannot forge
 * another tenant's.
 */

/** The prefix of a webhook signing secret (Standard Webhooks). */
const PREFIX = "whsec_";
/** HKDF salt of the derivation: names the purpose, so these keys never equal another use of VAULT_WEBHOOK_SECRET. */
const SALT = Buffer.from("ephemeral-vault/v1/webhook-signing-secret", "utf8");

/**
 * The signing secret of webhook `webhookId` at rotation generation
 * `generation` (0 at creation, one more per rotation): `whsec_` and the
 * base64 of 32 bytes, HKDF-SHA256 (RFC 5869) of VAULT_WEBHOOK_SECRET with
 * info `<webhook id>/<generation>`. Derived, never stored: the same on
 * every node that shares VAULT_WEBHOOK_SECRET, and every secret changes
 * when VAULT_WEBHOOK_SECRET does.
 * @throws RangeError for a negative or fractional generation.
 */
export function webhookSigningSecret(masterSecret: string, webhookId: string, generation: number): string {
  if (!Number.isInteger(generation) || generation < 0) throw new RangeError("a signing generation is a whole number from 0");
  const key = hkdfSync("sha256", Buffer.from(masterSecret, "utf8"), SALT, `${webhookId}/${generation}`, 32);
  return PREFIX + Buffer.from(key).toString("base64");
}

/**
 * One Standard Webhooks signature entry: `v1,` and the base64 HMAC-SHA256 of
 * `<id>.<timestamp>.<body>`, keyed with the base64-decoded bytes after
 * `whsec_` of `secret`.
 * @param timestamp Unix seconds, as sent in `webhook-timestamp`.
 * @throws Error when `secret` does not start with `whsec_`.
 */
export function standardSignature(secret: string, id: string, timestamp: number, body: string): string {
  if (!secret.startsWith(PREFIX)) throw new Error("a webhook signing secret starts with whsec_");
  const key = Buffer.from(secret.slice(PREFIX.length), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

/** What a delivery's Standard Webhooks headers are computed from. Times in Unix milliseconds. */
export interface SigningState {
  webhookId: string;
  /** The webhook's current signing generation. */
  generation: number;
  /** Until when the previous generation's secret also signs; null: it does not. */
  previousUntil: number | null;
}

/**
 * The Standard Webhooks headers of one attempt: `webhook-id` (the event
 * id), `webhook-timestamp` (the attempt's time, Unix seconds) and
 * `webhook-signature` (the current secret's entry, then, within 24 hours of
 * a rotation, the previous secret's, space-separated).
 * @param now the attempt's time, Unix milliseconds.
 */
export function standardWebhookHeaders(
  masterSecret: string,
  state: SigningState,
  eventId: string,
  body: string,
  now: number,
): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  const entries = [standardSignature(webhookSigningSecret(masterSecret, state.webhookId, state.generation), eventId, timestamp, body)];
  if (state.generation > 0 && state.previousUntil !== null && now < state.previousUntil) {
    entries.push(standardSignature(webhookSigningSecret(masterSecret, state.webhookId, state.generation - 1), eventId, timestamp, body));
  }
  return { "webhook-id": eventId, "webhook-timestamp": String(timestamp), "webhook-signature": entries.join(" ") };
}

/**
 * The headers of a delivery (docs/webhooks.md "Headers"): the JSON content
 * type, `X-Vault-Signature` (hex HMAC-SHA256 of the exact body, keyed with
 * VAULT_WEBHOOK_SECRET), `X-Vault-Event` (the type), `X-Vault-Delivery`
 * (the event id, the same on every retry), the User-Agent, and the
 * Standard Webhooks headers signed with the webhook's own secret
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`: signing.ts).
 * @param now the attempt's time, Unix milliseconds (`webhook-timestamp`).
 * @param options.globalSignature false leaves `X-Vault-Signature` out (an
 *   org's delivery with VAULT_WEBHOOK_ORG_GLOBAL_SIGNATURE=false: only the
 *   webhook's own secret then verifies it); default true.
 */
export function deliveryHeaders(
  delivery: Pick<DueDelivery, "webhookId" | "eventId" | "type" | "body" | "signingGeneration" | "previousSigningUntil">,
  secret: string,
  version: string,
  now: number,
  options: { globalSignature?: boolean } = {},
): Record<string, string> {
  const signing = { webhookId: delivery.webhookId, generation: delivery.signingGeneration, previousUntil: delivery.previousSigningUntil };
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    "User-Agent": `ephemeral-vault/${version}`,
    "X-Vault-Event": delivery.type,
    "X-Vault-Delivery": delivery.eventId,
  };
  if (options.globalSignature !== false) headers["X-Vault-Signature"] = hmacHex(secret, delivery.body);
  return Object.assign(headers, standardWebhookHeaders(secret, signing, delivery.eventId, delivery.body, now));
}
