import type { Database as Db } from "better-sqlite3";
import { sectionsToApply, splitSchemaSections } from "../schema-sections.js";
import type { SchemaSection } from "../schema-sections.js";
import { readPackageFile } from "../../package-files.js";

// The SQLite engine's migrations (the mirror of store/pg/migrate.ts): schema.sql's
// versioned sections, applied above the database's PRAGMA user_version.

/** schema.sql's text: the package root's file (src/package-files.ts; in the single executable, its embedded copy). */
function readSchema(): string {
  return readPackageFile("schema.sql");
}

/** Splits schema.sql (or the given text) into its "-- version: N" sections, in order (store/schema-sections.ts). */
export function schemaSections(text: string = readSchema()): SchemaSection[] {
  return splitSchemaSections(text);
}

/** The schema version this build writes (the last section of schema.sql). */
export function latestSchemaVersion(): number {
  const sections = schemaSections();
  return sections[sections.length - 1]?.version ?? 0;
}

/**
 * Applies every schema.sql section above the database's user_version, each
 * with its version bump in one transaction.
 * @throws Error when the database's version is newer than this build (schema-sections.ts sectionsToApply).
 */
export function migrate(db: Db): void {
  const current = Number(db.pragma("user_version", { simple: true }));
  for (const section of sectionsToApply(schemaSections(), current)) {
    db.transaction(() => {
      db.exec(section.sql);
      db.pragma(`user_version = ${section.version}`);
    }).immediate();
  }
}
