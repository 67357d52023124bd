import { join } from "node:path";
import type { Config } from "../config.js";
import { ConfigError } from "../config.js";
import { ValueCipher } from "../crypto/cipher.js";
import { loadKeyMaterial, prepareDataDir } from "../runtime/keyfiles.js";
import type { KeyMaterial, Notice } from "../runtime/keyfiles.js";
import { WrongKeyError } from "../model/engine-errors.js";
import { openDatabase } from "../store/sqlite/db.js";
import type { Db } from "../store/sqlite/db.js";
import { DbFileWatch } from "../store/sqlite/db-file-watch.js";
import { SqliteEngine } from "../store/sqlite/engine.js";
import { createVault } from "./vault.js";
import type { Vault, VaultOptions } from "./vault.js";
import type { Logger } from "../log/log.js";
import { lockDataDir } from "../store/tools.js";
import type { DataDirLock } from "../store/tools.js";

/*
 * Opening a vault node over its storage engine, for server.ts: the SQLite
 * data dir (locked) or VAULT_DATABASE_URL, the key material, the engine and
 * its root-key check, then createVault (docs/architecture.md, "The engine seam").
 */

/** A vault over its storage engine, and how to close that engine. */
export interface VaultNode {
  vault: Vault;
  /** Where the data lives, for the start log line (the data dir, or the redacted database URL). */
  storage: string;
  /** Commits what is pending and closes the engine (and releases the data-dir lock). */
  close: () => Promise<void>;
  /** The master key the vault authenticates (KeyMaterial.masterKey). */
  masterKey: string;
}

/**
 * The SQLite node: data dir (locked: store/sqlite/tools/lock.ts) -> key material (files
 * generated on first start) -> database (migrated, root key verified) -> vault.
 * @throws ConfigError for a bad data dir, a key file, a wrong encryption key
 *   or a database that cannot be opened.
 */
export async function openSqliteNode(
  config: Config,
  notice: Notice,
  common: (keys: KeyMaterial, cipher: ValueCipher) => VaultOptions,
  log: Logger,
): Promise<VaultNode> {
  const inMemory = config.dataDir === ":memory:";
  if (!inMemory) prepareDataDir(config.dataDir);
  // One process per data dir: taken before any key file or the database is
  // touched, held until close() or the process ends.
  const lock: DataDirLock | undefined = inMemory ? undefined : lockDataDir(config.dataDir, "a second vault");
  let db: Db;
  let keys: KeyMaterial;
  let dbFile: DbFileWatch | undefined;
  try {
    keys = loadKeyMaterial(config, notice);
    const path = join(config.dataDir, "vault.db");
    try {
      db = openDatabase(inMemory ? ":memory:" : path);
    } catch (err) {
      throw new ConfigError(`VAULT_DATA_DIR: the database cannot be opened: ${(err as Error).message}`);
    }
    if (!inMemory) dbFile = new DbFileWatch(path);
  } catch (err) {
    lock?.release();
    throw err;
  }
  const cipher = new ValueCipher(keys.rootKey, keys.previousRootKeys, { recordKeyCache: config.recordKeyCache });
  const engine = new SqliteEngine(db, { auditChainKey: cipher.auditChainKeys().get(cipher.currentKeyId) ?? null, log, file: dbFile });
  try {
    await engine.verifyRootKeys(cipher);
  } catch (err) {
    await engine.close();
    lock?.release();
    if (err instanceof WrongKeyError) throw new ConfigError(err.message);
    throw err;
  }
  const vault = createVault(engine, common(keys, cipher));
  return {
    vault,
    storage: config.dataDir,
    masterKey: keys.masterKey,
    close: async () => {
      await engine.close();
      lock?.release();
    },
  };
}

/**
 * A PostgreSQL node (VAULT_DATABASE_URL): the keys come from the settings
 * (config.ts requires them: nodes share them), the schema is migrated under
 * an advisory lock, the root keys are checked against the database's record
 * as on SQLite, and no data dir is used.
 * @throws ConfigError when the database cannot be reached or migrated, or
 *   the encryption key is not the one the database was written with.
 */
export async function openPgNode(
  config: Config,
  notice: Notice,
  common: (keys: KeyMaterial, cipher: ValueCipher) => VaultOptions,
  log?: Logger,
): Promise<VaultNode> {
  const keys = loadKeyMaterial({ ...config, dataDir: ":memory:" }, notice);
  const cipher = new ValueCipher(keys.rootKey, keys.previousRootKeys, { recordKeyCache: config.recordKeyCache });
  const url = config.databaseUrl as string;
  const { openPgEngine, verifyPgRootKeys, redactCredentials, redactUrl } = await import("../store/pg/index.js");
  let engine: Awaited<ReturnType<typeof openPgEngine>>;
  try {
    engine = await openPgEngine({
      url,
      poolSize: config.databasePoolSize,
      preparedStatements: config.databasePreparedStatements,
      groupCommit: config.databaseGroupCommit,
      retryMs: config.databaseRetryMs,
      onRetry: (err) =>
        log?.warn({ reason: redactCredentials(err instanceof Error ? err.message : String(err), url) }, "database connection failed before COMMIT: retrying on a new connection"),
      auditChainKey: cipher.auditChainKeys().get(cipher.currentKeyId) ?? null,
      auditChainKeys: [...cipher.auditChainKeys().values()],
    });
  } catch (err) {
    throw new ConfigError(`VAULT_DATABASE_URL: ${redactCredentials((err as Error).message, url)}`);
  }
  try {
    await verifyPgRootKeys(engine.tx, cipher);
  } catch (err) {
    await engine.close();
    if (err instanceof WrongKeyError) throw new ConfigError(err.message);
    throw err;
  }
  const vault = createVault(engine, common(keys, cipher));
  return { vault, storage: redactUrl(url), masterKey: keys.masterKey, close: () => engine.close() };
}
