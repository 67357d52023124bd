import { ValueCipher, generateRootKey } from "../../src/crypto/cipher.js";
import { createLogger } from "../../src/log/log.js";
import type { Engine } from "../../src/store/engine.js";
import { openDatabase } from "../../src/store/sqlite/db.js";
import type { Db } from "../../src/store/sqlite/db.js";
import type { DbFileWatch } from "../../src/store/sqlite/db-file-watch.js";
import { SqliteEngine } from "../../src/store/sqlite/engine.js";
import { createVault } from "../../src/assembly/vault.js";
import type { Vault, VaultOptions } from "../../src/assembly/vault.js";
import { TEST_ENGINE, pgTestWork, sqliteQuery } from "./test-engine.js";
import type { RawQuery } from "./test-engine.js";

// The engine switch and the hand-built units of work live in test-engine.ts; most tests import them from here.
export { TEST_ENGINE, buildTestWork, itSqlite } from "./test-engine.js";
export type { RawQuery, TestWork } from "./test-engine.js";

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
 * A test vault on the engine under test (TEST_ENGINE), with what every engine
 * has: `engine` is the neutral Engine, `query` reads either engine's tables.
 * It has no SQLite handle, so a test that reaches one does not compile: it
 * builds a SqliteTestVault instead (docs/testing.md, "A test for one engine").
 */
export interface TestVault<E extends Engine = Engine> extends Vault<E> {
  clock: FakeClock;
  cipher: ValueCipher;
  /** Sends a request to the in-process app. `body` objects are sent as JSON. */
  request: (method: string, path: string, options?: RequestOptions) => Promise<Response>;
  /** Same with the master key. */
  asMaster: (method: string, path: string, body?: unknown) => Promise<Response>;
  /** Raw SQL on the vault's database, on either engine (RawQuery). */
  query: RawQuery;
}

/** A test vault over the SQLite engine, with its handles (buildSqliteTestVault). */
export interface SqliteTestVault extends TestVault<SqliteEngine> {
  /** The SQLite database. */
  readonly db: Db;
  /** The SQLite engine (group commit hooks, WAL scrub): the same object as `engine`. */
  readonly sqlite: SqliteEngine;
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

/** The vault options of a test vault: a fake clock, a fresh root key, a silent logger, then `options`. */
function testOptions(options: Partial<VaultOptions>): { clock: FakeClock; common: VaultOptions } {
  const clock = fakeClock();
  const common: VaultOptions = {
    cipher: new ValueCipher(generateRootKey()),
    log: createLogger("silent"),
    masterKey: MASTER_KEY,
    now: clock.now,
    activeLimit: () => null,
    publicUrl: "http://vault.test",
    maxValueBytes: 65_536,
    trustProxy: false,
    ...options,
  };
  return { clock, common };
}

/**
 * A fresh vault on the engine under test (TEST_ENGINE: `:memory:` SQLite, or
 * a PostgreSQL schema of its own in `pg-matrix`) with a fake clock and a
 * silent logger: one per test. `options` override any VaultOptions (for
 * example `activeLimit`). Engine-neutral: no SQLite handle (TestVault).
 */
export function buildTestVault(options: Partial<VaultOptions> = {}): TestVault {
  if (TEST_ENGINE === "sqlite") return sqliteTestVault(options);
  const { clock, common } = testOptions(options);
  const { engine, query } = pgTestWork(common.cipher);
  return withRequests(createVault(engine, common), clock, common.cipher, query);
}

/**
 * A fresh vault over the SQLite engine, as buildTestVault() on SQLite, with
 * its handles `db` and `sqlite`: for `*.sqlite.test.ts` files and `itSqlite`
 * tests. `options.db`: an open SQLite database to build it over instead of
 * `:memory:`.
 * @throws Error on PostgreSQL (the `pg-matrix` project): the test reaching
 *   SQLite belongs in a `.sqlite.test.ts` file or is declared `itSqlite`.
 */
export function buildSqliteTestVault(options: Partial<VaultOptions> & { db?: Db } = {}): SqliteTestVault {
  if (TEST_ENGINE !== "sqlite") {
    throw new Error("buildSqliteTestVault() on PostgreSQL: a test that reaches SQLite goes in a .sqlite.test.ts file or is declared itSqlite");
  }
  const { db: given, ...rest } = options;
  const v = sqliteTestVault(rest, given);
  return Object.assign(v, { db: v.engine.db, sqlite: v.engine });
}

/** The test vault over SQLite (on `db`, default a fresh `:memory:`), without the handles on top. */
function sqliteTestVault(options: Partial<VaultOptions>, db: Db = openDatabase(":memory:")): TestVault<SqliteEngine> {
  const { clock, common } = testOptions(options);
  const engine = new SqliteEngine(db, { auditChainKey: common.cipher.auditChainKeys().get(common.cipher.currentKeyId) ?? null, log: common.log });
  // Raw SQL sees every read counted in the secrets' own rows, as PostgreSQL keeps them: the read
  // tally written back as a stop writes it (store/sqlite/tally/read-tally.ts), then the written-back pairs folded into
  // their rows (schema.sql version 15: a `secret_reads` row supersedes its secret's pair).
  const raw = sqliteQuery(db);
  const query: RawQuery = (sql, ...params) => {
    if (!db.inTransaction) {
      engine.work.tally.flushAll(db);
      db.exec(
        `UPDATE secrets SET read_count = r.read_count, audit_head = r.audit_head FROM secret_reads AS r WHERE r.id = secrets.id;
         DELETE FROM secret_reads;`,
      );
    }
    return raw(sql, ...params);
  };
  return withRequests(createVault(engine, common), clock, common.cipher, query);
}

/** Adds the clock, the request helpers and the raw reader to a built vault. */
function withRequests<E extends Engine>(vault: Vault<E>, clock: FakeClock, cipher: ValueCipher, query: RawQuery): TestVault<E> {
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
  return Object.assign({}, vault, {
    clock,
    cipher,
    request,
    asMaster: (method: string, path: string, body?: unknown) => request(method, path, { body }),
    query,
  });
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
 * A vault over the SQLite engine on `db` (open and migrated), as assembly/server.ts
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
