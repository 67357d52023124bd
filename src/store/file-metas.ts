import type { Awaitable } from "../model/awaitable.js";

/**
 * The `file_metas` table (schema.sql version 24, schema-pg.sql version 14),
 * keyed by a public secret's id: the `file_meta` its create carried, the
 * file's name, type and size encrypted under the link key (docs/share.md,
 * "The file's metadata before the reveal"), opaque to the vault. Written
 * once for both engines (store/sql/file-metas.ts).
 */
export interface FileMetaStore {
  /** Stores the `file_meta` of a public secret created in this unit of work. */
  insert(key: string, fileMeta: string): Awaitable<void>;
  /** The `file_meta` of `key`, or undefined for none (read without a lock: the recipient page before the reveal). */
  get(key: string): Awaitable<string | undefined>;
  /** Deletes the `file_meta` of `key` (its secret burned, expired or was deleted). */
  remove(key: string): Awaitable<void>;
  /**
   * Deletes every `file_meta` whose public secret is no longer live (a
   * safety net under remove()).
   * @returns how many were deleted.
   */
  pruneOrphans(): Awaitable<number>;
}
