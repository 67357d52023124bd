import { ValueCipher, generateRootKey } from "../src/crypto/cipher.js";
import { openDatabase } from "../src/store/sqlite/db.js";
import type { Db } from "../src/store/sqlite/db.js";
import type { DbFileWatch } from "../src/store/sqlite/db-file-watch.js";
import { createLogger } from "../src/log/log.js";
import { SqliteEngine } from "../src/store/sqlite/engine.js";
import type { Engine } from "../src/store/engine.js";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterEach, inject, it } from "vitest";
import { migratePg, openPgPool, pgEngineOver } from "../src/store/pg/index.js";
import type { PgEngine } from "../src/store/pg/index.js";
import type { UnitOfWork, Work } from "../src/store/work.js";
import { createVault } from "../src/vault.js";
import type { Vault, VaultOptions } from "../src/vault.js";

export const MASTER_KEY = "test-master-key-0123456789";

/** A clock the test moves by hand; times in Unix milliseconds. */
export interface FakeClock {
  now: () => number;
  /** Moves time forward by `ms` milliseconds. */
  advance: (ms: number) => void;
  set: (ms: number) => void;
}

/** A fake clock starting at 2026-01-01T00:00:00Z. */
export function fakeClock(start = Date.UTC(2026, 0, 1)): FakeClock {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms), set: (ms) => (t = ms) };
}

/**
 * A test vault on the engine under test (TEST_ENGINE). `engine` is the
 * neutral Engine; the SQLite handles (`db`, `sqlite`) exist only on SQLite:
 * on PostgreSQL they throw, naming the test to mark itSqlite.
 */
export interface TestVault extends Vault {
  /** The SQLite database. @throws Error on PostgreSQL (mark the test itSqlite). */
  readonly db: Db;
  /** The SQLite engine (group commit hooks, WAL scrub). @throws Error on PostgreSQL (mark the test itSqlite). */
  readonly sqlite: SqliteEngine;
  clock: FakeClock;
  cipher: ValueCipher;
  /** Sends a request to the in-process app. `body` objects are sent as JSON. */
  request: (method: string, path: string, options?: RequestOptions) => Promise<Response>;
  /** Same with the master key. */
  asMaster: (method: string, path: string, body?: unknown) => Promise<Response>;
  /**
   * The rows of a raw SQL statement on the vault's database, on either engine
   * (both have the same tables and columns): for tests that look at what was
   * stored. `?` placeholders (numbered for PostgreSQL); integers come back as
   * numbers on both (the PostgreSQL pool parses int8), blobs and bytea as Buffers. A
   * statement without rows (an INSERT) answers [].
   */
  query: (sql: string, ...params: unknown[]) => Promise<Record<string, unknown>[]>;
}

export interface RequestOptions {
  /** Bearer token; null sends no Authorization header. Default: the master key. */
  token?: string | null;
  body?: unknown;
  /** Raw body, sent as is (with `contentType`). */
  raw?: BodyInit;
  contentType?: string;
  headers?: Record<string, string>;
}

/**
 * A fresh vault on `:memory:` with a fake clock and a silent logger: one per
 * test. `options` override any VaultOptions (for example `activeLimit`);
 * `options.db`: an open SQLite database to build it over instead.
 */
export function buildTestVault(options: Partial<VaultOptions> & { db?: Db } = {}): TestVault {
  const clock = fakeClock();
  const cipher = new ValueCipher(generateRootKey());
  const common = {
    cipher,
    log: createLogger("silent"),
    masterKey: MASTER_KEY,
    now: clock.now,
    activeLimit: () => null,
    publicUrl: "http://vault.test",
    maxValueBytes: 65_536,
    trustProxy: false,
    ...options,
  };
  if (TEST_ENGINE === "pg") {
    const { engine, query } = pgTestWork(common.cipher);
    return withRequests(createVault(engine, common), undefined, clock, cipher, query);
  }
  const db = options.db ?? openDatabase(":memory:");
  const query = async (sql: string, ...params: unknown[]) => {
    const statement = db.prepare(sql);
    // A statement that returns no rows (an INSERT) is run, answering no rows, as on PostgreSQL.
    if (!statement.reader) {
      statement.run(...params);
      return [];
    }
    return statement.all(...params) as Record<string, unknown>[];
  };
  const engine = new SqliteEngine(db, { auditChainKey: common.cipher.auditChainKeys().get(common.cipher.currentKeyId) ?? null, log: common.log });
  return withRequests(createVault(engine, common), engine, clock, cipher, query);
}

/**
 * The engine the vault tests run on: `sqlite` (default), or `pg` in the
 * `pg-matrix` vitest project (VAULT_TEST_ENGINE=pg), where the same route
 * tests run against PostgreSQL.
 */
export const TEST_ENGINE: "sqlite" | "pg" = process.env.VAULT_TEST_ENGINE === "pg" ? "pg" : "sqlite";

/** Adds the request helpers to a built vault. */
function withRequests(
  vault: Vault,
  sqlite: SqliteEngine | undefined,
  clock: FakeClock,
  cipher: ValueCipher,
  query: TestVault["query"],
): TestVault {
  const request = (method: string, path: string, opts: RequestOptions = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    const token = opts.token === undefined ? MASTER_KEY : opts.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: BodyInit | undefined;
    if (opts.raw !== undefined) {
      body = opts.raw;
      if (opts.contentType) headers["content-type"] = opts.contentType;
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers["content-type"] = opts.contentType ?? "application/json";
    }
    return Promise.resolve(vault.app.request(path, { method, headers, body }));
  };
  const sqliteOnly = (): SqliteEngine => {
    if (sqlite === undefined) throw new Error("this test reaches the SQLite engine (v.db, v.sqlite) on PostgreSQL: mark it itSqlite");
    return sqlite;
  };
  const built = Object.assign({}, vault, {
    clock,
    cipher,
    request,
    asMaster: (method: string, path: string, body?: unknown) => request(method, path, { body }),
    query,
  });
  // Getters (not copied values): on PostgreSQL they throw only when a test reaches for them.
  return Object.defineProperties(built, {
    db: { get: (): Db => sqliteOnly().db, enumerable: false },
    sqlite: { get: (): SqliteEngine => sqliteOnly(), enumerable: false },
  }) as TestVault;
}

/** A scoped API key made through POST /keys: its id and its token (shown once). */
export interface CreatedKey {
  id: string;
  token: string;
}

/**
 * Creates a scoped API key through `POST /keys` (with the master key, or
 * with `asToken`) and returns its id and token; fails the test on any
 * status other than 201.
 * @param body `{name?, permissions, prefix?, expires_at?}`; name defaults to "test key".
 */
export async function createKey(
  v: TestVault,
  body: { name?: string; permissions: string[]; prefix?: string | null; expires_at?: number | null },
  asToken?: string,
): Promise<CreatedKey> {
  const res = await v.request("POST", "/keys", { token: asToken, body: { name: "test key", ...body } });
  if (res.status !== 201) throw new Error(`POST /keys answered ${res.status}: ${await res.text()}`);
  const created = (await res.json()) as CreatedKey;
  return { id: created.id, token: created.token };
}

/** A unit of work over a fresh database of the test engine, and a raw reader of that database. */
export interface TestWork {
  tx: UnitOfWork<Work>;
  /** The engine whose unit of work `tx` is. */
  engine: Engine;
  /** As TestVault.query. */
  query: TestVault["query"];
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
  return {
    tx: engine.tx,
    engine,
    query: async (sql: string, ...params: unknown[]) => db.prepare(sql).all(...params) as Record<string, unknown>[],
  };
}

/**
 * A PostgreSQL engine in a schema of its own (search_path), built
 * synchronously like the SQLite one: the schema is created and migrated by
 * the first call, which every later one awaits.
 */
function pgTestWork(cipher: ValueCipher): TestWork {
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
    return { pool, engine: pgEngineOver(pool, { auditChainKey: cipher.auditChainKeys().get(cipher.currentKeyId) ?? null }) };
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
  const query = async (sql: string, ...params: unknown[]) => {
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

/** `it` for tests that reach into the SQLite engine (v.db, the group commit's hooks): skipped on PostgreSQL. */
export const itSqlite: typeof it = (TEST_ENGINE === "pg" ? it.skip : it) as typeof it;

/** Resolves with the error `promise` rejects with; fails when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection");
}

/**
 * A vault over the SQLite engine on `db` (open and migrated), as server.ts
 * builds one: the engine keyed with the cipher's current chain key, then
 * createVault. For tests that open, reopen or share a database file.
 */
export function createSqliteVault(db: Db, options: VaultOptions & { file?: DbFileWatch }): Vault<SqliteEngine> {
  const engine = new SqliteEngine(db, {
    auditChainKey: options.cipher.auditChainKeys().get(options.cipher.currentKeyId) ?? null,
    log: options.log,
    file: options.file,
  });
  return createVault(engine, options);
}
