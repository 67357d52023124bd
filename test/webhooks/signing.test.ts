import { createHmac, timingSafeEqual } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { TestVault } from "../support/helpers.js";
import { createOrg, createPrincipal, expectStatus } from "../support/org-helpers.js";
import { createWebhook, newReceiver, sign, useWebhookFixtures, vaultWith } from "../support/webhook-helpers.js";
import type { ReceivedRequest } from "../support/webhook-receiver.js";

/**
 * Each webhook's own signing secret and the Standard Webhooks headers
 * (docs/webhooks.md "Verifying a delivery"): a tenant cannot forge another
 * tenant's deliveries, and a rotation signs with both secrets for 24 hours.
 */

useWebhookFixtures();

const SECRET_SHAPE = /^whsec_[A-Za-z0-9+/]{43}=$/;
const DAY_MS = 24 * 60 * 60 * 1000;

/** True when one `v1,` entry of `header` is the HMAC of "<id>.<timestamp>.<body>" under `secret` (the receiver's check). */
function verifies(req: ReceivedRequest, secret: string): boolean {
  const id = req.headers["webhook-id"];
  const timestamp = req.headers["webhook-timestamp"];
  const header = req.headers["webhook-signature"];
  if (typeof id !== "string" || typeof timestamp !== "string" || typeof header !== "string") return false;
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${req.body}`).digest();
  return header.split(" ").some((entry) => {
    const [version, signature] = entry.split(",");
    if (version !== "v1" || signature === undefined) return false;
    const given = Buffer.from(signature, "base64");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** Creates an org webhook to `url` with the master key; returns its id and secret. */
async function orgHook(v: TestVault, orgId: string, url: string): Promise<{ id: string; secret: string }> {
  const body = await createWebhook(v, { url, events: ["secret.created"] }, `/orgs/${orgId}/webhooks`);
  return { id: body.id as string, secret: body.secret as string };
}

describe("a webhook's own signing secret", () => {
  it("is in the create answer only, in the documented shape, and in no list or audit row", async () => {
    const v = vaultWith();
    const global = await createWebhook(v, { url: "https://127.0.0.1/g", events: ["*"] });
    expect(global.secret).toMatch(SECRET_SHAPE);
    const orgId = await createOrg(v);
    const org = await orgHook(v, orgId, "https://127.0.0.1/o");
    expect(org.secret).toMatch(SECRET_SHAPE);
    expect(org.secret).not.toBe(global.secret);

    const lists = [
      await expectStatus(v.asMaster("GET", "/webhooks"), 200),
      await expectStatus(v.asMaster("GET", `/orgs/${orgId}/webhooks`), 200),
      await expectStatus(v.asMaster("GET", `/webhooks/${global.id as string}/deliveries`), 200),
      await expectStatus(v.asMaster("GET", "/audit"), 200),
      await expectStatus(v.asMaster("GET", `/orgs/${orgId}/audit`), 200),
    ];
    const listed = (lists[0]?.webhooks as Record<string, unknown>[])[0];
    expect(listed).toBeDefined();
    expect(listed).not.toHaveProperty("secret");
    for (const list of lists) expect(JSON.stringify(list)).not.toMatch(/whsec_/);
  });

  it("signs each org's deliveries with that webhook's secret, which another org's secret does not verify", async () => {
    const v = vaultWith();
    const orgA = await createOrg(v, "a");
    const orgB = await createOrg(v, "b");
    const receiverA = await newReceiver();
    const receiverB = await newReceiver();
    const hookA = await orgHook(v, orgA, receiverA.url);
    const hookB = await orgHook(v, orgB, receiverB.url);
    await expectStatus(v.asMaster("POST", `/orgs/${orgA}/secrets`, { key: "a", value: "v" }), 201);
    await expectStatus(v.asMaster("POST", `/orgs/${orgB}/secrets`, { key: "b", value: "v" }), 201);
    expect(await v.webhooks.worker.tick()).toBe(2);

    const [a] = await receiverA.waitFor(1);
    const [b] = await receiverB.waitFor(1);
    if (a === undefined || b === undefined) throw new Error("no delivery");
    const event = JSON.parse(a.body) as { id: string };
    expect(a.headers["webhook-id"]).toBe(event.id);
    expect(a.headers["webhook-timestamp"]).toBe(String(Math.floor(v.clock.now() / 1000)));
    expect(a.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(verifies(a, hookA.secret)).toBe(true);
    expect(verifies(a, hookB.secret)).toBe(false);
    expect(verifies(b, hookB.secret)).toBe(true);
    expect(verifies(b, hookA.secret)).toBe(false);
    // The operator's signature is unchanged.
    expect(a.headers["x-vault-signature"]).toBe(sign(a.body));
  });

  it("with VAULT_WEBHOOK_ORG_GLOBAL_SIGNATURE=false, an org's deliveries carry no X-Vault-Signature; global ones keep it", async () => {
    const v = vaultWith({ orgGlobalSignature: false });
    const orgId = await createOrg(v);
    const orgReceiver = await newReceiver();
    const globalReceiver = await newReceiver();
    const org = await orgHook(v, orgId, orgReceiver.url);
    const global = await createWebhook(v, { url: globalReceiver.url, events: ["secret.created"] });
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/secrets`, { key: "o", value: "v" }), 201);
    await expectStatus(v.asMaster("POST", "/secrets", { key: "g", value: "v" }), 201);
    expect(await v.webhooks.worker.tick()).toBe(2);

    const [o] = await orgReceiver.waitFor(1);
    const [g] = await globalReceiver.waitFor(1);
    if (o === undefined || g === undefined) throw new Error("no delivery");
    expect(o.headers).not.toHaveProperty("x-vault-signature");
    expect(verifies(o, org.secret)).toBe(true);
    expect(o.headers["x-vault-event"]).toBe("secret.created");
    expect(g.headers["x-vault-signature"]).toBe(sign(g.body));
    expect(verifies(g, global.secret as string)).toBe(true);
  });
});

describe("rotating the signing secret", () => {
  for (const scope of ["global", "org"] as const) {
    it(`signs with both secrets for 24 hours, then with the new one only (${scope})`, async () => {
      const v = vaultWith();
      const receiver = await newReceiver();
      const orgId = scope === "org" ? await createOrg(v) : undefined;
      const base = orgId === undefined ? "/webhooks" : `/orgs/${orgId}/webhooks`;
      const secrets = orgId === undefined ? "/secrets" : `/orgs/${orgId}/secrets`;
      const created = await createWebhook(v, { url: receiver.url, events: ["secret.created"] }, base);
      const id = created.id as string;
      const before = created.secret as string;

      const rotated = await expectStatus(v.asMaster("POST", `${base}/${id}/rotate`), 200);
      const after = rotated.secret as string;
      expect(after).toMatch(SECRET_SHAPE);
      expect(after).not.toBe(before);
      expect(rotated.id).toBe(id);

      await expectStatus(v.asMaster("POST", secrets, { key: "one", value: "v" }), 201);
      await v.webhooks.worker.tick();
      const [first] = await receiver.waitFor(1);
      if (first === undefined) throw new Error("no delivery");
      const entries = (first.headers["webhook-signature"] as string).split(" ");
      expect(entries).toHaveLength(2);
      expect(verifies({ ...first, headers: { ...first.headers, "webhook-signature": entries[0] } }, after)).toBe(true);
      expect(verifies({ ...first, headers: { ...first.headers, "webhook-signature": entries[1] } }, before)).toBe(true);

      v.clock.advance(DAY_MS + 1000);
      await expectStatus(v.asMaster("POST", secrets, { key: "two", value: "v" }), 201);
      await v.webhooks.worker.tick();
      const second = (await receiver.waitFor(2))[1];
      if (second === undefined) throw new Error("no delivery");
      expect((second.headers["webhook-signature"] as string).split(" ")).toHaveLength(1);
      expect(verifies(second, after)).toBe(true);
      expect(verifies(second, before)).toBe(false);

      // Audited, without the secret.
      const audit = await expectStatus(v.asMaster("GET", `${orgId === undefined ? "" : `/orgs/${orgId}`}/audit?action=webhook.rotated`), 200);
      const entriesJson = JSON.stringify(audit);
      expect(audit.entries).toEqual([expect.objectContaining({ action: "webhook.rotated", key: id })]);
      expect(entriesJson).not.toMatch(/whsec_/);
    });
  }

  it("answers 403 without the webhooks permission and 404 for an unknown webhook", async () => {
    const v = vaultWith();
    const orgId = await createOrg(v);
    const other = await createOrg(v, "other");
    const global = (await createWebhook(v, { url: "https://127.0.0.1/g", events: ["*"] })).id as string;
    const org = (await orgHook(v, orgId, "https://127.0.0.1/o")).id;

    const reader = (await expectStatus(v.asMaster("POST", "/keys", { name: "k", permissions: ["read", "write", "delete"] }), 201)).token as string;
    await expectStatus(v.request("POST", `/webhooks/${global}/rotate`, { token: reader }), 403);
    const writer = await createPrincipal(v, orgId, "writer");
    await expectStatus(v.request("POST", `/orgs/${orgId}/webhooks/${org}/rotate`, { token: writer.token }), 403);
    const otherAdmin = await createPrincipal(v, other, "admin");
    await expectStatus(v.request("POST", `/orgs/${orgId}/webhooks/${org}/rotate`, { token: otherAdmin.token }), 403);
    await expectStatus(v.request("POST", `/webhooks/${global}/rotate`, { token: otherAdmin.token }), 403);

    const unknown = "wh_aaaaaaaaaaaaaaaaaaaaaaaaaa";
    await expectStatus(v.asMaster("POST", `/webhooks/${unknown}/rotate`), 404);
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/webhooks/${unknown}/rotate`), 404);
    // Another scope's webhook is unknown here.
    await expectStatus(v.asMaster("POST", `/webhooks/${org}/rotate`), 404);
    await expectStatus(v.asMaster("POST", `/orgs/${other}/webhooks/${org}/rotate`), 404);

    // The permitted callers rotate.
    const admin = (await expectStatus(v.asMaster("POST", "/keys", { name: "a", permissions: ["admin"] }), 201)).token as string;
    expect((await expectStatus(v.request("POST", `/webhooks/${global}/rotate`, { token: admin }), 200)).secret).toMatch(SECRET_SHAPE);
    const orgAdmin = await createPrincipal(v, orgId, "admin");
    expect((await expectStatus(v.request("POST", `/orgs/${orgId}/webhooks/${org}/rotate`, { token: orgAdmin.token }), 200)).secret).toMatch(SECRET_SHAPE);
  });
});
