import { createHmac, timingSafeEqual } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:https";
import type { Socket } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { cleanupTemp, killChildren, ROOT, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";
import { makeCertificate, startReceiver } from "../support/webhook-receiver.js";
import type { Receiver, TestCertificate } from "../support/webhook-receiver.js";

const SECRET = "e2e-webhook-secret-0123456789abcdef";
const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

let cert: TestCertificate;
let caFile: string;
const receivers: Receiver[] = [];

beforeAll(async () => {
  cert = await makeCertificate();
  caFile = join(tempDir("ev-webhook-ca-"), "ca.pem");
  writeFileSync(caFile, cert.cert);
});

afterEach(async () => {
  await killChildren();
  for (const r of receivers.splice(0)) await r.close();
});

afterAll(() => cleanupTemp());

/** The built server, trusting the test CA through NODE_EXTRA_CA_CERTS and allowed to reach loopback. */
function startWebhookVault(dataDir: string, env: Record<string, string> = {}): Promise<VaultProcess> {
  return startVault(dataDir, {
    env: {
      NODE_EXTRA_CA_CERTS: caFile,
      VAULT_WEBHOOK_ALLOW_PRIVATE: "true",
      VAULT_WEBHOOK_SECRET: SECRET,
      ...env,
    },
  });
}

async function json(res: Promise<Response>, status: number): Promise<Record<string, unknown>> {
  const r = await res;
  const text = await r.text();
  expect(r.status, text).toBe(status);
  return JSON.parse(text) as Record<string, unknown>;
}

function signatureOk(body: string, header: unknown): boolean {
  const expected = createHmac("sha256", SECRET).update(body).digest();
  const given = Buffer.from(String(header), "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

describe("webhooks from the running server", () => {
  it("delivers signed events to an HTTPS receiver trusted through NODE_EXTRA_CA_CERTS", async () => {
    const receiver = await startReceiver(cert);
    receivers.push(receiver);
    const vault = await startWebhookVault(tempDir());
    const hook = await json(vault.request("POST", "/webhooks", { url: receiver.url, events: ["secret.created", "secret.read"] }), 201);
    const hookSecret = Buffer.from((hook.secret as string).slice("whsec_".length), "base64");
    await json(vault.request("POST", "/secrets", { key: "e2e/one", value: "not-in-the-payload" }), 201);
    await json(vault.request("GET", "/secrets/e2e/one"), 200);
    await json(vault.request("DELETE", "/secrets/e2e/one"), 200);

    const requests = await receiver.waitFor(2);
    const types = requests.map((r) => r.headers["x-vault-event"]).sort();
    expect(types).toEqual(["secret.created", "secret.read"]);
    for (const r of requests) {
      expect(signatureOk(r.body, r.headers["x-vault-signature"])).toBe(true);
      expect(r.headers["user-agent"]).toBe(`ephemeral-vault/${VERSION}`);
      expect(r.headers["x-vault-delivery"]).toBe(JSON.parse(r.body).id);
      // The Standard Webhooks signature, under the webhook's own secret.
      const signed = `${r.headers["webhook-id"] as string}.${r.headers["webhook-timestamp"] as string}.${r.body}`;
      expect(r.headers["webhook-id"]).toBe(JSON.parse(r.body).id);
      expect(r.headers["webhook-signature"]).toBe(`v1,${createHmac("sha256", hookSecret).update(signed).digest("base64")}`);
      expect(r.body).not.toContain("not-in-the-payload");
    }
    const read = requests.find((r) => r.headers["x-vault-event"] === "secret.read");
    expect(JSON.parse(read?.body ?? "{}")).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: "secret.read",
      timestamp: expect.any(Number),
      data: { key: "e2e/one", read_count: 1, max_reads: null, expires_at: null },
    });
  });

  it("delivers after a restart a delivery that was pending when the process was killed", async () => {
    const receiver = await startReceiver(cert);
    receivers.push(receiver);
    receiver.respond([], 500);
    const dataDir = tempDir();
    const env = { VAULT_WEBHOOK_RETRY_BASE_MS: "1500" };
    const first = await startWebhookVault(dataDir, env);
    const hook = await json(first.request("POST", "/webhooks", { url: receiver.url, events: ["*"] }), 201);
    await json(first.request("POST", "/secrets", { key: "durable", value: "x" }), 201);
    await receiver.waitFor(1);
    // Wait until the failed first attempt is recorded: a retry is now pending.
    for (;;) {
      const list = await json(first.request("GET", `/webhooks/${hook.id as string}/deliveries`), 200);
      if ((list.deliveries as unknown[]).length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await first.stop("SIGKILL")).signal).toBe("SIGKILL");

    receiver.respond([], 200);
    const second = await startWebhookVault(dataDir, env);
    const requests = await receiver.waitFor(2);
    expect(requests[1]?.body).toBe(requests[0]?.body);
    expect(requests[1]?.headers["x-vault-delivery"]).toBe(requests[0]?.headers["x-vault-delivery"]);
    expect(signatureOk(requests[1]?.body ?? "", requests[1]?.headers["x-vault-signature"])).toBe(true);

    let list: Record<string, unknown>;
    for (;;) {
      list = await json(second.request("GET", `/webhooks/${hook.id as string}/deliveries`), 200);
      if ((list.deliveries as unknown[]).length === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const eventId = requests[0]?.headers["x-vault-delivery"];
    expect((list.deliveries as Record<string, unknown>[]).map((d) => [d.event_id, d.attempt, d.status, d.error])).toEqual([
      [eventId, 2, "delivered", null],
      [eventId, 1, "retrying", "HTTP 500"],
    ]);
  });

  it("stops cleanly while a receiver holds a delivery", async () => {
    const held: Socket[] = [];
    const hanging = createServer({ cert: cert.cert, key: cert.key }, (req) => held.push(req.socket));
    await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
    try {
      const port = (hanging.address() as { port: number }).port;
      const vault = await startWebhookVault(tempDir());
      await json(vault.request("POST", "/webhooks", { url: `https://127.0.0.1:${port}/hook`, events: ["*"] }), 201);
      await json(vault.request("POST", "/secrets", { key: "k", value: "v" }), 201);
      while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await vault.stop("SIGTERM")).toEqual({ code: 0, signal: null });
    } finally {
      hanging.closeAllConnections();
      hanging.close();
    }
  });

  it("refuses private targets unless VAULT_WEBHOOK_ALLOW_PRIVATE is set", async () => {
    const vault = await startVault(tempDir(), { env: { NODE_EXTRA_CA_CERTS: caFile } });
    for (const url of ["https://127.0.0.1/hook", "https://localhost/hook", "https://2130706433/", "https://[::1]/", "http://93.184.216.34/"]) {
      await json(vault.request("POST", "/webhooks", { url, events: ["*"] }), 400);
    }
    expect(await json(vault.request("GET", "/webhooks"), 200)).toEqual({ webhooks: [] });
  });
});
