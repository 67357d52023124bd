import { randomBytes } from "node:crypto";
import pg from "pg";
import { describe, expect, inject } from "vitest";
import type { ValueCipher } from "../../src/crypto/cipher.js";
import { createLogger } from "../../src/log/log.js";
import { migratePg, openPgPool, pgEngineOver } from "../../src/store/pg/index.js";
import type { PgEngine } from "../../src/store/pg/index.js";
import { createVault } from "../../src/assembly/vault.js";
import type { Vault, VaultOptions } from "../../src/assembly/vault.js";
import type { NewSecret } from "../../src/store/secrets.js";
import { MASTER_KEY } from "./helpers.js";

/** A database of its own for one test file, on the run's throwaway cluster. */
export interface TestDatabase {
  /** Its name, `test_` and 12 hex digits. */
  name: string;
  /** A connection URL for `pg` (superuser, password auth over 127.0.0.1). */
  url: string;
  /** Drops it, closing any connection still open (`WITH (FORCE)`). */
  drop(): Promise<void>;
}

/**
 * `describe` for tests that need PostgreSQL: runs them when the `pg` project's global setup
 * started a cluster, and otherwise skips them with the reason in the suite's title.
 */
export function describePg(name: string, fn: () => void): void {
  const reason = inject("pgSkipReason");
  if (inject("pgAdminUrl") === null) describe.skip(`${name} (skipped: ${reason})`, fn);
  else describe(name, fn);
}

/**
 * Creates a fresh database (`CREATE DATABASE test_<random>`) on the run's cluster.
 * Throws when no cluster runs (call it only inside `describePg`) or the cluster refuses.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject("pgAdminUrl");
  if (adminUrl === null) throw new Error("no PostgreSQL cluster for this run");
  const name = `test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * One vault node in this process, as one process of a multi-node deployment would be: its own
 * pool on `url` (migrated), its own engine and audit chains, the master key MASTER_KEY, a silent
 * log, no free-tier cap, the time from `options.now` (ms; default 2026-01-01) and any other
 * vault option from `options`; `engineOptions.preparedStatements` as pgEngineOver takes it.
 * Close it with `engine.close()`.
 */
export async function openTestNode(
  url: string,
  cipher: ValueCipher,
  poolSize: number,
  options: Partial<VaultOptions> = {},
  engineOptions: { preparedStatements?: boolean; groupCommit?: boolean; retryMs?: number; onRetry?: (err: unknown) => void } = {},
): Promise<{ engine: PgEngine; vault: Vault<PgEngine> }> {
  const pool = await openPgPool({ url, poolSize });
  await migratePg(pool);
  const engine = pgEngineOver(pool, {
    auditChainKey: cipher.auditChainKeys().get(cipher.currentKeyId) ?? null,
    preparedStatements: engineOptions.preparedStatements,
    groupCommit: engineOptions.groupCommit,
    retryMs: engineOptions.retryMs,
    onRetry: engineOptions.onRetry,
  });
  const vault = createVault(
    engine,
    Object.assign(
      {
        cipher,
        log: createLogger("silent"),
        masterKey: MASTER_KEY,
        now: () => Date.UTC(2026, 0, 1),
        activeLimit: () => null,
        publicUrl: "http://vault.test",
        maxValueBytes: 65_536,
        trustProxy: false,
      },
      options,
    ),
  );
  return { engine, vault };
}

/**
 * A secret row for store-level tests (w.secrets.insert): global scope, key `key`, created at `now`
 * (Unix ms), no limits, and a ciphertext that is no real envelope (never read back as a value).
 */
export function storeSecret(key: string, now: number): NewSecret {
  return {
    scope: "global",
    key,
    isPublic: false,
    ciphertext: Buffer.from("not a real envelope"),
    now,
    expiresAt: null,
    maxReads: null,
    burnOnLimit: true,
    ownerId: null,
    allowedKeys: null,
  };
}

/**
 * Creates `n` keyed secrets `<prefix>0..<prefix>n-1` at once through `node` with the master key
 * (their audit rows spread over the node's pooled clients' chains); asserts each answers 201.
 */
export async function createSecretsAtOnce(node: { vault: Vault<PgEngine> }, prefix: string, n: number): Promise<void> {
  const results = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      node.vault.app.request("/secrets", {
        method: "POST",
        headers: { authorization: `Bearer ${MASTER_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ key: `${prefix}${i}`, value: "v" }),
      }),
    ),
  );
  for (const r of results) expect(r.status).toBe(201);
}
