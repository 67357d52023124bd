import { createHmac } from "node:crypto";
import { afterEach, beforeAll } from "vitest";
import type { Lookup } from "../../src/webhooks/address-guard.js";
import type { WebhookSettings } from "../../src/webhooks/index.js";
import { buildTestVault } from "./helpers.js";
import type { TestVault } from "./helpers.js";
import { expectStatus } from "./org-helpers.js";
import { makeCertificate, startReceiver } from "./webhook-receiver.js";
import type { Receiver, TestCertificate } from "./webhook-receiver.js";

/**
 * Shared fixtures of the webhook tests (webhook-*.test.ts): a vault whose
 * worker trusts a test certificate, receivers, signing and queue inspection.
 */

/** The signing secret of vaultWith()'s webhooks. */
export const SECRET = "test-webhook-secret-0123456789";
/** The fake clock's start, Unix seconds. */
export const START_SECONDS = Math.floor(Date.UTC(2026, 0, 1) / 1000);

/** A lookup that must never be reached (IP literals and localhost names need none). */
export const noLookup: Lookup = () => Promise.reject(new Error("no DNS in tests"));

/** The test certificate, made by useWebhookFixtures()'s beforeAll. */
export let cert: TestCertificate;
/** Closers run (last first) after each test. */
export const toClose: (() => Promise<void> | void)[] = [];

/** Registers the file's hooks: the certificate once, closing what a test opened after each. */
export function useWebhookFixtures(): void {
  beforeAll(async () => {
    cert = await makeCertificate();
  });

  afterEach(async () => {
    for (const close of toClose.splice(0).reverse()) await close();
  });
}

/** A vault whose worker trusts the test certificate and may reach loopback. */
export function vaultWith(settings: WebhookSettings = {}): TestVault {
  const v = buildTestVault({
    webhooks: {
      secret: SECRET,
      allowPrivate: true,
      ca: cert.cert,
      lookup: noLookup,
      random: () => 0.5,
      retryBaseMs: 1000,
      maxAttempts: 4,
      timeoutMs: 5000,
      ...settings,
    },
  });
  toClose.push(() => v.webhooks.worker.stop());
  return v;
}

/** An HTTPS receiver with the test certificate, closed after the test. */
export async function newReceiver(): Promise<Receiver> {
  const r = await startReceiver(cert);
  toClose.push(() => r.close());
  return r;
}

/** Registers a webhook with the master key; asserts 201. */
export async function createWebhook(v: TestVault, body: Record<string, unknown>, path = "/webhooks"): Promise<Record<string, unknown>> {
  return expectStatus(v.asMaster("POST", path, body), 201);
}

/** The X-Vault-Signature of a body: hex HMAC-SHA256. */
export function sign(body: string, secret = SECRET): string {
  return createHmac("sha256", secret).update(body).digest("hex");
}

/** The number of rows of a table, read on either engine. */
export async function countRows(v: TestVault, table: string): Promise<number> {
  return (await v.query(`SELECT count(*) AS n FROM ${table}`))[0]?.n as number;
}

/** The queued deliveries, oldest first, with their event's type and body, read on either engine. */
export async function queuedRows(v: TestVault): Promise<{ webhook: string; type: string; body: Record<string, unknown> }[]> {
  const rows = await v.query(
    "SELECT d.webhook_id AS webhook, e.type, e.body FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id ORDER BY d.id",
  );
  return rows.map((r) => ({ webhook: r.webhook as string, type: r.type as string, body: JSON.parse(r.body as string) as Record<string, unknown> }));
}
