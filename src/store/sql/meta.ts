import type { MetaStore } from "../meta.js";
import type { Awaitable } from "../work.js";
import { done, map } from "./executor.js";
import type { SqlExecutor } from "./executor.js";
import { sql } from "./template.js";

/** The `meta` store of both engines: named settings of the database. */
export class SqlMetaStore implements MetaStore {
  constructor(private readonly x: SqlExecutor) {}

  get(name: string): Awaitable<string | undefined> {
    return map(this.x.get<{ value: string }>(sql`SELECT value FROM meta WHERE name = ${name}`), (row) => row?.value);
  }

  set(name: string, value: string): Awaitable<void> {
    return done(
      this.x.run(sql`INSERT INTO meta (name, value) VALUES (${name}, ${value}) ON CONFLICT (name) DO UPDATE SET value = excluded.value`),
    );
  }
}
