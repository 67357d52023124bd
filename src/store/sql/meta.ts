import type { MetaStore } from "../meta.js";
import type { Awaitable } from "../work.js";
import { done, map } from "./executor.js";
import type { SqlExecutor } from "./executor.js";
import { sql } from "./template.js";
import type { Query } from "./template.js";

/**
 * The one statement that writes a value of the `meta` table (insert or
 * replace), for both engines: run it through an executor, or take its text
 * for one dialect with `render(metaUpsert(name, value), dialect)` and its
 * values with `paramsOf` (store/sql/template.ts).
 * @param name the setting's name (a `meta.name`).
 * @param value its new text.
 */
export function metaUpsert(name: string, value: string): Query {
  return sql`INSERT INTO meta (name, value) VALUES (${name}, ${value}) ON CONFLICT (name) DO UPDATE SET value = excluded.value`;
}

/**
 * The one statement that reads a value of the `meta` table, for both
 * engines (a row `{value}`, or none).
 * @param name the setting's name (a `meta.name`).
 */
export function metaSelect(name: string): Query {
  return sql`SELECT value FROM meta WHERE name = ${name}`;
}

/** The `meta` store of both engines: named settings of the database. */
export class SqlMetaStore implements MetaStore {
  constructor(private readonly x: SqlExecutor) {}

  get(name: string): Awaitable<string | undefined> {
    return map(this.x.get<{ value: string }>(metaSelect(name)), (row) => row?.value);
  }

  set(name: string, value: string): Awaitable<void> {
    return done(this.x.run(metaUpsert(name, value)));
  }

  replaceIf(name: string, expected: string | undefined, value: string): Awaitable<boolean> {
    const query =
      expected === undefined
        ? sql`INSERT INTO meta (name, value) VALUES (${name}, ${value}) ON CONFLICT (name) DO NOTHING`
        : sql`UPDATE meta SET value = ${value} WHERE name = ${name} AND value = ${expected}`;
    return map(this.x.run(query), (changed) => changed === 1);
  }

  remove(name: string): Awaitable<void> {
    return done(this.x.run(sql`DELETE FROM meta WHERE name = ${name}`));
  }
}
