import type { FileMetaStore } from "../file-metas.js";
import type { Awaitable } from "../work.js";
import { done, map } from "./executor.js";
import type { SqlExecutor } from "./executor.js";
import { sql } from "./template.js";

/**
 * The `file_metas` store of both engines (docs/share.md, "The file's
 * metadata before the reveal"): one opaque string per public secret,
 * deleted with it.
 */
export class SqlFileMetaStore implements FileMetaStore {
  constructor(private readonly x: SqlExecutor) {}

  insert(key: string, fileMeta: string): Awaitable<void> {
    return done(this.x.run(sql`INSERT INTO file_metas (key, file_meta) VALUES (${key}, ${fileMeta})`));
  }

  get(key: string): Awaitable<string | undefined> {
    return map(this.x.get<{ file_meta: string }>(sql`SELECT file_meta FROM file_metas WHERE key = ${key}`), (row) => row?.file_meta);
  }

  remove(key: string): Awaitable<void> {
    return done(this.x.run(sql`DELETE FROM file_metas WHERE key = ${key}`));
  }

  pruneOrphans(): Awaitable<number> {
    return this.x.run(
      sql`DELETE FROM file_metas WHERE NOT EXISTS (
            SELECT 1 FROM secrets s WHERE s.scope = 'global' AND s.key = file_metas.key AND s.state IN ('active', 'sealed'))`,
    );
  }
}
