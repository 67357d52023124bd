/** One versioned section of a schema file: its `-- version: N` and the SQL below it. */
export interface SchemaSection {
  version: number;
  sql: string;
}

/**
 * Splits a schema file (schema.sql, schema-pg.sql) into its "-- version: N"
 * sections, in order; text before the first marker is ignored. Both engines'
 * migrations apply the sections above the version their database records
 * (store/sqlite/migrate.ts, store/pg/migrate.ts; docs/operations.md "Running it", upgrading).
 */
export function splitSchemaSections(text: string): SchemaSection[] {
  const sections: SchemaSection[] = [];
  let current: SchemaSection | undefined;
  for (const line of text.split("\n")) {
    const m = /^-- version: (\d+)\s*$/.exec(line);
    if (m) {
      current = { version: Number(m[1]), sql: "" };
      sections.push(current);
    } else if (current) {
      current.sql += line + "\n";
    }
  }
  return sections;
}

/**
 * What both engines' migrations apply (store/sqlite/migrate.ts,
 * store/pg/migrate.ts): the sections above `current`, the version the
 * database records (SQLite's user_version, PostgreSQL's schema_migrations),
 * in order; each engine applies one with its version record in one
 * transaction (docs/operations.md "Running it", upgrading).
 * @returns the sections to apply; empty when the schema is current.
 * @throws Error when `current` is above the last section: a newer build wrote the database.
 */
export function sectionsToApply(sections: readonly SchemaSection[], current: number): SchemaSection[] {
  const latest = sections[sections.length - 1]?.version ?? 0;
  if (current > latest) {
    throw new Error(`the database has schema version ${current}, newer than this ephemeral-vault (${latest}); upgrade ephemeral-vault`);
  }
  return sections.filter((s) => s.version > current);
}
