import type Database from "better-sqlite3";
import type { VaultCounts } from "../../tool-shapes.js";

/**
 * Counts a vault database's rows: secrets by state, keys, orgs, principals,
 * audit rows, webhooks. A table the schema does not have yet counts 0.
 */
export function countRows(db: Database.Database): VaultCounts {
  const tables = new Set(
    (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name),
  );
  const count = (table: string): number =>
    tables.has(table) ? (db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n : 0;
  const secrets = { active: 0, sealed: 0, expired: 0 };
  if (tables.has("secrets")) {
    for (const row of db.prepare("SELECT state, count(*) AS n FROM secrets GROUP BY state").all() as { state: string; n: number }[]) {
      if (row.state === "active" || row.state === "sealed" || row.state === "expired") secrets[row.state] = row.n;
    }
  }
  return {
    secrets,
    scopedKeys: count("scoped_keys"),
    principalKeys: count("principal_keys"),
    orgs: count("orgs"),
    principals: count("principals"),
    auditRows: count("audit"),
    webhooks: count("webhooks"),
  };
}

/**
 * `PRAGMA integrity_check` of a database.
 * @returns "ok", or the first problems SQLite reports (at most 5 lines).
 */
export function integrityOf(db: Database.Database): string {
  const rows = db.pragma("integrity_check(5)") as { integrity_check: string }[];
  return rows.map((r) => r.integrity_check).join("; ");
}
