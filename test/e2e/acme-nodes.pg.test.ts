import { afterAll, afterEach, describe, expect, it } from "vitest";
import { E2E_PG_KEYS, cleanupTemp, killChildren, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";
import { freePort } from "../support/pg-cluster.js";
import { createTestDatabase, describePg } from "../support/pg-database.js";
import type { TestDatabase } from "../support/pg-database.js";
import { findPebble, startPebble } from "../support/pebble.js";
import type { Pebble } from "../support/pebble.js";
import { httpsRequest } from "../support/tls-helpers.js";

// Two nodes of one PostgreSQL database with VAULT_ACME_DOMAINS, each with its own data dir
// (docs/deploy.md "Certificates by ACME"): one order per certificate, the other node picks it
// up from the database; the CA's HTTP-01 request reaches one node only (pebble validates on
// one port), which answers the other node's challenge from the database.

const pebbles: Pebble[] = [];
const databases: TestDatabase[] = [];
afterEach(async () => {
  await killChildren();
  await Promise.all(pebbles.splice(0).map((p) => p.stop()));
});
afterAll(async () => {
  for (const db of databases) await db.drop();
  cleanupTemp();
});

function count(text: string, pattern: RegExp): number {
  return (text.match(new RegExp(pattern, "g")) ?? []).length;
}

const orders = (vaults: VaultProcess[]) => vaults.reduce((n, v) => n + count(v.stdout(), /"msg":"ACME certificate order succeeded"/), 0);

/** describePg, skipped without pebble outside CI (test/support/pebble.ts describePebble). */
const describePgPebble =
  findPebble() !== null || process.env.CI === "true" ? describePg : (name: string, fn: () => void) => describe.skip(`${name} (skipped: no pebble; apt-get install pebble)`, fn);

describePgPebble(
  "ACME on two nodes of one database (pebble)",
  () => {
    it("orders once per certificate; the other node serves the same one, the renewal included", async () => {
      const pebble = await startPebble({ validitySeconds: 20 });
      pebbles.push(pebble);
      const db = await createTestDatabase();
      databases.push(db);
      const env = (redirectPort: number) => ({
        VAULT_DATABASE_URL: db.url,
        ...E2E_PG_KEYS,
        VAULT_ACME_DOMAINS: "localhost",
        VAULT_ACME_DIRECTORY: pebble.directory,
        VAULT_HTTP_REDIRECT_PORT: String(redirectPort),
        VAULT_LOG_LEVEL: "info",
        NODE_EXTRA_CA_CERTS: pebble.caFile,
      });
      // Node a is where pebble validates; node b's redirect port is its own, unreachable to pebble.
      const a = await startVault(tempDir("ev-acme-a-"), { env: env(pebble.httpPort) });
      await expect.poll(() => orders([a]), { timeout: 30_000, interval: 200 }).toBe(1);
      const b = await startVault(tempDir("ev-acme-b-"), { env: env(await freePort()) });
      await expect.poll(() => b.stdout(), { timeout: 15_000, interval: 200 }).toMatch(/"msg":"ACME certificate picked up from the database"/);
      const root = await pebble.issuingRoot();
      const onA = await httpsRequest(`${a.url.replace("127.0.0.1", "localhost")}/health`, [root]);
      const onB = await httpsRequest(`${b.url.replace("127.0.0.1", "localhost")}/health`, [root]);
      expect([onA.status, onB.status]).toEqual([200, 200]);
      expect(onB.fingerprint).toBe(onA.fingerprint);
      expect(pebble.issued()).toBe(1);

      // The renewal (20 s lifetime: due ~13 s after issuance) is ordered by one node, whichever
      // takes the lease; node b's order is validated through node a, from the database.
      await expect.poll(() => pebble.issued(), { timeout: 40_000, interval: 200 }).toBe(2);
      await expect
        .poll(async () => {
          const [x, y] = await Promise.all([
            httpsRequest(`${a.url.replace("127.0.0.1", "localhost")}/health`, [root]),
            httpsRequest(`${b.url.replace("127.0.0.1", "localhost")}/health`, [root]),
          ]);
          return x.fingerprint === y.fingerprint && x.fingerprint !== onA.fingerprint;
        }, { timeout: 15_000, interval: 500 })
        .toBe(true);
      expect(orders([a, b])).toBe(2);
      expect(pebble.issued()).toBe(2);
      expect(`${a.stdout()}${b.stdout()}`).not.toMatch(/PRIVATE KEY/);
      expect(await a.stop()).toEqual({ code: 0, signal: null });
      expect(await b.stop()).toEqual({ code: 0, signal: null });
    }, 120_000);

    it("answers the CA for another node: the node pebble reaches serves the challenge the ordering node put in the database", async () => {
      const pebble = await startPebble();
      pebbles.push(pebble);
      const [own, shared] = [await createTestDatabase(), await createTestDatabase()];
      databases.push(own, shared);
      const env = (db: TestDatabase, redirectPort: number) => ({
        VAULT_DATABASE_URL: db.url,
        ...E2E_PG_KEYS,
        VAULT_ACME_DOMAINS: "localhost",
        VAULT_ACME_DIRECTORY: pebble.directory,
        VAULT_HTTP_REDIRECT_PORT: String(redirectPort),
        VAULT_LOG_LEVEL: "info",
        NODE_EXTRA_CA_CERTS: pebble.caFile,
      });
      // Node a gets a certificate of its own first (a database of its own), then joins the
      // shared database with it: valid for years, it orders nothing there.
      const dirA = tempDir("ev-acme-a-");
      const alone = await startVault(dirA, { env: env(own, pebble.httpPort) });
      await expect.poll(() => orders([alone]), { timeout: 30_000, interval: 200 }).toBe(1);
      expect(await alone.stop()).toEqual({ code: 0, signal: null });
      const a = await startVault(dirA, { env: env(shared, pebble.httpPort) });
      expect(a.stdout()).toMatch(/"msg":"ACME certificate loaded from the data dir"/);
      // Node b has none and orders; pebble validates on node a's port only.
      const b = await startVault(tempDir("ev-acme-b-"), { env: env(shared, await freePort()) });
      await expect.poll(() => orders([b]), { timeout: 30_000, interval: 200 }).toBe(1);
      expect(orders([a])).toBe(0);
      expect(pebble.issued()).toBe(2);
      expect(pebble.log()).toMatch(new RegExp(`Attempting to validate w/ HTTP: http://localhost:${pebble.httpPort}/\\.well-known/acme-challenge/`));
      const root = await pebble.issuingRoot();
      const onB = await httpsRequest(`${b.url.replace("127.0.0.1", "localhost")}/health`, [root]);
      expect(onB.status).toBe(200);
      expect(await a.stop()).toEqual({ code: 0, signal: null });
      expect(await b.stop()).toEqual({ code: 0, signal: null });
    }, 120_000);
  },
);
