import type { Db } from "./db.js";
import type { MetaStore } from "../meta.js";

/** The SQLite `meta` store: statements prepared once. */
export class SqliteMetaStore implements MetaStore {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      get: db.prepare<[string], { value: string }>("SELECT value FROM meta WHERE name = ?"),
      set: db.prepare<[string, string]>(
        "INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
      ),
    };
  }

  get(name: string): string | undefined {
    return this.q.get.get(name)?.value;
  }

  set(name: string, value: string): void {
    this.q.set.run(name, value);
  }
}
