import pg from "pg";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { generateLicenseKeyPair, issueLicense } from "../../../src/crypto/license.js";
import { cleanupTemp, killChildren, runCommand, startVault, tempDir } from "../../support/e2e-helpers.js";
import type { VaultProcess } from "../../support/e2e-helpers.js";
import { pgAvailability, startPgCluster } from "../../support/pg-cluster.js";
import type { PgCluster } from "../../support/pg-cluster.js";
import { describePg } from "../../support/pg-database.js";

// A real vault process on PostgreSQL while its database connections die under
// load: backends terminated one after another, then the whole cluster
// restarted. The file starts a cluster of its own (the restart must not cut
// the other test files' connections). Run `npm run build` first (the global
// setup does it).

const KEYS = {
  VAULT_ENCRYPTION_KEY: "33".repeat(32),
  VAULT_WEBHOOK_SECRET: "pg-resilience-webhook-secret-0123456789",
};

let cluster: PgCluster | undefined;

beforeAll(async () => {
  const availability = pgAvailability();
  if (availability.ok) cluster = await startPgCluster(availability);
}, 120_000);

afterEach(async () => {
  await killChildren();
});

afterAll(async () => {
  await cluster?.stop();
  cleanupTemp();
});

/** A fresh database on this file's cluster, and its URL. */
async function freshDatabase(c: PgCluster): Promise<{ name: string; url: string }> {
  const name = `resil_${Math.random().toString(16).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: c.adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(c.adminUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

/** One node (no free-tier cap: the load makes more than 100 secrets) on `url`, with `env` added. */
async function startNode(url: string, env: Record<string, string> = {}): Promise<VaultProcess> {
  const pair = generateLicenseKeyPair();
  return startVault(tempDir("ev-pg-resil-"), {
    env: {
      ...KEYS,
      VAULT_DATABASE_URL: url,
      VAULT_DATABASE_POOL_SIZE: "4",
      VAULT_LICENSE_PUBLIC_KEY: pair.publicKeyBase64,
      VAULT_LICENSE_KEY: issueLicense(pair.privateKeyPem, "resilience", null, Date.now()),
      ...env,
    },
    timeoutMs: 30_000,
  });
}

/** What the load saw: every answer's status, the bodies of the failures, writes acknowledged, one-read values served. */
interface LoadRecord {
  statuses: Map<number, number>;
  failures: { status: number; body: string }[];
  /** Fetches that failed without an answer (the node gone, or a cut connection). */
  noAnswer: number;
  /** Keys of the plain secrets answered 201, with their values. */
  acknowledged: Map<string, string>;
  /** For each one-read secret answered 201: how many reads got its value (200). */
  served: Map<string, number>;
  /** 201 answers after the disruption ended. */
  createdAfter: number;
}

/**
 * Steady load until stop(): two loops creating plain secrets, two creating
 * one-read secrets and reading each twice at once (one of the reads burns it),
 * one reading a fixed secret.
 */
function startLoad(v: VaultProcess): { record: LoadRecord; disruptionOver: () => void; stop: () => Promise<void> } {
  const record: LoadRecord = {
    statuses: new Map(),
    failures: [],
    noAnswer: 0,
    acknowledged: new Map(),
    served: new Map(),
    createdAfter: 0,
  };
  let running = true;
  let after = false;
  let n = 0;
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; text: string } | undefined> => {
    try {
      const res = await v.request(method, path, body);
      const text = await res.text();
      record.statuses.set(res.status, (record.statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 500) record.failures.push({ status: res.status, body: text });
      return { status: res.status, text };
    } catch {
      record.noAnswer++;
      // A node that is gone refuses at once: do not spin.
      await new Promise((resolve) => setTimeout(resolve, 20));
      return undefined;
    }
  };
  const writer = async () => {
    while (running) {
      const key = `w-${n++}`;
      const value = `value of ${key}`;
      const res = await call("POST", "/secrets", { key, value });
      if (res?.status === 201) {
        record.acknowledged.set(key, value);
        if (after) record.createdAfter++;
      }
    }
  };
  const burner = async () => {
    while (running) {
      const key = `b-${n++}`;
      const res = await call("POST", "/secrets", { key, value: `one read of ${key}`, max_reads: 1 });
      if (res?.status !== 201) continue;
      const reads = await Promise.all([call("GET", `/secrets/${key}`), call("GET", `/secrets/${key}`)]);
      record.served.set(key, reads.filter((r) => r?.status === 200).length);
    }
  };
  const reader = async () => {
    while (running) await call("GET", "/secrets/fixed");
  };
  const loops = [writer(), writer(), burner(), burner(), reader()];
  return {
    record,
    disruptionOver: () => {
      after = true;
    },
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Polls GET /health until 200 (true) or `ms` milliseconds pass (false). */
async function healthyWithin(v: VaultProcess, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const status = await v.request("GET", "/health", undefined, null).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** How many units the node held to run again after a connection failure before COMMIT (its warn lines). */
function retriesLogged(v: VaultProcess): number {
  return ((v.stdout() + v.stderr()).match(/failed before COMMIT: retrying on a new connection/g) ?? []).length;
}

/** Everything that must hold after the disruption, checked against the node and the database. */
async function expectSurvived(v: VaultProcess, url: string, load: ReturnType<typeof startLoad>): Promise<void> {
  expect(v.child.exitCode, v.stderr()).toBeNull();
  expect(v.child.signalCode, v.stderr()).toBeNull();
  expect(await healthyWithin(v, 20_000), v.stderr()).toBe(true);
  // Serving again: new writes are acknowledged after the disruption.
  load.disruptionOver();
  await new Promise((resolve) => setTimeout(resolve, 1500));
  await load.stop();
  const { record } = load;
  expect(v.child.exitCode, v.stderr()).toBeNull();
  expect(record.createdAfter).toBeGreaterThan(0);
  // The outage did reach requests (else this test proved nothing): answered 503, or held and run
  // again on a new connection (failed before COMMIT, VAULT_DATABASE_RETRY_MS) ...
  expect((record.statuses.get(503) ?? 0) + retriesLogged(v), `statuses: ${JSON.stringify([...record.statuses])}`).toBeGreaterThan(0);
  // ... and only the answers of a working vault, or 503 for what it cut: never a 500.
  const statuses = [...record.statuses.keys()].sort();
  for (const status of statuses) expect([200, 201, 404, 503], `statuses seen: ${statuses.join(", ")}`).toContain(status);
  for (const failure of record.failures) {
    expect(failure.status).toBe(503);
    expect(JSON.parse(failure.body)).toMatchObject({ error: expect.any(String) });
  }
  // Every acknowledged write is there, with its value.
  expect(record.acknowledged.size).toBeGreaterThan(0);
  for (const [key, value] of record.acknowledged) {
    const res = await v.request("GET", `/secrets/${key}`);
    expect(res.status, key).toBe(200);
    expect(((await res.json()) as { value: string }).value, key).toBe(value);
  }
  // No one-read secret was served twice.
  for (const [key, count] of record.served) expect(count, key).toBeLessThanOrEqual(1);
  // The audit chains still verify (a unit cut mid-way left no half-linked row).
  const verify = runCommand(["audit", "verify", "--database-url", url], KEYS);
  expect(verify.code, verify.stdout + verify.stderr).toBe(0);
}

describePg("a PostgreSQL node whose database connections die under load", () => {
  it("survives its backends being terminated again and again: 503 for what was cut, then serves again", async () => {
    if (cluster === undefined) throw new Error("no cluster");
    const db = await freshDatabase(cluster);
    const v = await startNode(db.url);
    expect((await v.request("POST", "/secrets", { key: "fixed", value: "fixed value" })).status).toBe(201);
    const load = startLoad(v);
    const admin = new pg.Client({ connectionString: cluster.adminUrl });
    await admin.connect();
    try {
      for (let round = 0; round < 25; round++) {
        await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [db.name]);
        await new Promise((resolve) => setTimeout(resolve, 120));
      }
    } finally {
      await admin.end();
    }
    await expectSurvived(v, db.url, load);
  }, 90_000);

  it("survives a restart of the PostgreSQL cluster during reads and writes", async () => {
    if (cluster === undefined) throw new Error("no cluster");
    const db = await freshDatabase(cluster);
    const v = await startNode(db.url);
    expect((await v.request("POST", "/secrets", { key: "fixed", value: "fixed value" })).status).toBe(201);
    const load = startLoad(v);
    await new Promise((resolve) => setTimeout(resolve, 700));
    await cluster.restart(1500);
    await expectSurvived(v, db.url, load);
    // Down for less than the retry window (5 s by default): what the restart cut before COMMIT was held and run again.
    expect(retriesLogged(v)).toBeGreaterThan(0);
  }, 90_000);

  it("answers 503 at once for what a restart cuts when VAULT_DATABASE_RETRY_MS=0", async () => {
    if (cluster === undefined) throw new Error("no cluster");
    const db = await freshDatabase(cluster);
    const v = await startNode(db.url, { VAULT_DATABASE_RETRY_MS: "0" });
    expect((await v.request("POST", "/secrets", { key: "fixed", value: "fixed value" })).status).toBe(201);
    const load = startLoad(v);
    await new Promise((resolve) => setTimeout(resolve, 700));
    await cluster.restart(1500);
    await expectSurvived(v, db.url, load);
    expect(retriesLogged(v)).toBe(0);
    expect(load.record.statuses.get(503) ?? 0).toBeGreaterThan(0);
  }, 90_000);
});
