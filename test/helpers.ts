import { ValueCipher, generateRootKey } from "../src/crypto/cipher.js";
import { openDatabase } from "../src/store/sqlite/db.js";
import type { Db } from "../src/store/sqlite/db.js";
import { GroupCommit } from "../src/store/sqlite/group-commit.js";
import { createLogger } from "../src/ops/log.js";
import { createSqliteWork } from "../src/store/sqlite/index.js";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterEach, inject, it } from "vitest";
import { migratePg, openPgPool, pgEngineOver } from "../src/store/pg/index.js";
import type { UnitOfWork, Work } from "../src/store/work.js";
import { createPgVault, createVault } from "../src/vault.js";
import type { PgVaultOptions, Vault, VaultOptions } from "../src/vault.js";

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

export interface TestVault extends Vault {
  db: Db;
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
 * test. `options` override any VaultOptions (for example `activeLimit`).
 */
export function buildTestVault(options: Partial<VaultOptions> = {}): TestVault {
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
    const { vault, query } = buildPgVault(common, cipher);
    return withRequests(vault, clock, cipher, query);
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
  return withRequests({ ...createVault({ ...common, db }), db }, clock, cipher, query);
}

/**
 * The engine the vault tests run on: `sqlite` (default), or `pg` in the
 * `pg-matrix` vitest project (VAULT_TEST_ENGINE=pg), where the same route
 * tests run against PostgreSQL.
 */
export const TEST_ENGINE: "sqlite" | "pg" = process.env.VAULT_TEST_ENGINE === "pg" ? "pg" : "sqlite";

/** Adds the request helpers to a built vault. */
function withRequests(vault: Vault & { db: Db }, clock: FakeClock, cipher: ValueCipher, query: TestVault["query"]): TestVault {
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
  return {
    ...vault,
    clock,
    cipher,
    request,
    asMaster: (method, path, body) => request(method, path, { body }),
    query,
  };
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

/**
 * A vault node on the run's PostgreSQL cluster, built synchronously like the
 * SQLite one: its schema of its own (search_path) is created and migrated
 * by the first unit of work, which every later one awaits. `db` and the
 * group commit's hooks do not exist on this engine: a test that reaches for
 * them fails loudly (mark it sqliteOnly).
 */
function buildPgVault(common: PgVaultOptions, cipher: ValueCipher): { vault: Vault & { db: Db }; query: TestVault["query"] } {
  const { tx, query } = pgTestWork(cipher);
  // No `db` and no group-commit hooks here: a test reaching for them fails (mark it itSqlite).
  return { vault: createPgVault({ tx }, common) as unknown as Vault & { db: Db }, query };
}

/** A unit of work over a fresh database of the test engine, and a raw reader of that database. */
export interface TestWork {
  tx: UnitOfWork<Work>;
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
  return {
    tx: new GroupCommit<Work>(db, createSqliteWork(db)),
    query: async (sql: string, ...params: unknown[]) => db.prepare(sql).all(...params) as Record<string, unknown>[],
  };
}

/** A PostgreSQL unit of work in a schema of its own, created and migrated by the first unit of work. */
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
  const query = async (sql: string, ...params: unknown[]) => {
    let n = 0;
    const numbered = sql.replace(/\?/g, () => `$${++n}`);
    return (await (await ready).pool.query(numbered, params)).rows as Record<string, unknown>[];
  };
  return { tx, query };
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
