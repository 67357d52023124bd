import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Database as Db } from "better-sqlite3";
import { sectionsToApply, splitSchemaSections } from "../schema-sections.js";
import type { SchemaSection } from "../schema-sections.js";

// The SQLite engine's migrations (the mirror of store/pg/migrate.ts): schema.sql's
// versioned sections, applied above the database's PRAGMA user_version.

/** Where schema.sql sits: the package root, beside dist/ (the bundle) and three levels above this source file. */
const SCHEMA_PATHS = [
  fileURLToPath(new URL("../schema.sql", import.meta.url)),
  fileURLToPath(new URL("../../../schema.sql", import.meta.url)),
];

/** schema.sql's text, from the bundle's place or the sources' (tests run the sources). */
function readSchema(): string {
  try {
    return readFileSync(SCHEMA_PATHS[0] as string, "utf8");
  } catch {
    return readFileSync(SCHEMA_PATHS[1] as string, "utf8");
  }
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
