/*
 * The SQLite parts of `audit verify` and `audit head` (docs/audit.md): the
 * data dir's log opened read-only and looked at from one read transaction.
 * The anchor line's rules are domain/audit/anchor.ts's.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { ConfigError } from "../../../config/types.js";
import type { ChainKeys } from "../../../model/audit/chain.js";
import { verifyAuditChain } from "../audit/verify.js";
import type { AuditSnapshot, SqliteAuditLog } from "../../tool-shapes.js";

/**
 * Opens `<dir>/vault.db` read-only, without migrating or writing anything.
 * @throws ConfigError when there is no database or no audit table there.
 */
export function openAuditLog(dataDir: string): SqliteAuditLog {
  const file = join(dataDir, "vault.db");
  if (!existsSync(file)) throw new ConfigError(`no database at ${file}`);
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new ConfigError(`${file} cannot be opened: ${(err as Error).message}`);
  }
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit'").get();
  if (table === undefined) {
    db.close();
    throw new ConfigError(`${file} has no audit log (start ephemeral-vault once to migrate it)`);
  }
  return {
    snapshot<T>(keys: ChainKeys, inspect: (view: AuditSnapshot) => T): T {
      // One read transaction: the rows and the head come from one snapshot, whatever a running vault writes meanwhile.
      db.exec("BEGIN");
      try {
        const report = verifyAuditChain(db, keys);
        const hashAt = db.prepare<[number], { hash: string }>("SELECT hash FROM audit WHERE id = ?");
        return inspect({
          report,
          last: () => db.prepare<[], { id: number; hash: string }>("SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1").get(),
          hashAt: (id) => hashAt.get(id)?.hash,
        });
      } finally {
        if (db.inTransaction) db.exec("COMMIT");
      }
    },
    close: () => db.close(),
  };
}
