import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterEach, inject, it } from "vitest";
import { ValueCipher, generateRootKey } from "../../src/crypto/cipher.js";
import { createLogger } from "../../src/log/log.js";
import type { Engine } from "../../src/store/engine.js";
import { migratePg, openPgPool, pgEngineOver } from "../../src/store/pg/index.js";
import type { PgEngine } from "../../src/store/pg/index.js";
import type { Db } from "../../src/store/sqlite/db.js";
import { openDatabase } from "../../src/store/sqlite/db.js";
import { SqliteEngine } from "../../src/store/sqlite/engine.js";
import type { UnitOfWork, Work } from "../../src/store/work.js";

/**
 * The engine the vault tests run on: `sqlite` (default), or `pg` in the
 * `pg-matrix` vitest project (VAULT_TEST_ENGINE=pg), where the same route
 * tests run against PostgreSQL.
 */
export const TEST_ENGINE: "sqlite" | "pg" = process.env.VAULT_TEST_ENGINE === "pg" ? "pg" : "sqlite";

/** `it` for tests that reach into the SQLite engine (buildSqliteTestVault, the group commit's hooks): skipped on PostgreSQL. */
export const itSqlite: typeof it = (TEST_ENGINE === "pg" ? it.skip : it) as typeof it;

/**
 * The rows of a raw SQL statement on a test database, on either engine (both
 * have the same tables and columns): for tests that look at what was stored.
 * `?` placeholders (numbered for PostgreSQL); integers come back as numbers on
 * both (the PostgreSQL pool parses int8), blobs and bytea as Buffers. A
 * statement without rows (an INSERT) answers [].
 */
export type RawQuery = (sql: string, ...params: unknown[]) => Promise<Record<string, unknown>[]>;

/** RawQuery over a SQLite database. */
export function sqliteQuery(db: Db): RawQuery {
  return async (sql, ...params) => {
    const statement = db.prepare(sql);
    // A statement that returns no rows (an INSERT) is run, answering no rows, as on PostgreSQL.
    if (!statement.reader) {
      statement.run(...params);
      return [];
    }
    return statement.all(...params) as Record<string, unknown>[];
  };
}

/** A unit of work over a fresh database of the test engine, and a raw reader of that database. */
export interface TestWork {
  tx: UnitOfWork<Work>;
  /** The engine whose unit of work `tx` is. */
  engine: Engine;
  query: RawQuery;
}

/**
 * For tests that build a domain module by hand (their own EventSink, say) over
 * the engine under test: SQLite's group commit on a fresh `:memory:` database,
 * or, in `pg-matrix`, a PostgreSQL schema of its own, as buildTestVault() makes.
 */
export function buildTestWork(cipher: ValueCipher = new ValueCipher(generateRootKey())): TestWork {
  if (TEST_ENGINE === "pg") return pgTestWork(cipher);
  const db = openDatabase(":memory:");
  const engine = new SqliteEngine(db, { auditChainKey: null, log: createLogger("silent") });
  return { tx: engine.tx, engine, query: sqliteQuery(db) };
}

/**
 * A PostgreSQL engine in a schema of its own (search_path), built
 * synchronously like the SQLite one: the schema is created and migrated by
 * the first call, which every later one awaits. Its pool is closed after the test.
 */
export function pgTestWork(cipher: ValueCipher): TestWork {
  const adminUrl = inject("pgAdminUrl");
  if (adminUrl === null) throw new Error("VAULT_TEST_ENGINE=pg without a PostgreSQL cluster");
  const schema = `v_${randomBytes(6).toString("hex")}`;
  const url = new URL(adminUrl);
  url.searchParams.set("options", `-c search_path=${schema}`);
  const ready = (async () => {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    const pool = await openPgPool({ url: url.toString(), poolSize: 3 });
    openPools.add(pool);
    await migratePg(pool);
    // The engine's default (the group commit on); VAULT_TEST_PG_GROUP_COMMIT=false: one transaction per unit (docs/testing.md).
    const groupCommit = process.env.VAULT_TEST_PG_GROUP_COMMIT === "false" ? false : undefined;
    return { pool, engine: pgEngineOver(pool, { auditChainKey: cipher.auditChainKeys().get(cipher.currentKeyId) ?? null, groupCommit }) };
  })();
  const tx: UnitOfWork<Work> = { run: async (fn) => (await ready).engine.tx.run(fn) };
  const later = async (): Promise<PgEngine> => (await ready).engine;
  const engine: Engine = {
    kind: "pg",
    label: "PostgreSQL",
    tx,
    migrate: async () => (await later()).migrate(),
    verifyRootKeys: async (c) => (await later()).verifyRootKeys(c),
    openAuditChain: () => true,
    verifyAudit: async (keys) => (await later()).verifyAudit(keys),
    hooks: { singleWriter: false },
    close: async () => (await later()).close(),
  };
  const query: RawQuery = async (sql, ...params) => {
    let n = 0;
    const numbered = sql.replace(/\?/g, () => `$${++n}`);
    return (await (await ready).pool.query(numbered, params)).rows as Record<string, unknown>[];
  };
  return { tx, engine, query };
}

/** Pools of the PostgreSQL test vaults, closed after each test. */
const openPools = new Set<pg.Pool>();
if (TEST_ENGINE === "pg") {
  afterEach(async () => {
    const pools = [...openPools];
    openPools.clear();
    await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
  });
}
