import Database from "better-sqlite3";
import type { ValueCipher } from "../crypto/cipher.js";
import { latestSchemaVersion, schemaSections } from "../store/sqlite/migrate.js";
import { verifyAuditChain } from "../store/sqlite/audit-verify.js";
import { WrongKeyError } from "../model/engine-errors.js";
import { verifyRootKeys } from "../store/sqlite/root-keys.js";
import { countRows, integrityOf } from "./common.js";
import type { VaultCounts } from "./common.js";

/** A file that cannot be restored: the message says why; nothing was replaced. */
export class RestoreRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RestoreRefused";
  }
}

/** A schema object as sqlite_master lists it. */
interface SchemaObject {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

function objectsOf(db: Database.Database): Map<string, SchemaObject> {
  const rows = db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master").all() as SchemaObject[];
  return new Map(rows.map((r) => [`${r.type} ${r.name}`, { ...r, sql: r.sql === null ? null : normalizeSql(r.sql) }]));
}

/**
 * A CREATE statement as sqlite_master keeps it (the text as written, with
 * its comments), without comments and with runs of white space made one
 * space: a comment reworded in schema.sql since a database was made is not
 * an altered object; any other difference is.
 */
export function normalizeSql(sql: string): string {
  return sql
    .replace(/--[^\n]*/g, " ")
    .replace(/\/\*[\s\S]*?\*\//g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * Refuses a database whose schema objects (tables, indexes, triggers,
 * views) are not exactly those schema.sql creates at its version: the
 * sections up to that version are applied to an empty in-memory database
 * (as every vault database was made, section by section) and the two
 * sqlite_master listings compared, name, table and SQL text (comments
 * and white space aside: normalizeSql). An extra
 * trigger (one that re-inserts a deleted key, say), view or index, or an
 * altered or missing one, is refused (docs/operations.md, "Backups").
 * @throws RestoreRefused naming the first object that differs.
 */
export function checkSchemaObjects(db: Database.Database, version: number): void {
  const reference = new Database(":memory:");
  let expected: Map<string, SchemaObject>;
  try {
    for (const section of schemaSections()) if (section.version <= version) reference.exec(section.sql);
    expected = objectsOf(reference);
  } finally {
    reference.close();
  }
  const actual = objectsOf(db);
  for (const [id, object] of actual) {
    const want = expected.get(id);
    if (want === undefined) throw new RestoreRefused(`the file has a ${object.type} ${object.name} that the vault's schema (version ${version}) does not define`);
    if (want.sql !== object.sql || want.tbl_name !== object.tbl_name) {
      throw new RestoreRefused(`the file's ${object.type} ${object.name} differs from the vault's schema (version ${version})`);
    }
  }
  for (const [id, object] of expected) {
    if (!actual.has(id)) throw new RestoreRefused(`the file lacks the ${object.type} ${object.name} of the vault's schema (version ${version})`);
  }
}

/**
 * Checks a database copy before it replaces anything: integrity, an
 * ephemeral-vault schema no newer than this build whose objects are exactly
 * the vault's (checkSchemaObjects), that the configured root keys open it,
 * by the server's own start check (verifyRootKeys, which also records the
 * current key id in the meta row as a start would) and by opening one
 * stored value per root key id found in it; then an intact audit chain
 * (the check `audit verify` runs, docs/audit.md). The key is checked before
 * the chain, so a wrong key is named as such.
 * @throws RestoreRefused naming the first problem.
 */
export function checkCopy(db: Database.Database, cipher: ValueCipher): VaultCounts {
  const integrity = integrityOf(db);
  if (integrity !== "ok") throw new RestoreRefused(`the file failed its integrity check: ${integrity}`);
  const version = Number(db.pragma("user_version", { simple: true }));
  const latest = latestSchemaVersion();
  if (version > latest) {
    throw new RestoreRefused(`the file has schema version ${version}, newer than this ephemeral-vault (${latest}); upgrade ephemeral-vault first`);
  }
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('meta', 'secrets')").all();
  if (version < 1 || tables.length !== 2) throw new RestoreRefused("the file is not an ephemeral-vault database");
  checkSchemaObjects(db, version);
  try {
    verifyRootKeys(db, cipher);
  } catch (err) {
    if (err instanceof WrongKeyError) throw new RestoreRefused(err.message);
    throw err;
  }
  const samples = db
    .prepare(
      `SELECT scope, key, created_at, ciphertext FROM secrets WHERE id IN
         (SELECT min(id) FROM secrets WHERE ciphertext IS NOT NULL GROUP BY substr(ciphertext, 1, 9))`,
    )
    .all() as { scope: string; key: string; created_at: number; ciphertext: Buffer }[];
  for (const row of samples) {
    try {
      cipher.decryptRecord(row.ciphertext, { scope: row.scope, key: row.key, createdAt: row.created_at });
    } catch {
      throw new RestoreRefused(
        "the configured encryption key does not open the file's records; set the key it was written with (VAULT_ENCRYPTION_KEY, older ones in VAULT_PREVIOUS_ENCRYPTION_KEYS)",
      );
    }
  }
  if (db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit'").get() !== undefined) {
    const chain = verifyAuditChain(db, cipher.auditChainKeys());
    if (!chain.ok) throw new RestoreRefused(`the file's audit chain is broken at row ${chain.brokenId}: ${chain.reason}`);
  }
  return countRows(db);
}
