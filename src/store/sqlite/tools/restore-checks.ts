import Database from "better-sqlite3";
import { UNVERSIONED_VALUE } from "../../../crypto/cipher.js";
import type { ValueCipher } from "../../../crypto/cipher.js";
import { latestSchemaVersion, schemaSections } from "../migrate.js";
import { verifyAuditChain } from "../audit/verify.js";
import { WrongKeyError } from "../../../model/engine-errors.js";
import { verifyRootKeys } from "../root-keys.js";
import { getMeta } from "../db.js";
import { HEAD_META, parseHead } from "../../../model/audit/head.js";
import { RestoreRefused } from "../../tool-shapes.js";
import type { VaultCounts } from "../../tool-shapes.js";
import { countRows, integrityOf } from "./counts.js";

/** The schema.sql version that added `secrets.value_version` (the value's AAD binds it). */
const VALUE_VERSION_SCHEMA = 19;

/** A schema object as sqlite_master lists it. */
interface SchemaObject {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

function objectsOf(db: Database.Database): Map<string, SchemaObject> {
  const rows = db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master").all() as SchemaObject[];
  return new Map(rows.map((r) => [`${r.type} ${r.name}`, { type: r.type, name: r.name, tbl_name: r.tbl_name, sql: r.sql === null ? null : normalizeSql(r.sql) }]));
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
  // A copy made before schema version 19 has no value versions: each of its rows is at 0.
  const valueVersion = version >= VALUE_VERSION_SCHEMA ? "value_version" : `${UNVERSIONED_VALUE} AS value_version`;
  const samples = db
    .prepare(
      `SELECT scope, key, created_at, ${valueVersion}, ciphertext FROM secrets WHERE id IN
         (SELECT min(id) FROM secrets WHERE ciphertext IS NOT NULL GROUP BY substr(ciphertext, 1, 9))`,
    )
    .all() as { scope: string; key: string; created_at: number; value_version: number; ciphertext: Buffer }[];
  for (const row of samples) {
    try {
      cipher.decryptRecord(row.ciphertext, { scope: row.scope, key: row.key, createdAt: row.created_at, valueVersion: row.value_version });
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

/** The newest audit row a database records: its signed head (meta `audit_head`), else its last row; undefined when it has none. */
function auditHeadOf(db: Database.Database): { id: number; hash: string } | undefined {
  const hasAudit = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit'").get() !== undefined;
  if (!hasAudit) return undefined;
  const value = getMeta(db, HEAD_META);
  const head = value === undefined ? undefined : parseHead(value);
  if (head !== undefined && head.id > 0) return { id: head.id, hash: head.hash };
  return db.prepare("SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1").get() as { id: number; hash: string } | undefined;
}

/**
 * Refuses to go back in time (docs/operations.md, "Backups"): the backup
 * (`copy`, whose chain and signed head checkCopy verified) is an older state
 * of the database it replaces (`current`) when its audit head (signed head,
 * else last row) is a row of the current log, same id and hash, below the
 * current head. The audit log only grows, so that is exactly a backup taken
 * earlier of this vault; restoring it would bring back what was done since:
 * keys revoked, secrets deleted, roles changed. Unless `older` is set
 * (`restore --older`), that is refused. A backup of another history (another
 * vault's, or a branch after an earlier `--older`) is not older by this rule
 * and is not refused; nor is anything when either log is empty or the
 * current database cannot be read (the damage a restore repairs).
 * @throws RestoreRefused when the backup is older and `older` is false.
 */
export function checkNotOlder(copy: Database.Database, currentFile: string, older: boolean): void {
  if (older) return;
  const backupHead = auditHeadOf(copy);
  if (backupHead === undefined) return;
  let current: { id: number; hash: string } | undefined;
  let atBackupHead: { hash: string } | undefined;
  try {
    const db = new Database(currentFile, { readonly: true, fileMustExist: true });
    try {
      current = auditHeadOf(db);
      if (current !== undefined) atBackupHead = db.prepare("SELECT hash FROM audit WHERE id = ?").get(backupHead.id) as { hash: string } | undefined;
    } finally {
      db.close();
    }
  } catch {
    return;
  }
  if (current === undefined || current.id <= backupHead.id || atBackupHead?.hash !== backupHead.hash) return;
  throw new RestoreRefused(
    `the backup is older than the vault: its audit log ends at row ${backupHead.id}, the vault's goes on to row ${current.id}; ` +
      "restoring it would bring back keys revoked and secrets deleted since. Pass --older to restore it anyway",
  );
}
