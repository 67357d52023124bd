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
