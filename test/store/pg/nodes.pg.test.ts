import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { cleanupTemp, killChildren, startVault, tempDir } from "../../support/e2e-helpers.js";
import type { VaultProcess } from "../../support/e2e-helpers.js";
import { generateRequestKeys, openAnswer, requestRevealProof, sealAnswer } from "../../../packages/client/src/request-envelope.js";
import { createTestDatabase, describePg } from "../../support/pg-database.js";
import type { TestDatabase } from "../../support/pg-database.js";
import { makeCertificate, startReceiver } from "../../support/webhook-receiver.js";
import type { Receiver, TestCertificate } from "../../support/webhook-receiver.js";

// Two real vault processes (bin/ephemeral-vault.js, built) on one PostgreSQL
// database: what must hold across nodes, end to end. Run `npm run build` first.

const KEYS = {
  VAULT_ENCRYPTION_KEY: "11".repeat(32),
  VAULT_WEBHOOK_SECRET: "pg-nodes-webhook-secret-0123456789",
};

let cert: TestCertificate;
let caFile: string;
const receivers: Receiver[] = [];
const databases: TestDatabase[] = [];

beforeAll(async () => {
  cert = await makeCertificate();
  caFile = join(tempDir("ev-pg-ca-"), "ca.pem");
  writeFileSync(caFile, cert.cert);
});

afterEach(async () => {
  await killChildren();
  for (const r of receivers.splice(0)) await r.close();
});

afterAll(async () => {
  for (const db of databases.splice(0)) await db.drop();
  cleanupTemp();
});

/** Two nodes on a fresh database, each with its own (unused) data dir. */
async function twoNodes(env: Record<string, string> = {}): Promise<[VaultProcess, VaultProcess]> {
  const db = await createTestDatabase();
  databases.push(db);
  const start = () =>
    startVault(tempDir("ev-pg-node-"), {
      env: { ...KEYS, VAULT_DATABASE_URL: db.url, VAULT_DATABASE_POOL_SIZE: "4", NODE_EXTRA_CA_CERTS: caFile, ...env },
      timeoutMs: 30_000,
    });
  // Started together: both migrate under the advisory lock.
  return Promise.all([start(), start()]);
}

describePg("several vault processes on one PostgreSQL", () => {
  it("refuses to start without the shared keys, naming the missing one (exit 2)", async () => {
    const db = await createTestDatabase();
    databases.push(db);
    const err = await startVault(tempDir("ev-pg-node-"), {
      env: { VAULT_DATABASE_URL: db.url, VAULT_ENCRYPTION_KEY: KEYS.VAULT_ENCRYPTION_KEY },
    }).then(
      () => undefined,
      (e: unknown) => e as { code: number; stderr: string },
    );
    expect(err?.code).toBe(2);
    expect(err?.stderr).toMatch(/VAULT_WEBHOOK_SECRET must be set with VAULT_DATABASE_URL/);
  });

  it("refuses a node whose encryption key is not the one the database was written with", async () => {
    const [a, b] = await twoNodes();
    expect((await a.request("POST", "/secrets", { key: "k", value: "v" })).status).toBe(201);
    await Promise.all([a.stop(), b.stop()]);
    const db = databases[databases.length - 1] as TestDatabase;
    const err = await startVault(tempDir("ev-pg-node-"), {
      env: { ...KEYS, VAULT_ENCRYPTION_KEY: "22".repeat(32), VAULT_DATABASE_URL: db.url },
    }).then(
      () => undefined,
      (e: unknown) => e as { code: number; stderr: string },
    );
    expect(err?.code).toBe(2);
    expect(err?.stderr).toMatch(/does not match the key this database was written with/);
  });

  it("splits the burn race across both nodes: exactly max_reads readers get the value", async () => {
    const [a, b] = await twoNodes();
    expect((await a.request("POST", "/secrets", { key: "race", value: "the value", max_reads: 5 })).status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).request("GET", "/secrets/race")));
    const ok = answers.filter((r) => r.status === 200);
    expect(ok).toHaveLength(5);
    expect(answers.filter((r) => r.status === 404)).toHaveLength(35);
  });

  it("takes one answer of a request when 20 answers race across both nodes", async () => {
    const [a, b] = await twoNodes();
    const keys = await generateRequestKeys();
    const { proof, revealCheck } = await requestRevealProof(keys.privateKey);
    const made = await a.request("POST", "/requests", { description: "the VPN password", public_key: keys.publicKey, reveal_check: revealCheck });
    expect(made.status).toBe(201);
    const id = ((await made.json()) as { id: string }).id;
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => sealAnswer(keys.publicKey, id, `answer ${i}`)));
    const statuses = await Promise.all(answers.map((value, i) => (i % 2 === 0 ? a : b).request("POST", `/r/${id}/answer`, { value }, null).then((r) => r.status)));
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const read = await b.request("POST", `/r/${id}/reveal`, { proof }, null);
    expect(read.status).toBe(200);
    const winner = answers[statuses.indexOf(201)] as string;
    expect(await openAnswer(keys.privateKey, id, ((await read.json()) as { value: string }).value)).toBe(await openAnswer(keys.privateKey, id, winner));
  });

  it("delivers a webhook once while both nodes' workers run", async () => {
    const receiver = await startReceiver(cert);
    receivers.push(receiver);
    const [a, b] = await twoNodes({ VAULT_WEBHOOK_ALLOW_PRIVATE: "true" });
    expect((await a.request("POST", "/webhooks", { url: receiver.url, events: ["secret.created"] })).status).toBe(201);
    for (let i = 0; i < 10; i++) {
      expect((await (i % 2 === 0 ? a : b).request("POST", "/secrets", { key: `hook-${i}`, value: "v" })).status).toBe(201);
    }
    const got = await receiver.waitFor(10);
    // Give both workers time to (wrongly) send anything twice.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const keys = receiver.requests.map((r) => (JSON.parse(r.body) as { data: { key: string } }).data.key).sort();
    expect(got.length).toBe(10);
    expect(keys).toEqual(Array.from({ length: 10 }, (_, i) => `hook-${i}`).sort());
  });

  it("keeps every acknowledged write readable through the other node when one is killed with SIGKILL under load", async () => {
    const [a, b] = await twoNodes();
    const acknowledged: string[] = [];
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const key = `load-${i}`;
        try {
          const res = await a.request("POST", "/secrets", { key, value: `value-${i}` });
          if (res.status === 201) acknowledged.push(key);
        } catch {
          return; // the node is gone
        }
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 700));
    await a.stop("SIGKILL");
    writing = false;
    await writer;
    expect(acknowledged.length).toBeGreaterThan(0);
    for (const key of acknowledged) {
      const res = await b.request("HEAD", `/secrets/${key}`);
      expect(res.status, key).toBe(200);
    }
  });
});
